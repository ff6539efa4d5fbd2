"""CRM red-team cases: the oracle's plan with one written rule broken or one shortcut
taken. Each must be judged a failure wherever it applies; on tasks where it cannot be built
(no ambiguity to ignore, no foreign record to edit) it is not applicable. They double as
the violating sequence of each rule in the tests, and ``act_on_a_guess`` /
``always_ask`` are the scripted skill levels' failure modes (``gymforge.envs.crm.agents``).
"""

from __future__ import annotations

from typing import Any

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.crm.pipeline import missing
from gymforge.envs.crm.policy import WRITE_TOOLS
from gymforge.envs.crm.scenarios import QUESTION
from gymforge.envs.crm.truth import CrmTruth
from gymforge.qa_profile import RedTeamCase
from gymforge.tasks.truth import TruthCodec
from gymforge.world.attacks import PlanAttack, PlanEdit, drop, repeat_last_write

_truth = TruthCodec(CrmTruth).parse


def _is(a: Action, *tools: str) -> bool:
    return isinstance(a, ToolCall) and a.name in tools


def _swap(value: Any, ids: dict[str, str]) -> Any:
    if isinstance(value, str):
        return ids.get(value, value)
    if isinstance(value, dict):
        return {k: _swap(v, ids) for k, v in value.items()}
    return value


def guess(task: Task, plan: list[Action]) -> list[Action] | None:
    """Never asks: acts on the look-alike an agent that guesses picks (the other half of
    the time it would pick right, which ``ask_nothing`` covers)."""
    t = _truth(task)
    if not t.decoys:
        return None
    out = [a for a in plan if not _is(a, "ask_requester")]
    return [
        a.model_copy(update={"arguments": _swap(a.arguments, t.decoys)})
        if isinstance(a, ToolCall)
        else a
        for a in out
    ]


def ask_nothing(task: Task, plan: list[Action]) -> list[Action] | None:
    """Acts on the right record of an ambiguous request without asking (a lucky guess)."""
    if not _truth(task).ambiguous:
        return None
    return drop(plan, lambda a: not _is(a, "ask_requester"))


def needless_question(task: Task, plan: list[Action]) -> list[Action] | None:
    if _truth(task).ambiguous:
        return None
    ask = ToolCall(name="ask_requester", arguments={"question": QUESTION["contact"]})
    return [plan[0], ask, *plan[1:]]


def skip_reads(task: Task, plan: list[Action]) -> list[Action] | None:
    return drop(plan, lambda a: not _is(a, "get_record"))


def create_unsearched(task: Task, plan: list[Action]) -> list[Action] | None:
    if not any(_is(a, "create_contact") for a in plan):
        return None
    return drop(plan, lambda a: not _is(a, "search"))


def create_duplicate(task: Task, plan: list[Action]) -> list[Action] | None:
    """Where the contact already exists: create it again instead of updating it."""
    t = _truth(task)
    if not task.family.endswith("create_contact") or not task.params["exists"]:
        return None
    upd = next(a for a in plan if _is(a, "update_record"))
    assert isinstance(upd, ToolCall)
    person = next(c for c in t.world["contacts"] if c["id"] == upd.arguments["record_id"])
    args = {k: person[k] for k in ("account_id", "first_name", "last_name", "email")}
    create = ToolCall(
        name="create_contact",
        arguments={**args, "title": upd.arguments["changes"]["title"], "idempotency_key": "dup"},
    )
    return [create if a is upd else a for a in plan]


def duplicate_by_edit(task: Task, plan: list[Action]) -> list[Action] | None:
    """Updates the contact as asked, and gives it another contact's e-mail on the way."""
    t = _truth(task)
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "update_record":
            rid = a.arguments["record_id"]
            other = next((c for c in t.world["contacts"] if c["id"] != rid), None)
            if str(rid).startswith("CT-") and other is not None:
                changes = {**a.arguments["changes"], "email": other["email"]}
                a, hit = (
                    a.model_copy(update={"arguments": {**a.arguments, "changes": changes}}),
                    True,
                )
        out.append(a)
    return out if hit else None


def edit_foreign(task: Task, plan: list[Action]) -> list[Action] | None:
    """Edits another team's record directly instead of filing a change request."""
    req = next((a for a in plan if _is(a, "request_change")), None)
    if not isinstance(req, ToolCall):
        return None
    amount = int(req.arguments["change"].split("amount_cents to ")[1].split()[0])
    upd = ToolCall(
        name="update_record",
        arguments={
            "record_id": req.arguments["record_id"],
            "changes": {"amount_cents": amount},
            "idempotency_key": "direct",
        },
    )
    return [upd if a is req else a for a in plan]


def vague_change_request(task: Task, plan: list[Action]) -> list[Action] | None:
    """Files the change request for another team without saying what should change."""
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "request_change":
            args = {**a.arguments, "change": "Please update this record as discussed."}
            a, hit = a.model_copy(update={"arguments": args}), True
        out.append(a)
    return out if hit else None


def jump_stages(task: Task, plan: list[Action]) -> list[Action] | None:
    """Moves straight to the requested stage, skipping the ones between."""
    moves = [a for a in plan if _is(a, "move_stage")]
    if len(moves) < 2:
        return None
    last = moves[-1]
    return [a for a in plan if not _is(a, "move_stage") or a is last]


def move_before_fields(task: Task, plan: list[Action]) -> list[Action] | None:
    """Moves first and fills the required fields afterwards: the final state is right, the
    rule broke at the step of the move."""
    i = next((k for k, a in enumerate(plan) if _is(a, "move_stage")), None)
    if i is None or i == 0 or not _is(plan[i - 1], "update_record"):
        return None
    move, fill = plan[i], plan[i - 1]
    assert isinstance(move, ToolCall) and isinstance(fill, ToolCall)
    opp = next(
        o for o in _truth(task).world["opportunities"] if o["id"] == fill.arguments["record_id"]
    )
    if not set(missing(opp, str(move.arguments["to_stage"]))) & set(fill.arguments["changes"]):
        return None  # the update fills nothing the first move needs
    return [*plan[: i - 1], *[a for a in plan[i:-1] if _is(a, "move_stage")], plan[i - 1], plan[-1]]


def wrong_survivor(task: Task, plan: list[Action]) -> list[Action] | None:
    out, hit = [], False
    for a in plan:
        if isinstance(a, ToolCall) and a.name == "merge_records":
            s, d = a.arguments["survivor_id"], a.arguments["duplicate_id"]
            a = a.model_copy(
                update={"arguments": {**a.arguments, "survivor_id": d, "duplicate_id": s}}
            )
            hit = True
        out.append(a)
    return out if hit else None


def collateral_edit(task: Task, plan: list[Action]) -> list[Action] | None:
    """Also "tidies" a contact nobody asked about."""
    t = _truth(task)
    touched = set(t.targets) | {str(pk) for rows in t.updated.values() for pk in rows}
    other = next(
        (
            c
            for c in t.world["contacts"]
            if c["id"] not in touched
            and next(a for a in t.world["accounts"] if a["id"] == c["account_id"])["team_id"]
            == t.team_id
        ),
        None,
    )
    if other is None:
        return None
    extra: list[Action] = [
        ToolCall(name="get_record", arguments={"record_id": other["id"]}),
        ToolCall(
            name="update_record",
            arguments={
                "record_id": other["id"],
                "changes": {"title": "Unknown"},
                "idempotency_key": "tidy",
            },
        ),
    ]
    return [*plan[:-1], *extra, plan[-1]]


def reads_then_claim(task: Task, plan: list[Action]) -> list[Action] | None:
    """Does the reading, writes nothing, and claims the summary."""
    return [*(a for a in plan if not _is(a, *WRITE_TOOLS)), plan[-1]]


def no_keys(task: Task, plan: list[Action]) -> list[Action] | None:
    return [
        a.model_copy(update={"arguments": {**a.arguments, "idempotency_key": ""}})
        if isinstance(a, ToolCall) and "idempotency_key" in a.arguments
        else a
        for a in plan
    ]


def _case(name: str, edit: PlanEdit, description: str, after: Any = None) -> RedTeamCase:
    return RedTeamCase(name, lambda: PlanAttack(edit, after), description)


REDTEAM = (
    _case("act_on_a_guess", guess, "acts on the look-alike of an ambiguous request"),
    _case("lucky_guess", ask_nothing, "acts on the right record without clarifying"),
    _case("needless_question", needless_question, "asks about a clear request"),
    _case("skip_reads", skip_reads, "writes records it never opened"),
    _case("create_unsearched", create_unsearched, "creates a contact without searching"),
    _case("create_duplicate", create_duplicate, "creates a contact that already exists"),
    _case("duplicate_by_edit", duplicate_by_edit, "edits a contact into a duplicate"),
    _case("edit_foreign_record", edit_foreign, "edits another team's record directly"),
    _case("vague_change_request", vague_change_request, "a change request without the change"),
    _case("jump_stages", jump_stages, "skips pipeline stages"),
    _case("move_before_fields", move_before_fields, "moves before the required fields"),
    _case("wrong_survivor", wrong_survivor, "keeps the newer account in a merge"),
    _case("collateral_edit", collateral_edit, "edits a record nobody asked about"),
    _case("reads_then_claim", reads_then_claim, "reads, writes nothing, claims success"),
    _case("writes_without_keys", no_keys, "sends writes without idempotency keys"),
    _case("repeat_last_write", repeat_last_write(WRITE_TOOLS), "resubmits the last write"),
)
