"""error_paths: every bad input has a defined outcome, never an exception.

Hand-written cases (malformed output, unknown and absurd tool names, missing, mistyped
(plain JSON of a type the parameter's schema rejects, unions and ``$ref``s resolved; an
``Any`` parameter is left out), extra, huge and deeply nested arguments, odd unicode, huge
replies, forced timeouts on every tool, every world write applied and then timed out under
the oracle, and every tool made to crash), schema-valid edge cases of every typed parameter
(``call_audit.edge_calls``: empty, blank, long and unicode strings, zero, negative and huge
numbers, enum members, starting from the oracle's own calls), and then hypothesis-fuzzed
action sequences (which draw typed edge values too). Each step must return a well-formed
``StepResult`` (reward equals the sum of components, never both terminated and truncated)
whose outcome is visible: an observation, a penalty, or the end of the episode. Every
episode must also seal into schema-valid trajectory records. Every tool call that returns
an error is audited (``call_audit``): an ``internal`` crash on schema-valid arguments fails
(naming the tool, the arguments and the exception), and so does an error that left the
state changed (naming the changed value) unless the tool declares that kind in
``error_effects`` and the change is exactly what the same call leaves when it succeeds
(``effects``: the episode replayed in a fresh instance, the call run with faults off; the
oracle's own episode is audited the same way).

What it cannot catch: a crash or a partial write that needs a state the cases do not reach
(edge cases run right after ``reset``, fuzzed episodes are short); a tool that returns
``ok`` with wrong content; side effects outside ``snapshot()`` (files, services); a
difference hidden in a world's system tables (left out of the comparison); and a declared
error whose fault QA cannot switch off (a tool that raises its own timeout, a remote
environment's world faults): the replayed success then fails alike and matches.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from gymforge.core.capabilities import ORACLE, TOOLSET, supported
from gymforge.core.env import Environment, StepResult
from gymforge.core.types import Action, Invalid, Reply, ToolCall
from gymforge.qa.checks.call_audit import CallAudit
from gymforge.qa.checks.common import (
    CheckFailed,
    QAOptions,
    jobs,
    plain,
    run_async,
)
from gymforge.qa.checks.effects import Prefix, commit_timeouts, set_world_faults
from gymforge.qa.checks.fuzz import audit_episode, fuzz
from gymforge.qa.checks.schema_types import admits, admitted_types
from gymforge.qa.episodes import play, probe_policy
from gymforge.qa.target import QATarget
from gymforge.tools.faults import FaultPlan

NAME = "error_paths"
ODD = "\u0000\u202e\ud800\U0001f600e\u0301\ufeff\uffff"
HUGE = 1_000_000
ORACLE_STEPS = 32
"""How far the oracle runs with every world write timing out after its commit."""


def _deep(n: int) -> Any:
    value: Any = 1
    for _ in range(n):
        value = [value]
    return value


WRONG: dict[str, Any] = {
    "string": ["not", "a", "string"],
    "integer": "12",
    "number": "1.5",
    "boolean": "yes",
    "array": {"a": 1},
    "object": [1],
}
"""For a parameter of each type, a wrong value that looks close to a right one."""
ANY_WRONG = (["not", "a", "string"], {"a": 1}, "12", True, 1.5, None)
"""One value of every JSON type, for the parameters whose own ``WRONG`` value they admit."""


def _wrong_type(spec: Any, root: dict[str, Any]) -> list[Any]:
    """A plain JSON value of a type ``spec`` rejects (in a one-item list), or no value when
    it admits every type (``Any``): then there is no wrong type to send."""
    types = admitted_types(spec, root)
    for value in (*(WRONG[t] for t in types if t in WRONG), *ANY_WRONG):
        if not admits(types, value):
            return [value]
    return []


def cases(tools: tuple[dict[str, Any], ...]) -> list[tuple[str, Action]]:
    out: list[tuple[str, Action]] = [
        ("malformed", Invalid(raw='<tool_call>{"name": ', error="unterminated JSON")),
        ("malformed_huge", Invalid(raw="{" * HUGE, error="x" * 10_000)),
        ("unknown_tool", ToolCall(name="definitely_not_a_tool", arguments={"a": 1})),
        ("empty_tool_name", ToolCall(name="", arguments={})),
        ("huge_tool_name", ToolCall(name="t" * 100_000, arguments={})),
        ("odd_unicode_tool_name", ToolCall(name=ODD, arguments={ODD: ODD})),
        ("reply_huge", Reply(text="y" * HUGE)),
        ("reply_odd_unicode", Reply(text=ODD * 100)),
        ("reply_empty", Reply(text="")),
    ]
    for schema in tools:
        fn = schema["function"]
        name, params = fn["name"], fn["parameters"]
        props = params.get("properties", {})
        strings = [p for p, s in props.items() if "string" in admitted_types(s, params)]
        wrong = {p: w[0] for p, s in props.items() if (w := _wrong_type(s, params))}
        out += [
            (f"{name}.missing_args", ToolCall(name=name, arguments={})),
            (f"{name}.wrong_types", ToolCall(name=name, arguments=wrong)),
            (f"{name}.extra_arg", ToolCall(name=name, arguments={"__proto__": 1, "zz": None})),
            (
                f"{name}.deep_nesting",
                ToolCall(name=name, arguments={p: _deep(90) for p in props} or {"x": _deep(90)}),
            ),
        ]
        if strings:
            out += [
                (
                    f"{name}.huge_strings",
                    ToolCall(
                        name=name, arguments={p: ("z" * HUGE if p in strings else 0) for p in props}
                    ),
                ),
                (
                    f"{name}.odd_unicode",
                    ToolCall(name=name, arguments={p: (ODD if p in strings else 0) for p in props}),
                ),
            ]
    return out


def check_result(label: str, result: StepResult) -> None:
    if not isinstance(result, StepResult):
        raise CheckFailed(f"{label}: step returned {type(result).__name__}, not StepResult")
    if result.terminated and result.truncated:
        raise CheckFailed(f"{label}: terminated and truncated both set")
    if result.reward != math.fsum(result.reward_components.values()):
        raise CheckFailed(f"{label}: reward is not the sum of its components")
    visible = (
        bool(result.observation.messages)
        or any(v < 0 for v in result.reward_components.values())
        or result.terminated
        or result.truncated
    )
    if not visible:
        raise CheckFailed(f"{label}: no defined outcome (no observation, penalty or end)")


def _toolset(env: object) -> Any:
    """The environment's toolset, if it has one (the one place this check reads it). Any,
    not ``ToolsetView``: the injections replace its tools, which ``Toolset`` and the served
    client's ``RemoteToolset`` both allow."""
    found = supported(env, TOOLSET)
    return found.toolset if found is not None else None


async def _audited_step(
    env: Environment,
    audit: CallAudit,
    label: str,
    action: Action,
    prefix: Prefix | None,
    crashes_expected: bool = False,
) -> StepResult:
    """One step, checked: a well-formed result, and for a failed tool call no crash on
    schema-valid arguments and no state change (or, for a declared kind, the change the call
    makes when it succeeds, replayed from ``prefix``). Snapshots are copied out as plain JSON
    at once (a snapshot may share lists with the live world that the step then mutates)."""
    before = plain(await env.snapshot())
    try:
        result: StepResult = await env.step(action)
    except Exception as err:
        raise CheckFailed(f"{label}: step raised {type(err).__name__}: {str(err)[:200]}") from err
    check_result(label, result)
    tool_result = result.info.get("tool_result")
    if isinstance(action, ToolCall) and tool_result is not None:
        if not crashes_expected:
            audit.check_crash(label, action.name, action.arguments, tool_result)
        after = plain(await env.snapshot())
        await audit.check_atomic(
            label, action.name, action.arguments, tool_result, before, after, prefix
        )
    return result


def _oracle_calls(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The first arguments the oracle sent to each tool (known-good starting points)."""
    calls: dict[str, dict[str, Any]] = {}
    for rec in records[1:-1]:
        action = rec["action"]
        if action.get("kind") == "tool_call":
            calls.setdefault(action["name"], action["arguments"])
    return calls


async def _hand_cases(target: QATarget, task_id: str, seed: int) -> tuple[int, CallAudit]:
    env = target.factory()
    ran = 0
    try:
        obs = await env.reset(task_id, seed)
        toolset = _toolset(env)
        audit = CallAudit.of(obs.tools, toolset.tools if toolset is not None else {})
        for label, action in cases(obs.tools):
            await env.reset(task_id, seed)
            await _audited_step(env, audit, label, action, Prefix(target, task_id, seed, ()))
            ran += 1
        base: dict[str, dict[str, Any]] = {}
        if target.has_oracle:
            records = await play(env, probe_policy("oracle"), task_id, seed)
            await audit_episode(target, audit, records, "oracle")
            base = _oracle_calls(records)
        for schema in obs.tools:
            name = schema["function"]["name"]
            for args in audit.edge_calls(name, base.get(name)):
                await env.reset(task_id, seed)
                label = f"{name}.edge {short_args(args)}"
                call = ToolCall(name=name, arguments=args)
                await _audited_step(env, audit, label, call, Prefix(target, task_id, seed, ()))
                ran += 1
        ran += await _injected(target, env, audit, task_id, seed)
    finally:
        await env.close()
    return ran, audit


def short_args(args: dict[str, Any]) -> str:
    text = repr(args)
    return text if len(text) <= 120 else text[:120] + "...}"


async def _injected(
    target: QATarget, env: Environment, audit: CallAudit, task_id: str, seed: int
) -> int:
    """Under the oracle's actions: forced timeouts on every tool, every write of a world
    applied and then timed out (each checked against the same call succeeding), and every
    tool crashing."""
    toolset, oracle = _toolset(env), supported(env, ORACLE)
    if toolset is None or oracle is None:
        return 0
    ran = 0
    forced = FaultPlan(forced=tuple((n, i, "timeout") for n in toolset.tools for i in range(64)))
    world = commit_timeouts([n for n, kinds in audit.effects.items() if "timeout" in kinds])
    crashing = {n: dataclasses.replace(t, fn=_crash) for n, t in toolset.tools.items()}
    original = dict(toolset.tools)
    for label in ("forced_timeouts", "commit_timeouts", "crashing_tools"):
        await env.reset(task_id, seed)
        prefix: Prefix | None = Prefix(target, task_id, seed, ())
        if label == "forced_timeouts":
            toolset.set_fault_plan(forced)
            prefix = Prefix(target, task_id, seed, (), plan=forced)
        elif label == "commit_timeouts":
            if not world.forced or not set_world_faults(env, world):
                continue
            prefix = Prefix(target, task_id, seed, (), world=world)
        else:
            toolset.tools = crashing
            prefix = None
        try:
            for _ in range(ORACLE_STEPS if label == "commit_timeouts" else 6):
                action = await oracle.oracle_action()
                expected = label == "crashing_tools"
                result = await _audited_step(env, audit, label, action, prefix, expected)
                if prefix is not None:
                    prefix = dataclasses.replace(prefix, history=(*prefix.history, action))
                ran += 1
                if (
                    label != "commit_timeouts"
                    and isinstance(action, ToolCall)
                    and result.observation.data.get("tool_result", {}).get("ok")
                ):
                    raise CheckFailed(f"{label}: {action.name} succeeded despite the injection")
                if result.terminated or result.truncated:
                    break
        except CheckFailed:
            raise
        except Exception as err:
            raise CheckFailed(f"{label}: step raised {type(err).__name__}: {err}") from err
        finally:
            toolset.tools = original
    return ran


def _crash(*args: Any, **kwargs: Any) -> Any:
    raise RuntimeError("injected tool crash")


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    pairs = jobs(target, max(2, opts.episodes // 8), opts.seed + 4, "all")
    hands = [run_async(_hand_cases(target, task_id, seed)) for task_id, seed in pairs[:2]]
    hand = sum(ran for ran, _ in hands)

    async def tools() -> tuple[Any, Any]:
        env = target.factory()
        try:
            schemas = (await env.reset(*pairs[0])).tools
            toolset = _toolset(env)
            return schemas, dict(toolset.tools) if toolset is not None else {}
        finally:
            await env.close()

    fuzz_audit = CallAudit.of(*run_async(tools()))
    fuzzed = fuzz(target, pairs, opts.fuzz_examples, fuzz_audit)
    audits = [audit for _, audit in hands] + [fuzz_audit]
    declared = sum(a.declared_effects for a in audits)
    verified = sum(a.verified_effects for a in audits)
    metrics = {
        "hand_cases": hand,
        "fuzzed_episodes": fuzzed,
        "declared_effects": declared,
        "verified_effects": verified,
    }
    return (
        f"{hand} hand-made bad inputs and schema-valid edge cases and {fuzzed} fuzzed episodes "
        "all had defined outcomes; no tool crashed on valid arguments and every failed call "
        f"left the state unchanged, or ({declared} declared side-effecting errors, {verified} "
        "of them replayed) exactly as the same call succeeding would",
        metrics,
    )
