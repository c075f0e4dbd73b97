# vkml: every target sets itself up; `make demo` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-py test-lit layering bench test-exhaustive mutation clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: setup
	$(PY) -m vkml.examples.demo

layering: setup
	$(PY) scripts/check_layering.py

test-py: setup
	$(PY) -m pytest tests/py

test-lit: setup
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/lit -sv tests/lit

test-exhaustive: setup
	$(PY) -m pytest tests/py -m exhaustive -s

test: layering test-py test-lit

bench: setup
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) benchmarks/run.py

mutation: setup
	$(PY) scripts/mutation_campaign.py

clean:
	rm -rf $(VENV) build *.egg-info
