"""crm end to end: oracle on every family, the requester's clarifications (rewarded when
the request was ambiguous, penalised and failing when it was clear), seeded faults, the
scripted skill levels, tools and renderer, the held-out split, and the ten QA checks."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from crm_helpers import SOURCE, rules_broken, run, task_id

from gymforge.core import Reply, SyncEnvironment, ToolCall
from gymforge.core.policy import PolicyTurn
from gymforge.envs import BUILTIN
from gymforge.envs.crm import CrmEnv
from gymforge.envs.crm import redteam as rt
from gymforge.envs.crm.agents import LEVELS
from gymforge.qa import QAReport
from gymforge.qa.episodes import play
from gymforge.rollout.resolve import resolve_policy
from gymforge.tasks import TRAINING_PATHS, HeldOutError
from gymforge.world.attacks import PlanAttack


def test_registered() -> None:
    assert BUILTIN["crm"] == "gymforge.envs.crm:CrmEnv"


@pytest.mark.parametrize("split", ["train", "heldout"])
def test_oracle_solves_every_family_and_level(split: str) -> None:
    ids = SOURCE.sample(42 if split == "train" else 12, 3, split)
    assert len({t.split("/")[0] for t in ids}) == (6 if split == "train" else 1)
    assert len({t.split("/")[2] for t in ids}) == 3
    for i, tid in enumerate(ids):
        _, info = run(tid, seed=i)
        assert info["success"], (tid, info["verdict"]["facts"])


def step_ask(tid: str, question: str) -> tuple[SyncEnvironment, Any]:
    env = SyncEnvironment(CrmEnv())
    env.reset(tid, 0)
    r = env.step(ToolCall(name="ask_requester", arguments={"question": question}))
    return env, r


def test_an_ambiguous_request_is_settled_only_by_asking_and_asking_is_rewarded() -> None:
    tid = task_id("update_contact", 4, ambiguous=1)
    task = SOURCE.resolve(tid)
    meant = task.truth["clarify"][0]["value"]
    first = meant.split()[0]
    # the request names only the first name, which two contacts of the account share
    assert meant not in task.prompt and first in task.prompt
    acct = next(a for a in task.truth["world"]["accounts"] if a["name"] in task.prompt)
    namesakes = [
        c
        for c in task.truth["world"]["contacts"]
        if c["account_id"] == acct["id"] and c["first_name"] == first
    ]
    assert len(namesakes) == 2
    env, r = step_ask(tid, "Which Dana do you mean, can you give the full name?")
    assert meant in r.info["tool_result"]["content"]["answer"]
    assert r.reward_components["clarify"] == pytest.approx(0.1)
    # a question about something else reveals nothing and earns nothing
    env2, r2 = step_ask(tid, "Is the weather nice today?")
    assert meant not in r2.info["tool_result"]["content"]["answer"]
    assert "clarify" not in r2.reward_components
    env.close()
    env2.close()
    # the oracle (which asks) passes; the same plan without the question fails even though
    # it acts on the right record, and guessing the look-alike fails on the rows as well
    assert run(tid)[1]["success"]
    _, lucky = run(tid, rt.ask_nothing)
    assert rules_broken(lucky) == {"clarify_before_acting"}
    _, wrong = run(tid, rt.guess)
    assert {"clarify_before_acting", "collateral", "missing_change"} <= rules_broken(wrong)


def test_asking_about_a_clear_request_is_penalised_and_fails() -> None:
    tid = task_id("update_contact", 4, ambiguous=0)
    env, r = step_ask(tid, "Which contact do you mean?")
    assert "Everything you need is in my request" in r.info["tool_result"]["content"]["answer"]
    assert r.reward_components["clarify"] == pytest.approx(-0.1)
    env.close()
    _, info = run(tid, rt.needless_question)
    assert not info["success"] and rules_broken(info) == {"no_needless_question"}


def test_a_left_out_value_is_asked_for() -> None:
    tid = task_id("create_contact", 2, ambiguous=1, exists=0)
    task = SOURCE.resolve(tid)
    email = task.truth["clarify"][0]["value"]
    assert "@" not in task.prompt
    env, r = step_ask(tid, "What is their email address?")
    assert email in r.info["tool_result"]["content"]["answer"]
    env.close()
    assert run(tid)[1]["success"]


def test_seeded_faults_fire_and_the_oracle_recovers() -> None:
    kinds: Counter[str] = Counter()
    ids = [t for t in SOURCE.sample(150, 9, "train") if SOURCE.resolve(t).difficulty == 3]
    for i, tid in enumerate(ids):
        env, info = run(tid, seed=i)
        assert info["success"], (tid, info["verdict"]["facts"])
        for e in env.log:
            fault = e.attrs.get("fault") or e.attrs.get("world_fault")
            if fault:
                kinds[fault] += 1
    assert {"timeout", "stale", "permission_denied", "commit_timeout", "rate_limited"} <= set(
        kinds
    ), kinds


def test_retrying_a_timed_out_write_without_its_key_applies_it_twice() -> None:
    for seed in range(1, 200):
        tid = task_id("log_activity", seed, ambiguous=0, distractors=6, page_size=3, fault_rate=0.1)
        env, good = run(tid)
        if any(e.attrs.get("world_fault") == "commit_timeout" for e in env.log):
            break
    else:
        raise AssertionError("no commit timeout in 200 tasks")
    assert good["success"]
    _, bad = run(tid, rt.no_keys)
    assert bad["verdict"]["facts"]["changed"]["activities"]["added"] == 2
    assert {"idempotency_key_required", "wrong_rows"} <= rules_broken(bad)


def test_skill_levels_pass_exactly_the_tasks_their_habit_allows() -> None:
    ids = SOURCE.sample(42, 5, "train")
    ambiguous = {t for t in ids if SOURCE.resolve(t).truth["ambiguous"]}
    assert 0 < len(ambiguous) < len(ids)

    async def passed(make: Callable[[], Any]) -> set[str]:
        env = CrmEnv()
        out = set()
        for i, tid in enumerate(ids):
            records = await play(env, make(), tid, i)
            if records[-1]["success"]:
                out.add(tid)
        return out

    got = {name: asyncio.run(passed(make)) for name, make in LEVELS.items()}
    assert got["expert"] == set(ids)
    assert got["hasty"] == set(ids) - ambiguous
    assert got["anxious"] == ambiguous
    assert got["careless"] == set()
    source = resolve_policy("gymforge.envs.crm.agents:hasty")
    assert source.factory().name == "crm-hasty"


def test_tools_refuse_what_a_crm_refuses_and_views_show_ownership() -> None:
    tid = task_id("merge_accounts", 3)
    t = SOURCE.resolve(tid).truth
    merge = next(c["args"] for c in t["plan"] if c["tool"] == "merge_records")
    accounts = {a["id"]: a for a in t["world"]["accounts"]}
    keep, dup = accounts[merge["survivor_id"]], accounts[merge["duplicate_id"]]
    assert keep["domain"] == dup["domain"] and keep["created_at"] < dup["created_at"]
    other = next(a for a in t["world"]["accounts"] if a["domain"].endswith(".eu"))
    opp = next(iter(t["world"]["opportunities"]), None)
    env = SyncEnvironment(CrmEnv())
    env.reset(tid, 0)

    def call(name: str, **args: Any) -> dict[str, Any]:
        return env.step(ToolCall(name=name, arguments=args)).info["tool_result"]

    found = call("search", query=keep["domain"], kind="accounts")["content"]
    assert {i["id"] for i in found["items"]} == {keep["id"], dup["id"]}
    assert found["as_of"] == t["now"] and all("team_id" in i for i in found["items"])
    record = call("get_record", record_id=keep["id"])["content"]
    assert record["team_id"] == t["team_id"] and isinstance(record["contacts"], list)
    err = call("merge_records", survivor_id=keep["id"], duplicate_id=other["id"])["error"]
    assert err["kind"] == "validation" and "domain" in err["message"]
    if opp is not None:
        err = call("update_record", record_id=opp["id"], changes={"stage": "closed_won"})
        assert err["error"]["kind"] == "validation" and "move_stage" in err["error"]["message"]
    err = call("update_record", record_id=keep["id"], changes={"team_id": "T-MID"})["error"]
    assert err["kind"] == "validation"
    assert call("get_record", record_id="XX-1")["error"]["kind"] == "not_found"
    assert call("search", query="a", kind="accounts", page=99)["error"]["kind"] == "validation"
    assert call("move_stage", opportunity_id=keep["id"], to_stage="proposal")["error"]
    assert env.env.db.diff().changed_tables == frozenset()  # every refusal changed nothing
    env.close()


def test_heldout_family_is_refused_for_training() -> None:
    train = SOURCE.sample(300, 7, "train")
    assert not any(t.startswith("crm.close_deal/") for t in train)
    shares = Counter(t.split("/")[0] for t in train)
    assert len(shares) == 6 and all(abs(n / 300 - 1 / 6) < 0.07 for n in shares.values())
    for tid in SOURCE.sample(10, 7, "heldout"):
        task = SOURCE.resolve(tid)
        assert task.split == "heldout" and task.difficulty >= 4
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(task)
    for path in TRAINING_PATHS.values():
        assert all(SOURCE.resolve(t).split == "train" for t in path(SOURCE, 60, 3))


@pytest.mark.xdist_group("qa-crm")
def test_passes_all_ten_qa_checks(builtin_qa_report: Callable[[str], QAReport]) -> None:
    """The default run's QA report (``QUICK_QA``), shared with tests/qa's all-built-ins test."""
    report = builtin_qa_report("crm")
    assert report.passed, [(c.name, c.details) for c in report.checks if not c.passed]
    baselines = next(c for c in report.checks if c.name == "scripted_baselines")
    assert baselines.passed


class Colleague:
    """A Policy playing the requester (an LLM would sit here): it answers from the system
    message it was given, or, when ``tight_lipped``, with nothing useful."""

    name = checkpoint = "colleague"

    def __init__(self, tight_lipped: bool = False) -> None:
        self.tight_lipped = tight_lipped
        self.seen: list[str] = []

    async def start(self, ctx: Any) -> None:
        return None

    async def act(self, observation: Any) -> PolicyTurn:
        self.seen += [m.content for m in observation.messages]
        meant = [ln.split(": ", 1)[1] for ln in self.seen[0].splitlines() if ln.startswith("- ")]
        text = "Hm, not sure." if self.tight_lipped or not meant else f"I meant {meant[0]}."
        return PolicyTurn(Reply(text=text))


@pytest.mark.parametrize("tight_lipped", [False, True])
def test_a_policy_can_play_the_requester(tight_lipped: bool) -> None:
    tid = task_id("advance_stage", 6, ambiguous=1, stages=1)
    colleague = Colleague(tight_lipped)

    async def go() -> list[dict[str, Any]]:
        env = CrmEnv(user_policy=lambda: colleague)
        return await play(env, PlanAttack(lambda t, p: p), tid, 0)

    info = asyncio.run(go())[-2]["info"]
    truth = SOURCE.resolve(tid).truth
    system, question = colleague.seen[:2]
    assert truth["requester"] in system and truth["clarify"][0]["value"] in system
    assert question.startswith("That account has more than one open opportunity")
    if tight_lipped:  # asking without learning anything does not license acting
        assert rules_broken(info) == {"clarify_before_acting"}
    else:
        assert info["success"], info["verdict"]["facts"]
        assert info["verdict"]["facts"]["clarified"] is True
