# The two commands of the README: `make demo` and `make test`. Both set everything up first.
.PHONY: setup demo test test-slow lint typecheck bench golden clean

VENV := .venv/bin

setup:
	@scripts/setup.sh

demo: setup
	$(VENV)/gymforge demo

test: setup lint typecheck
	$(VENV)/python -m pytest

test-slow: setup
	$(VENV)/python -m pytest -m slow

lint: setup
	$(VENV)/ruff check gymforge tests benchmarks examples
	$(VENV)/ruff format --check gymforge tests benchmarks examples

typecheck: setup
	$(VENV)/mypy

bench: setup
	$(VENV)/python benchmarks/runner_overhead.py

# Re-record every built-in environment's golden renderings (after an intended renderer change).
golden: setup
	for env in $$($(VENV)/python -c "from gymforge.envs import BUILTIN; print(*sorted(BUILTIN))"); do \
	  $(VENV)/gymforge qa $$env --record-golden || exit 1; \
	done

clean:
	rm -rf .venv runs .pytest_cache .mypy_cache .ruff_cache
