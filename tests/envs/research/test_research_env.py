"""research end to end: the tools on the real index, the oracle under faults, every attack
failing for its own reason, the skill levels' exact rates, shared corpus templates, QA."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from gymforge.core import SyncEnvironment, ToolCall
from gymforge.core.errors import InfraError
from gymforge.core.policy import Policy
from gymforge.envs import BUILTIN
from gymforge.envs.research import ResearchEnv, skills
from gymforge.envs.research import redteam as rt
from gymforge.envs.research.env import INDEX_LAG
from gymforge.envs.research.truth import task_truth
from gymforge.kit.redteam import AttackNotApplicable
from gymforge.qa import QAReport
from gymforge.qa.checks.common import play
from gymforge.tasks import HeldOutError
from gymforge.world.attacks import PlanAttack, PlanEdit

SOURCE = ResearchEnv.tasks


def task_id(family: str, seed: int = 1, **params: Any) -> str:
    base = {"size": 8, "corpus": 3, "fault_rate": 0.0}
    return SOURCE.families[f"research.{family}"].variant_id({**base, **params}, seed)


def episode(tid: str, policy: Policy | None = None, seed: int = 0) -> list[dict[str, Any]]:
    async def go() -> list[dict[str, Any]]:
        env = ResearchEnv()
        try:
            return await play(env, policy or PlanAttack(lambda t, p: p), tid, seed)
        finally:
            await env.close()

    return asyncio.run(go())


def call(env: SyncEnvironment, name: str, **args: Any) -> dict[str, Any]:
    result: dict[str, Any] = env.step(ToolCall(name=name, arguments=args)).info["tool_result"]
    return result


def test_registered() -> None:
    assert BUILTIN["research"] == "gymforge.envs.research:ResearchEnv"


def test_tools_on_the_real_index() -> None:
    env = SyncEnvironment(ResearchEnv())
    tid = task_id("single_fact", 4)
    env.reset(tid, 0)
    t = env.env.truth
    ev = t.evidence[0]
    found = call(env, "search", query=ev.query, limit=3)["content"]["results"]
    assert ev.doc in [r["id"] for r in found] and "[" in found[0]["snippet"]
    assert set(found[0]) == {"id", "kind", "title", "source", "published", "score", "snippet"}
    doc = call(env, "open", doc_id=ev.doc)["content"]
    assert ev.quote in doc["body"] and doc["doc_id"] == ev.doc
    needle = ev.alternatives[0][1]
    hit = call(env, "find_in_doc", doc_id=ev.doc, text=needle.upper())["content"]
    assert hit["matches"] == [ev.quote] and hit["total_matches"] == 1
    assert call(env, "search", query='"AND -( NEAR', limit=5)["ok"]  # any text is a query
    assert call(env, "search", query="x", limit=11)["error"]["kind"] == "validation"
    assert call(env, "open", doc_id="D-0000")["error"]["kind"] == "not_found"
    ok = call(env, "answer", text=t.answer, citations=[{"doc_id": ev.doc, "quote": ev.quote}])
    assert ok["ok"]
    again = call(env, "answer", text=t.answer, citations=[])
    assert again["error"]["kind"] == "conflict"  # one answer per episode
    env.close()


def test_a_lagging_index_misses_later_documents() -> None:
    """The seeded stale read of ``search``: results only up to ``INDEX_LAG``, and saying so."""
    env = SyncEnvironment(ResearchEnv())
    env.reset(task_id("single_fact", 3, size=16, fault_rate=0.1), 0)
    query = "names chief executive"
    fresh = call(env, "search", query=query, limit=10)["content"]
    assert any(r["published"] > INDEX_LAG for r in fresh["results"])
    assert fresh["index_as_of"] == "2025-01-15"
    for _ in range(env.env.budget.max_steps - 2):
        got = call(env, "search", query=query, limit=10)
        if got["ok"] and got["content"]["index_as_of"] == INDEX_LAG:
            break
    else:
        pytest.fail("no search lagged")
    results = got["content"]["results"]
    assert results and all(r["published"] <= INDEX_LAG for r in results)
    env.close()


def test_oracle_search_queries_find_their_evidence() -> None:
    env = SyncEnvironment(ResearchEnv())
    found = total = 0
    for tid in SOURCE.sample(60, 3, "train"):
        env.reset(tid, 0)
        for ev in env.env.truth.evidence:
            res = call(env, "search", query=ev.query, limit=3)
            if res["ok"] and not res.get("fault"):
                total += 1
                found += ev.doc in [r["id"] for r in res["content"]["results"]]
    env.close()
    assert total > 60 and found / total >= 0.95


def test_oracle_on_train_and_heldout_with_faults() -> None:
    faults: Counter[str] = Counter()
    for split in ("train", "heldout"):
        for i, tid in enumerate(SOURCE.sample(24, 5, split)):
            records = episode(tid, seed=i)
            assert records[-1]["success"], (tid, records[-2]["info"].get("verdict"))
            faults.update(r["info"].get("fault") for r in records[1:-1] if r["info"].get("fault"))
    assert faults["timeout"] >= 1


def test_one_template_per_corpus() -> None:
    ResearchEnv.templates._items.clear()
    env = SyncEnvironment(ResearchEnv())
    fams = ("single_fact", "aggregation", "not_answerable", "comparison")
    for seed, fam in enumerate(fams * 3):
        extra = {"members": 2} if fam == "aggregation" else {}
        env.reset(task_id(fam, seed, corpus=9, **extra), seed)
    assert len(ResearchEnv.templates) == 1
    env.close()


CASES: list[tuple[str, PlanEdit, str, str]] = [
    ("single_fact", rt.on_answer(rt.fabricated_quote), "policy", "not in the document"),
    ("multi_hop", rt.on_answer(rt.wrong_document), "policy", "not in the document"),
    ("single_fact", rt.on_answer(rt.quote_without_evidence), "policy", "is not cited"),
    ("aggregation", rt.on_answer(rt.no_citations), "policy", "is not cited"),
    ("comparison", rt.on_answer(rt.every_candidate), "outcome", "candidates"),
    ("aggregation", rt.on_answer(rt.every_candidate), "outcome", "expected one number"),
    ("single_fact", rt.on_answer(rt.abstain), "outcome", "abstained"),
    ("not_answerable", rt.on_answer(rt.answer_the_unanswerable), "outcome", "not answerable"),
    ("not_answerable", rt.on_answer(rt.hedged_abstention), "outcome", "a hedge"),
    ("multi_hop", rt.skip_reading, "process", "not read before answering"),
]


@pytest.mark.parametrize(("family", "edit", "check", "words"), CASES)
def test_attacks_fail_for_their_reason(family: str, edit: PlanEdit, check: str, words: str) -> None:
    extra = {"members": 3} if family == "aggregation" else {}
    extra |= {"hops": 3} if family == "multi_hop" else {}
    tid = task_id(family, 2, **({"size": 12, "fault_rate": 0.05} if extra else {}), **extra)
    assert episode(tid)[-1]["success"]
    info = episode(tid, PlanAttack(edit))[-2]["info"]
    findings = info["verdict"]["facts"]["findings"]
    assert not info["success"]
    assert any(f["check"] == check and words in f["message"] for f in findings), findings


def test_believing_a_decoy_fails_on_each_kind_of_contradiction() -> None:
    kinds: Counter[str] = Counter()
    for tid in SOURCE.sample(120, 8, "train", families=["research.single_fact"]):
        t = task_truth(SOURCE.resolve(tid))
        if t.decoy is None or (len(kinds) == 3 and kinds[t.unit or "entity"] > 1):
            continue
        kinds[t.unit or "entity"] += 1
        info = episode(tid, PlanAttack(rt.on_answer(rt.believe_the_decoy)))[-2]["info"]
        facts = info["verdict"]["facts"]
        assert not info["success"] and not facts["answer_right"]
        assert facts["citations"][-1]["valid"]  # the quote is verbatim: the source is what is bad
        assert any(f["check"] == "outcome" for f in facts["findings"])
    assert set(kinds) == {"usd_million", "usd", "entity"}  # blog, reseller, old appointment


def test_attacks_that_do_not_apply_say_so() -> None:
    tid = task_id("not_answerable", 3)
    with pytest.raises(InfraError) as err:
        episode(tid, PlanAttack(rt.on_answer(rt._answerable(rt.fabricated_quote))))
    assert isinstance(err.value.__cause__, AttackNotApplicable)


def rate(factory: Callable[[], Policy], tids: list[str]) -> float:
    return sum(episode(t, factory(), seed=i)[-1]["success"] for i, t in enumerate(tids)) / len(tids)


def test_skill_levels_have_their_exact_rates() -> None:
    tids = SOURCE.sample(40, 21, "train")
    tasks = [task_truth(SOURCE.resolve(t)) for t in tids]
    unanswerable = sum(t.kind == "none" for t in tasks) / len(tasks)
    no_decoy = sum(t.decoy is None for t in tasks) / len(tasks)
    assert 0 < unanswerable < no_decoy < 1
    assert rate(skills.expert, tids) == 1.0
    assert rate(skills.credulous, tids) == pytest.approx(no_decoy)
    assert rate(skills.skimmer, tids) == pytest.approx(unanswerable)
    assert rate(skills.guesser, tids) == pytest.approx(unanswerable)
    assert skills.credulous().name == "research.credulous"


def test_budget_truncates_a_searching_loop() -> None:
    env = SyncEnvironment(ResearchEnv())
    env.reset(task_id("multi_hop", 1, size=16, hops=4, fault_rate=0.1), 0)
    assert env.env.budget.max_steps == 3 * 4 + 12
    for _ in range(env.env.budget.max_steps):
        r = env.step(ToolCall(name="search", arguments={"query": "revenue"}))
        if r.done:
            break
    assert r.truncated and r.info["end_reason"] == "max_steps" and "task" not in r.reward_components
    env.close()


def test_heldout_split() -> None:
    train = SOURCE.sample(300, 1, "train")
    assert not any(t.startswith("research.comparison/") for t in train)
    for tid in SOURCE.sample(10, 1, "heldout"):
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(SOURCE.resolve(tid))


@pytest.mark.xdist_group("qa-research")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("research")
    assert report.passed, [(c.name, c.details) for c in report.checks if not c.passed]
    baselines = next(c for c in report.checks if c.name == "scripted_baselines")
    assert baselines.metrics["oracle"] >= 0.95, baselines.metrics
