# Set-up targets that work on a fresh clone (no .venv yet).
#   make demo  - create .venv, install the package (editable) with the examples extras, run
#                examples/digits_classifier.py (an MLP on scikit-learn's digits)
#   make test  - create .venv, install the package with its test extras, run the whole suite
# Installs are skipped while pyproject.toml is unchanged (stamp files inside .venv).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip -qq --disable-pip-version-check
STAMP_BASE := $(VENV)/.stamp-install
STAMP_TEST := $(VENV)/.stamp-install-test

.PHONY: demo test install install-test clean-venv

demo: $(STAMP_BASE)
	$(PY) examples/digits_classifier.py

test: $(STAMP_TEST)
	$(PY) -m pytest -q tests

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
