# The two commands of the README: `make demo` and `make test`. Both set everything up first.
.PHONY: setup lock demo test test-slow test-perf lint typecheck bench clean

VENV := .venv/bin

setup:
	@scripts/setup.sh

# Refresh requirements.lock after changing pyproject.toml's dependencies (setup refuses a
# stale lock); commit the result.
lock:
	@scripts/lock.sh

demo: setup
	$(VENV)/gymforge demo

test: setup lint typecheck
	$(VENV)/python -m pytest

test-slow: setup
	$(VENV)/python -m pytest -m slow

# Wall-clock budgets (ReDoS and bomb guards, reset speed): meaningful on an idle machine only,
# so they stay out of `make test`.
test-perf: setup
	$(VENV)/python -m pytest -m perf

lint: setup
	$(VENV)/ruff check gymforge tests benchmarks examples
	$(VENV)/ruff format --check gymforge tests benchmarks examples

typecheck: setup
	$(VENV)/mypy

bench: setup
	$(VENV)/python benchmarks/runner_overhead.py

clean:
	rm -rf .venv runs .pytest_cache .mypy_cache .ruff_cache
