# vkml: every target sets itself up; `make demo` and `make test` are all a new machine needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: setup demo demo-cnn test test-py test-lit layering lint format bench test-exhaustive mutation stress array-api vulkan-drivers clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,examples]'
	touch $(STAMP)

demo: setup
	$(PY) -m vkml.examples.digits

# the convolutional network on the same digits (issue 31): conv, batch norm, pooling
demo-cnn: setup
	$(PY) -m vkml.examples.cnn

layering: setup
	$(PY) scripts/check_layering.py

# ruff (lint and format), mypy, module and function sizes, and the files generated from the
# op definitions
lint: setup
	$(VENV)/bin/ruff check vkml tests scripts benchmarks
	$(VENV)/bin/ruff format --check vkml tests scripts benchmarks
	$(VENV)/bin/mypy vkml scripts
	$(PY) scripts/check_size.py
	$(PY) scripts/generate_ops.py

# rewrite what lint checks: formatting, fixable lint, generated files, the layering diagram
format: setup
	$(VENV)/bin/ruff format vkml tests scripts benchmarks
	$(VENV)/bin/ruff check --fix vkml tests scripts benchmarks
	$(PY) scripts/generate_ops.py --write
	$(PY) scripts/check_layering.py --write

# Mesa's lavapipe (Vulkan on the CPU) for the Vulkan tests: installed when absent and we may
# (root with apt-get); otherwise those tests skip and say how to enable them.
vulkan-drivers:
	@if ls /usr/share/vulkan/icd.d/lvp_icd*.json >/dev/null 2>&1 && ldconfig -p | grep -q libvulkan.so.1; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "installing libvulkan1 and mesa-vulkan-drivers (lavapipe) for the Vulkan tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libvulkan1 mesa-vulkan-drivers >/dev/null; \
	else echo "no lavapipe and no root: the Vulkan tests will skip"; fi

# pytest-xdist workers: IREE's compiles keep ~1.5 cores busy, two workers fill a 2-core machine
TEST_WORKERS ?= 2

test-py: setup vulkan-drivers
	$(PY) -m pytest tests/py -n $(TEST_WORKERS)

test-lit: setup
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(VENV)/bin/lit -sv tests/lit

# the long reliability campaigns of issue 14 (fuzzing, long runs, concurrency, SIGKILLs):
# about five hours on 2 cores (the fuzzing ~4 h, resumable: STRESS_ARGS="--only fuzz
# --fuzz-minutes 60"); writes benchmarks/results/stress.md. STRESS_ARGS=--quick checks them.
stress: setup vulkan-drivers
	$(PY) scripts/stress/run.py $(STRESS_ARGS)

# the Array API standard's own test suite against vkml.array_api on cpu (issue 13): clones
# data-apis/array-api-tests at the pinned commit into .cache/ (or ARRAY_API_TESTS_DIR=a
# checkout); writes benchmarks/results/array-api.md. ARRAY_API_ARGS="--max-examples 5".
array-api: setup
	$(PY) -m pip install --quiet -e '.[array-api]'
	$(PY) scripts/array_api/suite.py $(ARRAY_API_ARGS)

test-exhaustive: setup
	$(PY) -m pytest tests/py -m exhaustive -s

test: layering lint test-py test-lit

bench: setup
	$(PY) -m pip install --quiet -e '.[test,bench]'
	$(PY) benchmarks/run.py

mutation: setup
	$(PY) scripts/mutation_campaign.py

clean:
	rm -rf $(VENV) build *.egg-info
