"""reset_isolation: back-to-back episodes share no state.

1. The references: one whole episode (the oracle's, else a random one) per task, each on
   its own instance, played in the run's fresh process (``gymforge.qa.fresh``) before any
   other episode ran there (``run_qa`` sends them first; see ``prefetch``): every step's
   observation, reward, flags, info and state fingerprint. A class-level cache or a module
   global that all instances of one process share cannot make these references agree with
   this process's dirty instance.
2. One reused instance first plays every task in the reverse order (so whatever it caches,
   it has cached, and a value two tasks share was cached by the other one), then per task
   plays a finished episode and an abandoned random one of *another* task (of another
   family when there is one), then the task itself: that must reproduce the reference
   exactly. Comparing whole episodes, not just the state after reset, catches
   counters and caches that ``reset`` forgets. The first differing value is named.
3. After all of that, ``reset`` then fingerprint, for every task: the observation and state
   fingerprint must equal the reference's.
4. Two instances stepped in lockstep must produce exactly what each produced alone.

What it cannot catch: state shared across *processes* (files, databases, servers the
environment talks to), leaks that only a task outside this sample triggers, and leaks that
change nothing the episode records (a cache that is filled but never changes an answer).
For factories without an import path, the references are built in this process (the
details say so), and then a cache all instances share goes unseen.
"""

from __future__ import annotations

import contextlib
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.policy import episode_context
from gymforge.core.seeding import canonical_json, fingerprint
from gymforge.qa.checks.common import (
    CheckFailed,
    NothingToTest,
    QAOptions,
    first_difference,
    jobs,
    need_tasks,
    plain,
    run_async,
    short,
)
from gymforge.qa.episodes import play, probe_name, probe_policy
from gymforge.qa.fresh import FreshProcessError, prestart
from gymforge.qa.target import QATarget
from gymforge.rollout.episode import reset_outcome, step_outcome
from gymforge.rollout.replay import ACTION_ADAPTER, COMPARED
from gymforge.rollout.scripted import RandomPolicy

NAME = "reset_isolation"
Records = list[dict[str, Any]]
Pair = tuple[str, int]


def _view(records: Records) -> list[dict[str, Any]]:
    """The deterministic part of every step of an episode, as plain JSON."""
    return [plain({k: r[k] for k in COMPARED}) for r in records[:-1]]


def _mismatch(got: Records, want: Records) -> tuple[int, str, str] | None:
    """Where ``got`` first departs from ``want``: (step, field path, description)."""
    a, b = _view(want), _view(got)
    for step, (x, y) in enumerate(zip(a, b, strict=False)):
        found = first_difference(x, y)
        if found is not None:
            path, ref, dirty = found
            return step, path, f"step {step}, {path}: reference {short(ref)}, reused {short(dirty)}"
    if len(a) != len(b):
        return len(a), "", f"the reference has {len(a) - 1} steps, the reused one {len(b) - 1}"
    return None


async def _local_references(target: QATarget, pairs: list[Pair]) -> list[Records]:
    episodes = []
    for task_id, seed in pairs:
        env = target.factory()
        try:
            episodes.append(await play(env, probe_policy(probe_name(target)), task_id, seed))
        finally:
            await env.close()
    return episodes


def _pairs(target: QATarget, opts: QAOptions) -> list[Pair]:
    return jobs(target, max(4, opts.episodes // 3), opts.seed + 1, "all")


def _item(target: QATarget, pairs: list[Pair]) -> dict[str, Any]:
    return {"policy": probe_name(target), "pairs": [list(p) for p in pairs]}


def prefetch(target: QATarget, opts: QAOptions) -> None:
    """Ask the fresh process for the references now (``run_qa`` calls this before the first
    check), so that they are its first work and overlap the checks before this one."""
    with contextlib.suppress(FreshProcessError, NothingToTest):
        target.fresh_process().submit("play", [_item(target, _pairs(target, opts))])


def _references(target: QATarget, pairs: list[Pair]) -> tuple[list[Records], str]:
    """Reference episodes from the fresh process, else from fresh local instances."""
    try:
        proc = target.fresh_process()
    except FreshProcessError as err:
        refs = run_async(_local_references(target, pairs))
        return refs, f"references built in this process ({err})"
    try:
        (answer,) = proc.request("play", [_item(target, pairs)])
    except FreshProcessError as err:
        raise CheckFailed(f"the reference episodes failed: {err}") from err
    if "error" in answer:
        raise CheckFailed(f"the reference episodes raised {answer['error']}")
    return answer["episodes"], f"references from {proc.describe()}"


def _other_tasks(target: QATarget, pairs: list[Pair], seed: int) -> list[Pair]:
    """For every pair, a task of another family when there is one, else another task."""
    tasks = need_tasks(target)
    pool = jobs(target, 4 * len(pairs), seed + 7, "all")
    family = {t: tasks.resolve(t).family for t, _ in {*pairs, *pool}}
    out = []
    for i, (task_id, _) in enumerate(pairs):
        other = [p for p in pool if family[p[0]] != family[task_id]]
        if not other:
            other = [p for p in pool if p[0] != task_id] or [pairs[(i + 1) % len(pairs)]]
        out.append(other[i % len(other)])
    return out


async def _state_at(env: Environment, records: Records, k: int) -> Any:
    """The state after step ``k`` of ``records``' actions, replayed on ``env``."""
    await env.reset(records[0]["task_id"], records[0]["seed"])
    for rec in records[1 : k + 1]:
        await env.step(ACTION_ADAPTER.validate_python(rec["action"]))
    return plain(await env.snapshot())


async def _explain_state(target: QATarget, dirty: Environment, ref: Records, k: int) -> str:
    """Name the leaked value behind a state-fingerprint mismatch at step ``k``: the state of
    a fresh instance against the (still dirty) reused one, after the same actions."""
    clean = target.factory()
    try:
        found = first_difference(await _state_at(clean, ref, k), await _state_at(dirty, ref, k))
    finally:
        await clean.close()
    if found is None:
        return ""
    path, ref_value, dirty_value = found
    return f" (state {path}: fresh {short(ref_value)}, reused {short(dirty_value)})"


async def _abandon(env: Environment, task_id: str, seed: int) -> None:
    """Start an episode with a few random actions and walk away from it."""
    policy = RandomPolicy(reply_rate=0.0)
    await policy.start(episode_context(policy, env, task_id, seed))
    obs = await env.reset(task_id, seed)
    for _ in range(3):
        result = await env.step((await policy.act(obs)).action)
        obs = result.observation
        if result.terminated or result.truncated:
            break


async def _dirty(
    target: QATarget, pairs: list[Pair], others: list[Pair], refs: list[Records]
) -> int:
    env = target.factory()
    probe = probe_name(target)
    checked = 0
    try:
        # whatever the instance (or its class) caches, it has now; in the reverse of the
        # references' order, so a value cached by the first of two tasks differs
        for task_id, seed in reversed(pairs):
            await play(env, probe_policy(probe), task_id, seed)
        for i, (task_id, seed) in enumerate(pairs):
            other_id, other_seed = others[i]
            for dirt in ("a finished episode", "an abandoned episode"):
                if dirt == "a finished episode":
                    await play(env, probe_policy(probe), other_id, other_seed)
                else:
                    await _abandon(env, other_id, other_seed)
                got = await play(env, probe_policy(probe), task_id, seed)
                problem = _mismatch(got, refs[i])
                if problem is not None:
                    step, path, text = problem
                    if path == "state_fingerprint":
                        text += await _explain_state(target, env, refs[i], step)
                    raise CheckFailed(
                        f"after {dirt} on {other_id}, the episode ({task_id}, seed {seed}) "
                        f"on the reused instance differs from the reference: {text}"
                    )
                checked += 1
        for i, (task_id, seed) in enumerate(pairs):
            obs = await env.reset(task_id, seed)
            got_reset = plain(reset_outcome(obs, fingerprint(await env.snapshot())))
            found = first_difference(plain({k: refs[i][0][k] for k in got_reset}), got_reset)
            if found is not None:
                path, ref, dirty = found
                raise CheckFailed(
                    f"reset({task_id}, {seed}) after episodes of other tasks and families "
                    f"differs from the reference at {path}: reference {short(ref)}, "
                    f"reused {short(dirty)}"
                )
    finally:
        await env.close()
    return checked


async def _interleaved(target: QATarget, a: Records, b: Records) -> int:
    """Replay the action logs of two solo episodes on two instances, alternating steps."""
    envs = [target.factory(), target.factory()]
    logs = [a[:-1], b[:-1]]
    try:
        for env, log in zip(envs, logs, strict=True):
            await env.reset(log[0]["task_id"], log[0]["seed"])
        compared = 0
        for step in range(1, max(len(a), len(b)) - 1):
            for env, log in zip(envs, logs, strict=True):
                if step >= len(log):
                    continue
                result = await env.step(ACTION_ADAPTER.validate_python(log[step]["action"]))
                got = step_outcome(result, fingerprint(await env.snapshot()))
                if canonical_json(got) != canonical_json({k: log[step][k] for k in got}):
                    raise CheckFailed(
                        f"interleaved instances diverge from solo runs at step "
                        f"{step} of {log[0]['task_id']}"
                    )
                compared += 1
        return compared
    finally:
        for env in envs:
            await env.close()


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    prestart(target)
    pairs = _pairs(target, opts)
    others = _other_tasks(target, pairs, opts.seed)
    refs, where = _references(target, pairs)
    dirty = run_async(_dirty(target, pairs, others, refs))
    interleaved = sum(
        run_async(_interleaved(target, refs[i], refs[i + 1]))
        for i in range(0, min(4, len(refs)) - 1, 2)
    )
    metrics = {"episodes_after_dirt": dirty, "interleaved_steps": interleaved, "references": where}
    return (
        f"{dirty} episodes on a reused instance after dirty episodes of other tasks match "
        f"the references step for step, and so do {len(pairs)} resets after them; "
        f"{interleaved} interleaved steps match solo runs; {where}",
        metrics,
    )
