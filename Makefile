# Set-up targets that work on a fresh clone (no .venv yet).
#   make demo  - create .venv, install the package (editable) with the examples extras, run
#                examples/digits_classifier.py (an MLP on scikit-learn's digits)
#   make test  - create .venv, install the package with its test extras, run the whole suite (two shards)
#   make durations - re-measure the seconds per test file (tests/durations.json) that balance the two shards
# Installs are skipped while pyproject.toml is unchanged (stamp files inside .venv).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip -qq --disable-pip-version-check
STAMP_BASE := $(VENV)/.stamp-install
STAMP_TEST := $(VENV)/.stamp-install-test

.PHONY: demo test durations install install-test clean-venv

demo: $(STAMP_BASE)
	$(PY) examples/digits_classifier.py

# The suite runs as two pytest processes over two halves of the test files of about equal running time
# (tests/shard.py packs them by tests/durations.json): on this 2-core machine that takes about half the time of
# one process. Each shard's output is printed when both have ended; either failing fails the target.
# `pytest tests` runs it in one process; `make durations` re-measures the per-file times.
# The package's bytecode is written first (PRECOMPILE): where PYTHONDONTWRITEBYTECODE is set, as on these machines,
# every Python process the suite starts (spawned workers, mp.spawn ranks, the examples, the cache tests' runs)
# would otherwise compile the package's ~240 modules again: about 1.5 s of CPU each. Imports read .pyc files
# whatever that variable says; a source edited later is compiled again in memory, as without them.
PRECOMPILE := $(PY) -m compileall -q functorch_lite > /dev/null
test: $(STAMP_TEST)
	@$(PRECOMPILE); a=$$($(PY) tests/shard.py 0 2); b=$$($(PY) tests/shard.py 1 2); \
	$(PY) -m pytest -q -p no:cacheprovider $$a > .test-shard-a.log 2>&1 & pa=$$!; \
	$(PY) -m pytest -q -p no:cacheprovider $$b > .test-shard-b.log 2>&1 & pb=$$!; \
	wait $$pa; ra=$$?; wait $$pb; rb=$$?; \
	echo "---- shard a (rc=$$ra)"; cat .test-shard-a.log; echo "---- shard b (rc=$$rb)"; cat .test-shard-b.log; \
	rm -f .test-shard-a.log .test-shard-b.log; \
	test $$ra -eq 0 && test $$rb -eq 0

durations: $(STAMP_TEST)
	@$(PRECOMPILE); a=$$($(PY) tests/shard.py 0 2); b=$$($(PY) tests/shard.py 1 2); \
	FUNCTORCH_LITE_TEST_DURATIONS=.durations-a.json $(PY) -m pytest -q -p no:cacheprovider $$a > /dev/null & pa=$$!; \
	FUNCTORCH_LITE_TEST_DURATIONS=.durations-b.json $(PY) -m pytest -q -p no:cacheprovider $$b > /dev/null & pb=$$!; \
	wait $$pa; wait $$pb; \
	$(PY) -c "import json; d = {**json.load(open('.durations-a.json')), **json.load(open('.durations-b.json'))}; \
	json.dump(dict(sorted(d.items())), open('tests/durations.json', 'w'), indent=1)"; \
	rm -f .durations-a.json .durations-b.json

install: $(STAMP_BASE)

install-test: $(STAMP_TEST)

$(PY):
	$(PYTHON) -m venv $(VENV)

# The test install includes the base install, so it also satisfies the demo stamp.
$(STAMP_BASE): pyproject.toml | $(PY)
	@if [ -f $(STAMP_TEST) ] && [ ! $(STAMP_TEST) -ot pyproject.toml ]; then \
		touch $@; \
	else \
		$(PIP) install -e '.[examples]' && touch $@; \
	fi

$(STAMP_TEST): pyproject.toml | $(PY)
	$(PIP) install -e '.[test,examples]'
	touch $@ $(STAMP_BASE)

clean-venv:
	rm -rf $(VENV)
