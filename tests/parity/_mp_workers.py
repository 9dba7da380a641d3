"""Process entry points for test_multiprocessing (a module of its own: each spawned child imports only this and
the library it is told to use)."""
import importlib
import os
import sys


def write_values(i, lib_name, out_dir, t):
    """Rank ``i`` writes ``t * (i + 1)`` (a tensor that came from the parent) to ``out_dir/<i>.txt``."""
    lib = importlib.import_module(lib_name)
    r = t * (i + 1) + lib.ones(2)
    with open(os.path.join(out_dir, f"{i}.txt"), "w") as fh:
        fh.write(repr(r.tolist()))


def raise_on(i, bad):
    if i == bad:
        raise ValueError(f"rank {i} refuses")


def exit_with(i, code):
    sys.exit(code)


def send_back(i, lib_name, queue):
    lib = importlib.import_module(lib_name)
    queue.put((i, lib.arange(3.0) * (i + 1)))
