"""A user module whose attributes a compiled function reads (test_compile_reach_more.py)."""
SCALE = 2.0
OFFSET = None
