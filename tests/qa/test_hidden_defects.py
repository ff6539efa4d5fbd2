"""The defect classes the first QA suite let through: each planted in ``LedgerEnv`` is now
caught by its check, with a message naming the defect; the reference passes the same
checks; and the machinery behind them (the fresh process, the golden file, the declared
side effects) does what it says."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import pytest
from hidden_defects import (
    CAUGHT_BY,
    EVIDENCE,
    ClassCacheEnv,
    DatedPromptEnv,
    HashSeededEnv,
    RestyledPromptEnv,
)

from gymforge.core.types import ToolCall
from gymforge.envs.ledger import LedgerEnv
from gymforge.envs.support_desk import SupportDeskEnv
from gymforge.qa import QAOptions, QATarget, run_check
from gymforge.qa import golden as golden_mod
from gymforge.qa.checks import reset_isolation
from gymforge.qa.fresh import CLOCK_SHIFT_S, FreshProcess, FreshProcessError, child_hash_seed
from gymforge.qa.target import import_ref

OPTS = QAOptions(episodes=12, fuzz_examples=20)


def test_every_class_has_evidence_and_a_real_check() -> None:
    assert set(EVIDENCE) == set(CAUGHT_BY)
    assert set(CAUGHT_BY.values()) == {
        "replay_determinism",
        "reset_isolation",
        "error_paths",
        "trajectory_schema",
        "verifier_redteam",
    }


@pytest.mark.parametrize("env_cls", list(CAUGHT_BY), ids=lambda c: c.__name__)
def test_planted_defect_is_caught_with_its_evidence(env_cls: type) -> None:
    target = QATarget.from_factory(env_cls)
    try:
        result = run_check(CAUGHT_BY[env_cls], target, OPTS)
    finally:
        target.close_fresh_process()
    assert result.passed is False, f"{env_cls.__name__}: {result.details}"
    for fragment in EVIDENCE[env_cls]:
        assert fragment in result.details, f"{fragment!r} not in: {result.details}"


def test_class_cache_sample_shares_a_searched_name() -> None:
    """What ``ClassCacheEnv``'s catch rests on: two tasks of the check's sample search one
    name, so the second is answered from the first's cache."""
    target = QATarget.from_factory(ClassCacheEnv)
    searched: dict[str, set[str]] = {}
    for task_id, _ in reset_isolation._pairs(target, OPTS):
        assert task_id.startswith("ledger.transfer/v1/")
        for action in ClassCacheEnv().oracle_plan(ClassCacheEnv.tasks.resolve(task_id)):
            if isinstance(action, ToolCall) and action.name == "search_customers":
                searched.setdefault(action.arguments["name"], set()).add(task_id)
    assert any(len(ids) > 1 for ids in searched.values()), searched


@pytest.mark.parametrize("name", sorted(set(CAUGHT_BY.values())))
def test_reference_passes_the_same_checks(name: str) -> None:
    target = QATarget.from_factory(LedgerEnv)
    try:
        result = run_check(name, target, OPTS)
    finally:
        target.close_fresh_process()
    assert result.passed, f"{name}: {result.details}"


def test_the_hidden_defects_are_invisible_in_one_process() -> None:
    """The in-process parts alone pass them: the fresh process is what catches them."""
    for env_cls in (HashSeededEnv, DatedPromptEnv):
        target = QATarget.from_factory(env_cls)
        target.import_ref = None  # no other process can build it
        result = run_check("replay_determinism", target, OPTS)
        assert result.passed, result.details
        assert "not replayed in a fresh process" in result.details
    target = QATarget.from_factory(ClassCacheEnv)
    target.import_ref = None
    result = run_check("reset_isolation", target, OPTS)
    assert "references built in this process" in result.details


def test_fresh_process_really_differs() -> None:
    proc = FreshProcess("ledger")
    try:
        ready = proc.ready()
        assert ready["pid"] != os.getpid()
        assert ready["hash_probe"] != hash("gymforge-qa-hash-probe")
        assert proc.hash_seed == child_hash_seed() != os.environ.get("PYTHONHASHSEED")
        assert proc.clock_shift == CLOCK_SHIFT_S, "faketime must be installed (scripts/setup.sh)"
        assert ready["time"] - proc._started > CLOCK_SHIFT_S * 0.99
        answers = proc.request(
            "play", [{"policy": "oracle", "pairs": [["ledger.transfer/v1/d1/s7", 3]]}]
        )
        assert answers[0]["episodes"][0][-1]["success"] is True
    finally:
        proc.close()


def test_fresh_process_items_are_bounded() -> None:
    """A request that hangs gets the child killed after its budget, and is reported."""
    proc = FreshProcess("tests.qa.slow_env:SlowResetEnv", shift_clock=False)
    try:
        with pytest.raises(FreshProcessError, match="did not answer in time"):
            proc.request("play", [{"policy": "oracle", "pairs": [["x", 0]]}], timeout=1.0)
    finally:
        proc.close()


def test_import_ref_names_module_level_factories_only() -> None:
    assert import_ref(LedgerEnv) == "gymforge.envs.ledger.env:LedgerEnv"
    assert import_ref(lambda: LedgerEnv()) is None


def _undeclared_support_desk() -> SupportDeskEnv:
    """Support desk with its world writes' declared timeout-after-commit taken away."""
    env = SupportDeskEnv()
    env.toolset.tools = {
        name: dataclasses.replace(t, error_effects=frozenset())
        for name, t in env.toolset.tools.items()
    }
    return env


def test_declared_side_effects_pass_and_undeclared_ones_fail() -> None:
    declared = run_check("error_paths", QATarget.from_factory(SupportDeskEnv), OPTS)
    assert declared.passed, declared.details
    # the timeouts after commit were replayed with faults off and matched the success
    assert declared.metrics["verified_effects"] > 0, declared.metrics
    result = run_check("error_paths", QATarget.from_factory(_undeclared_support_desk), OPTS)
    assert result.passed is False
    assert "'timeout' error but left the state changed" in result.details
    assert "error_effects=('timeout',)" in result.details


def test_golden_is_inherited_and_its_absence_warns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = QATarget.from_factory(RestyledPromptEnv)
    shipped = Path(golden_mod.__file__).parents[1] / "envs/ledger/ledger.golden.json"
    assert golden_mod.find_golden(target) == shipped  # from the base class, same spec
    monkeypatch.setattr(golden_mod, "_class_dir", lambda cls: tmp_path)  # no golden anywhere
    note, metrics = golden_mod.check(target)
    assert metrics == {"golden": None}
    assert "warning: no golden renderings for renderer_version '1'" in note
    assert "`gymforge qa hidden_defects:RestyledPromptEnv --record-golden`" in note


def test_record_golden_round_trip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Recording writes the current renderer_version beside the class and keeps the others;
    the check then compares against it."""
    target = QATarget.from_factory(LedgerEnv)
    monkeypatch.setattr(golden_mod, "_class_dir", lambda cls: tmp_path)
    (tmp_path / "ledger.golden.json").write_text(
        json.dumps({"format": 1, "env_id": "ledger", "renderings": {"0": {"old": True}}})
    )
    path = golden_mod.record(target)
    data = json.loads(path.read_text())
    assert path.parent == tmp_path
    assert set(data["renderings"]) == {"0", "1"}
    assert len(data["renderings"]["1"]["tasks"]) == golden_mod.GOLDEN_TASKS
    note, metrics = golden_mod.check(target)
    assert metrics["compared"] == golden_mod.GOLDEN_TASKS, note
    shipped = Path(golden_mod.__file__).parents[1] / "envs/ledger/ledger.golden.json"
    assert json.loads(shipped.read_text())["renderings"]["1"] == data["renderings"]["1"]


def test_every_check_says_what_it_cannot_catch() -> None:
    from gymforge.qa.checks import MODULES

    for module in MODULES:
        assert "What it cannot catch" in (module.__doc__ or ""), module.__name__


def test_fresh_process_ignores_what_the_environment_prints() -> None:
    proc = FreshProcess("tests.qa.slow_env:ChattyEnv", shift_clock=False)
    try:
        (answer,) = proc.request(
            "play", [{"policy": "oracle", "pairs": [["ledger.transfer/v1/d1/s7", 3]]}]
        )
        assert answer["episodes"][0][-1]["success"] is True
    finally:
        proc.close()


@pytest.mark.parametrize(("mine", "child"), [(None, "1"), ("0", "1"), ("1", "2"), ("7", "1")])
def test_child_hash_seed_differs_from_ours(
    mine: str | None, child: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if mine is None:
        monkeypatch.delenv("PYTHONHASHSEED", raising=False)
    else:
        monkeypatch.setenv("PYTHONHASHSEED", mine)
    assert child_hash_seed() == child


def test_fresh_process_answers_queued_requests_in_any_wait_order() -> None:
    """Two requests in flight: both answers may arrive in one read; neither is lost."""
    proc = FreshProcess("ledger", shift_clock=False)
    try:
        item = {"policy": "oracle", "pairs": [["ledger.transfer/v1/d1/s7", 3]]}
        first = proc.submit("play", [item])
        second = proc.submit("play", [{**item, "pairs": [["ledger.transfer/v1/d1/s8", 4]]}])
        assert proc.submit("play", [item]) == first  # the same request is not sent twice
        assert proc.wait(second)[0]["episodes"][0][0]["task_id"].endswith("s8")
        assert proc.wait(first)[0]["episodes"][0][0]["task_id"].endswith("s7")
    finally:
        proc.close()
