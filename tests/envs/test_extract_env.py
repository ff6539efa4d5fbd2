"""The extract environment end to end: records, partial credit, held-out types, red team, QA."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable

import pytest

from gymforge.core import Reply, SyncEnvironment
from gymforge.envs import BUILTIN
from gymforge.envs.extract import FAMILIES, HELD_OUT_FAMILY, ExtractEnv
from gymforge.envs.extract.base import fenced_json
from gymforge.envs.extract.redteam import CASES
from gymforge.qa import QAReport
from gymforge.qa.checks.verifier_redteam import AttackOutcome, run_attack
from gymforge.tasks import HeldOutError
from gymforge.verify.json_schema import JsonSchemaVerifier

SOURCE = ExtractEnv.tasks


@pytest.fixture
def env() -> SyncEnvironment:
    sync = SyncEnvironment(ExtractEnv())
    yield sync
    sync.close()


def test_registered_as_builtin() -> None:
    assert BUILTIN["extract"] == "gymforge.envs.extract:ExtractEnv"


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_records_are_schema_valid_and_the_document_shows_them(family) -> None:
    validator = JsonSchemaVerifier(family.schema)
    for level in sorted(family.levels):
        for seed in range(15):
            task = family.task(level, seed)
            record = task.truth["record"]
            assert validator.judge_value(record).passed
            assert SOURCE.resolve(task.task_id).truth == task.truth
            doc = task.prompt.split("Document:", 1)[1]
            for key in ("invoice_number", "ticket_id", "tracking_number", "vendor", "product"):
                if key in record:
                    assert record[key] in doc
            assert fenced_json(record) not in task.prompt


def oracle(env: SyncEnvironment) -> dict:
    assert env.env.task is not None
    return env.env.task.truth["record"]


def test_oracle_scores_one_and_partial_credit_is_per_field(env: SyncEnvironment) -> None:
    task_id = FAMILIES[0].task_id(3, 2)  # an invoice with several line items
    env.reset(task_id, 0)
    record = oracle(env)
    result = env.step(Reply(text="Here you go:\n" + fenced_json(record)))
    assert result.info["success"] and result.reward_components["task"] == 1.0
    env.reset(task_id, 0)
    wrong = {**record, "customer": "Somebody Else", "total": record["total"] + 1}
    result = env.step(Reply(text=fenced_json(wrong)))
    verdict = result.info["verdict"]
    assert not result.info["success"]
    total_weight = 7 + 3.0  # seven header checks of weight 1, line items weighing 3
    assert result.reward_components["task"] == pytest.approx((total_weight - 2) / total_weight)
    assert verdict["facts"]["fields_total"] - verdict["facts"]["fields_correct"] == 2
    assert {m["path"] for m in verdict["facts"]["mismatches"]} == {"/customer", "/total"}
    env.reset(task_id, 0)
    broken = {**record, "total": str(record["total"])}
    result = env.step(Reply(text=fenced_json(broken)))
    assert result.reward_components["task"] == 0.0  # a schema violation scores nothing
    assert result.info["verdict"]["facts"]["violations"][0]["path"] == "/total"


def test_heldout_document_type_and_region_are_refused() -> None:
    held = [SOURCE.resolve(t) for t in SOURCE.sample(60, 9, "heldout")]
    assert HELD_OUT_FAMILY in {t.family for t in held}
    assert any(t.family == "extract.invoice" and t.params["locale"] == "de" for t in held)
    for task in held:
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(task)
    train = [SOURCE.resolve(t) for t in SOURCE.sample(400, 9, "train")]
    assert {t.family for t in train} == {"extract.invoice", "extract.ticket"}
    assert not any(t.params.get("locale") == "de" for t in train)


EXPECTED = {
    "extract_distractor_swap": {"wrong_fields"},
    "extract_alternatives_key": {"schema_violation"},
    "extract_duplicate_key": {"duplicate_key"},
    "extract_two_blocks": {"hedge"},
    "extract_numbers_as_strings": {"schema_violation"},
    "extract_echo_document": {"parse_error"},
    "extract_record_in_reasoning": {"no_answer"},
    "extract_superset_list": {"wrong_fields"},
    "extract_deep_nesting": {"too_deep"},
    "extract_huge_answer": {"max_tokens"},  # truncated by the budget, never judged
}


def _attack(case, n: int) -> AttackOutcome:
    pairs = [(task_id, i) for i, task_id in enumerate(SOURCE.sample(n, 33, "all"))]
    return asyncio.run(run_attack(ExtractEnv, case.make_policy, pairs))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_redteam_case_is_rejected_for_its_reason(case) -> None:
    outcome = _attack(case, 24)
    ran, breaches, reasons = outcome.ran, outcome.breaches, outcome.reasons
    assert ran >= 4, f"{case.name} applied to only {ran} tasks"
    assert breaches == []
    assert reasons <= EXPECTED[case.name], reasons


def test_every_redteam_case_has_an_expected_reason() -> None:
    assert set(EXPECTED) == {c.name for c in CASES}


def test_hostile_replies_have_defined_outcomes(env: SyncEnvironment) -> None:
    task_id = FAMILIES[1].task_id(2, 1)
    for text in ("", "null", "[]", json.dumps({"ticket_id": None}), "```json\n{\n```"):
        env.reset(task_id, 0)
        result = env.step(Reply(text=text))
        assert result.terminated and not result.info["success"]
        assert result.reward_components["task"] == 0.0


@pytest.mark.xdist_group("qa-extract")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("extract")
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed
    assert len(report.checks) == 10
