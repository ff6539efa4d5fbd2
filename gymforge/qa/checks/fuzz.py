"""The fuzzed half of ``error_paths``: hypothesis-drawn action sequences, audited.

Actions mix schema-shaped tool calls (every typed parameter drawn from its type's edge
values, or anything at all), free-form calls with random names and arguments, replies and
malformed output. Every episode must seal into schema-valid records, never set both end
flags, and pass the call audit: no ``internal`` crash on schema-valid arguments, and no
failed call whose state fingerprint changed unless declared and equal to the same call
succeeding, the changed value named by replaying the episode up to that call.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.reporting import with_reporter

from gymforge.core.errors import InfraError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.types import Action, Invalid, Observation, Reply, ToolCall
from gymforge.qa.checks.call_audit import CallAudit, edge_values
from gymforge.qa.checks.common import CheckFailed, first_difference, run_async, short
from gymforge.qa.checks.effects import Prefix, replay
from gymforge.qa.episodes import play
from gymforge.qa.target import QATarget
from gymforge.qa.truth_witness import TruthEdited
from gymforge.trajectory.io import seal_episode


class _Scripted:
    name = checkpoint = "fuzz"

    def __init__(self, actions: list[Action]) -> None:
        self.actions = list(actions)

    async def start(self, ctx: EpisodeContext) -> None:
        return None

    async def act(self, observation: Observation) -> PolicyTurn:
        return PolicyTurn(self.actions.pop(0) if self.actions else Reply(text="stop"))


def _strategy(tools: tuple[dict[str, Any], ...]) -> st.SearchStrategy[list[Action]]:
    names = [t["function"]["name"] for t in tools]
    params = sorted({p for t in tools for p in t["function"]["parameters"].get("properties", {})})
    leaf = (
        st.none()
        | st.booleans()
        | st.integers(-(2**70), 2**70)
        | st.text(max_size=30)
        | st.floats(allow_nan=False, allow_infinity=False)
    )
    value = st.recursive(
        leaf,
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=8,
    )
    key = st.sampled_from(params) | st.text(max_size=8) if params else st.text(max_size=8)
    tool_name = st.sampled_from(names) | st.text(max_size=12) if names else st.text(max_size=12)
    action = st.one_of(
        *(_typed(t, leaf) for t in tools),
        st.builds(ToolCall, name=tool_name, arguments=st.dictionaries(key, value, max_size=4)),
        st.builds(Reply, text=st.text(max_size=60)),
        st.builds(Invalid, raw=st.text(max_size=60), error=st.text(max_size=30)),
    )
    return st.lists(action, min_size=1, max_size=8)


def _typed(schema: dict[str, Any], leaf: st.SearchStrategy[Any]) -> st.SearchStrategy[ToolCall]:
    """Calls of one tool with every parameter drawn from its types' edge values (or anything
    at all)."""
    params = schema["function"]["parameters"]
    args: dict[str, st.SearchStrategy[Any]] = {}
    for param, spec in params.get("properties", {}).items():
        edges = edge_values(spec, params)
        args[param] = st.sampled_from(edges) | leaf if edges else leaf
    name = st.just(schema["function"]["name"])
    return st.builds(ToolCall, name=name, arguments=st.fixed_dictionaries(args))


async def audit_episode(
    target: QATarget, audit: CallAudit, records: list[dict[str, Any]], what: str = "fuzzed"
) -> None:
    """The call audit over a recorded episode: crashes, and for a failed call whose state
    fingerprint changed, the change itself, found by replaying the episode up to that call
    (and the counterfactual, when the tool declares the error kind)."""
    from gymforge.rollout.replay import ACTION_ADAPTER

    actions = [ACTION_ADAPTER.validate_python(rec["action"]) for rec in records[1:-1]]
    for k in range(1, len(records) - 1):
        rec, action = records[k], records[k]["action"]
        result = rec.get("tool_result")
        if action.get("kind") != "tool_call" or not result:
            continue
        label = f"{what} step {k}"
        audit.check_crash(label, action["name"], action["arguments"], result)
        if result["ok"] or rec["state_fingerprint"] == records[k - 1]["state_fingerprint"]:
            continue
        call = actions[k - 1]
        assert isinstance(call, ToolCall)
        prefix = Prefix(target, records[0]["task_id"], records[0]["seed"], actions[: k - 1])
        before, after = await replay(prefix, call)
        if first_difference(before, after) is None:
            kind = (result.get("error") or {}).get("kind")
            raise CheckFailed(
                f"{label}: {action['name']}{short(action['arguments'], 200)} returned a "
                f"{kind!r} error but left the state changed: the state fingerprint changed"
            )
        await audit.check_atomic(
            label, action["name"], action["arguments"], result, before, after, prefix
        )


def fuzz(target: QATarget, pairs: list[tuple[str, int]], examples: int, audit: CallAudit) -> int:
    tools = tuple(audit.schemas)
    count = [0]
    reports: list[str] = []
    edits: list[TruthEdited] = []

    @settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.sampled_from(pairs), _strategy(tools))
    def prop(pair: tuple[str, int], actions: list[Action]) -> None:
        async def episode() -> None:
            env = target.factory()
            try:
                records = await play(env, _Scripted(actions), *pair, tag="fuzz")
            except TruthEdited as edited:  # kept out of hypothesis: the edit outlives the
                edits.append(edited)  # example (the task is alive), so no replay repeats it
                return
            finally:
                await env.close()
            seal_episode(records)  # schema-valid and JSON-safe
            for rec in records[1:-1]:
                if rec["terminated"] and rec["truncated"]:
                    raise CheckFailed("terminated and truncated both set")
            await audit_episode(target, audit, records)

        try:
            run_async(episode())
        except InfraError as err:
            raise CheckFailed(f"step raised: {err}") from err
        count[0] += 1

    try:
        with with_reporter(lambda message: reports.append(str(message))):
            prop()
    except CheckFailed as err:
        if edits:  # the first defect: what followed may be its consequence
            raise CheckFailed(f"fuzzing: {edits[0]}") from err
        raise CheckFailed(f"fuzzing: {err}; {' '.join(reports)[:600]}") from err
    except Exception as err:
        if edits:
            raise CheckFailed(f"fuzzing: {edits[0]}") from err
        raise CheckFailed(
            f"fuzzing: {type(err).__name__}: {str(err)[:300]}; {' '.join(reports)[:600]}"
        ) from err
    if edits:
        raise CheckFailed(f"fuzzing: {edits[0]}")
    return count[0]
