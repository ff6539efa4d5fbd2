"""QA against served environments: the ten checks pass remotely with the same findings as
locally, and a broken environment is still flagged when it sits behind the server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from serve_helpers import REPO, TOKEN, ServeProcess

from gymforge.core.env import SupportsOracle
from gymforge.qa import CHECK_NAMES, QAOptions, QAReport, QATarget, run_check, run_qa
from gymforge.serve.client import remote_factory
from gymforge.serve.launch import ServerThread
from tests.budget import QUICK_QA

BROKEN = REPO / "tests" / "qa" / "broken_envs.py"
FAST = QAOptions(episodes=12, fuzz_examples=20)
TIMING = {"throughput"}  # wall-clock figures; every other check's metrics are deterministic
# What only the environment's own side can do: rebuild it in a fresh process, read the golden
# renderings beside its code. A served environment's report says so instead.
OWN_SIDE = {"fresh_process_steps", "references", "golden", "compared"}
Start = Callable[..., ServerThread]


@pytest.fixture(scope="module")
def served_ledger() -> Iterator[ServeProcess]:
    """``gymforge serve ledger --token T`` in its own process, as a user would run it."""
    server = ServeProcess("ledger", "--token", TOKEN, "--qa-hooks")
    try:
        yield server
    finally:
        server.stop()


def same_findings(remote: Any, local: Any) -> None:
    for got, want in zip(remote.checks, local.checks, strict=True):
        assert got.name == want.name
        assert got.passed == want.passed, (got.name, got.details)
        if got.name not in TIMING:
            mine = {k: v for k, v in got.metrics.items() if k not in OWN_SIDE}
            assert mine == {k: v for k, v in want.metrics.items() if k not in OWN_SIDE}, got.name
            assert got.details.split("; ")[0] == want.details.split("; ")[0], got.name


@pytest.mark.xdist_group("qa-ledger")
def test_served_ledger_passes_all_ten_checks_exactly_as_locally(
    served_ledger: ServeProcess,
    monkeypatch: pytest.MonkeyPatch,
    builtin_qa_report: Callable[[str], QAReport],
) -> None:
    monkeypatch.setenv("GYMFORGE_TOKEN", TOKEN)
    target = QATarget.load(served_ledger.url)
    assert target.tasks is not None and target.has_oracle and target.budget is not None
    remote = run_qa(target, QUICK_QA)  # the options of the local report it is compared to
    failed = [f"{c.name}: {c.details}" for c in remote.checks if not c.passed]
    assert not failed, "\n".join(failed)
    assert [c.name for c in remote.checks] == list(CHECK_NAMES)
    assert all(c.applicable for c in remote.checks)
    same_findings(remote, builtin_qa_report("ledger"))


def test_a_broken_env_is_still_flagged_remotely(start: Start) -> None:
    server = start(f"{BROKEN}:HackableVerifierEnv", qa_hooks=True)
    remote = run_check("verifier_redteam", QATarget.load(server.url), FAST)
    local = run_check("verifier_redteam", QATarget.load(f"{BROKEN}:HackableVerifierEnv"), FAST)
    assert not remote.passed and "judged a success" in remote.details
    assert remote.metrics == local.metrics and remote.details == local.details
    assert "state.claim_0" in remote.metrics["breached"]


def test_a_crashing_env_fails_error_paths_remotely(start: Start) -> None:
    server = start(f"{BROKEN}:CrashOnBadInputEnv", qa_hooks=True)
    result = run_check("error_paths", QATarget.load(server.url), FAST)
    assert not result.passed and "raised" in result.details


def test_env_specific_redteam_cases_run_on_the_server(start: Start) -> None:
    """support-desk declares its own red-team cases (Python policies reading the task);
    the server runs them against each session's environment, with the same outcome."""
    server = start("support-desk", qa_hooks=True)
    target = QATarget.load(server.url)
    assert [c.name for c in target.profile.redteam]
    remote = run_check("verifier_redteam", target, FAST)
    local = run_check("verifier_redteam", QATarget.load("support-desk"), FAST)
    assert remote.passed, remote.details
    assert remote.metrics == local.metrics
    assert remote.metrics["not_applicable"], "AttackNotApplicable must cross the wire"


def test_without_fault_injection_error_paths_fails_loudly(start: Start) -> None:
    server = start(fault_injection=False, qa_hooks=True)
    result = run_check("error_paths", QATarget.load(server.url), FAST)
    assert not result.passed
    assert "fault injection is disabled" in result.details


def test_fault_injection_reaches_the_server(start: Start) -> None:
    server = start(qa_hooks=True)
    result = run_check("error_paths", QATarget.load(server.url), FAST)
    assert result.passed, result.details
    assert server.hub.metrics.faults_injected > 0


def test_without_qa_hooks_nothing_privileged_is_served(start: Start) -> None:
    server = start(qa_hooks=False)
    factory = remote_factory(server.url)
    env = factory()
    meta = factory.metadata()
    assert not isinstance(env, SupportsOracle)
    assert meta["has_oracle"] is False and meta["server"]["qa_hooks"] is False
    result = run_check("scripted_baselines", QATarget.load(server.url), FAST)
    assert not result.passed and "no oracle" in result.details
