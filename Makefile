# memhtml — every target sets up what it needs, so each is the one command on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PYTEST_WORKERS ?= 2
# The modules mypyc compiles (pyproject.toml): a change to one must rebuild, or its stale build runs.
COMPILED := $(shell sed -n '/^\[tool.memhtml.compiled\]/,/^\]/p' pyproject.toml | grep -o 'memhtml/[a-z_/]*\.py')

.PHONY: demo test check lint typecheck importlint bench eval stress clean venv

venv: $(STAMP)

$(STAMP): pyproject.toml setup.py $(COMPILED)
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	@touch $(STAMP)

demo: $(STAMP)
	@bash scripts/demo.sh

# The tests of the modules mypyc compiles, run a second time on their Python source (tests/pure_python):
# a machine without a C compiler installs that build, and it must behave the same.
PURE_TESTS := tests/html tests/domain tests/index tests/test_pure_python_mode.py

test: $(STAMP) lint typecheck importlint
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider
	PYTHONPATH=tests/pure_python $(BIN)/python -m pytest -n $(PYTEST_WORKERS) -p no:cacheprovider $(PURE_TESTS)

check: test

# The kill -9 and many-writer proofs at full size (10k-op apply, 16 writers x 50 writes) and every
# fault class of tests/faults at its large count; make test runs them small. For the counts as a
# table: $(BIN)/python -m tests.faults.harness --memhtml $(BIN)/memhtml --scale large
stress: $(STAMP)
	MEMHTML_STRESS=1 $(BIN)/python -m pytest -p no:cacheprovider -s tests/store/test_crash_safety.py \
	  tests/store/test_concurrency_proof.py tests/faults

lint: $(STAMP)
	$(BIN)/ruff check memhtml tests scripts
	$(BIN)/ruff format --check memhtml tests scripts

typecheck: $(STAMP)
	$(BIN)/mypy

importlint: $(STAMP)
	$(BIN)/lint-imports

# Whole-process timings must not include compiling our modules on every run (an environment with
# PYTHONDONTWRITEBYTECODE would); an installed package has its bytecode compiled at install time.
bench: $(STAMP)
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python -m compileall -q memhtml >/dev/null
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python scripts/bench_write.py
	env -u PYTHONDONTWRITEBYTECODE $(BIN)/python scripts/bench_index.py $(if $(filter 1,$(BENCH_FULL)),,--quick)
	cd scripts && env -u PYTHONDONTWRITEBYTECODE ../$(BIN)/python bench_apply.py \
	  $(if $(filter 1,$(BENCH_FULL)),--size 10000 --runs 3 --one-batch 50000,--size 1000 --runs 3)
	cd scripts && env -u PYTHONDONTWRITEBYTECODE ../$(BIN)/python bench_mcp.py \
	  $(if $(filter 1,$(BENCH_FULL)),--sizes 1000 10000 --runs 30,--sizes 1000 --runs 10)
	$(if $(filter 1,$(BENCH_FULL)),cd scripts && env -u PYTHONDONTWRITEBYTECODE ../$(BIN)/python bench_scale.py --size 100000)

# Retrieval quality: LoCoMo (read from LOCOMO_DATA, never copied into the project; skipped with a message
# when it is absent) and the seeded supersession benchmark. Reports go to stdout as JSON envelopes.
LOCOMO_DATA ?= ../shared/data/locomo
EVAL_MODE ?= live
eval: $(STAMP)
	@if [ -f "$(LOCOMO_DATA)/locomo10.json" ]; then \
	  echo "eval locomo: $(LOCOMO_DATA)" >&2; \
	  $(BIN)/memhtml eval locomo --data "$(LOCOMO_DATA)" --mode $(EVAL_MODE) --json; \
	else \
	  echo "eval locomo: skipped, no $(LOCOMO_DATA)/locomo10.json (set LOCOMO_DATA to the folder holding the LoCoMo release)" >&2; \
	fi
	@echo "eval supersession" >&2
	@$(BIN)/memhtml eval supersession --mode $(EVAL_MODE) --json

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache build dist memhtml.egg-info memhtml__mypyc.*.so
	find memhtml -name '*.so' -delete
