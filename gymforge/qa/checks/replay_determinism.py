"""replay_determinism: same seed and action log, same states, observations and rewards.

Episodes from the oracle and the random policy (which emits invalid and malformed actions)
over many tasks and seeds are sealed into trajectory form and replayed on a *fresh*
instance; every step must match. Episodes with injected faults are counted and reported.
A few of them (up to ``FRESH_EPISODES`` per policy within ``FRESH_STEPS`` steps, those with
injected faults first) are replayed again in a fresh process with
another ``PYTHONHASHSEED`` and the wall clock shifted by weeks (``gymforge.qa.fresh``): an
RNG seeded from ``hash()``, or a date or seconds value in an observation (from the
environment or from a tool subprocess it starts, such as an MCP server), diverges there.
Tool subprocesses the shifted clock cannot reach are named in the details and in the
``clock_not_shifted_in`` metric.
On such a divergence a second process with the real clock tells the two causes apart.

What it cannot catch: nondeterminism that no replay here triggers (a race that needs
concurrency, a clock read only on some dates, a dependency on the machine, the user or the
files around it); and, for factories without an import path, anything that needs another
process (the details then say the fresh-process replay did not run).
"""

from __future__ import annotations

from typing import Any

from gymforge.qa.checks.common import (
    CheckFailed,
    QAOptions,
    first_difference,
    jobs,
    play_many,
    run_async,
    short,
)
from gymforge.qa.fresh import FreshProcess, FreshProcessError, prestart
from gymforge.qa.target import QATarget
from gymforge.rollout.replay import replay_episode
from gymforge.trajectory.io import seal_episode, sealed_log

NAME = "replay_determinism"
FRESH_EPISODES = 3
FRESH_STEPS = 80


async def _replay_all(
    target: QATarget, episodes: list[list[dict[str, Any]]]
) -> tuple[int, str | None]:
    """Replay each episode on its own fresh instance (the episodes were recorded on one
    reused instance, so state that survives ``reset`` shows up as a divergence too)."""
    steps = 0
    for records in episodes:
        env = target.factory()
        try:
            n, divergence = await replay_episode(env, sealed_log(records))
        finally:
            await env.close()
        steps += n
        if divergence is not None:
            return steps, divergence.describe()
    return steps, None


def _replay_in(
    proc: FreshProcess, episodes: list[list[dict[str, Any]]]
) -> tuple[int, int | None, str | None]:
    """Replay ``episodes`` in ``proc``: (steps, index of the first diverging, its report)."""
    paths = []
    for i, records in enumerate(episodes):
        path = proc.workdir / f"replay-{i}.jsonl"
        path.write_text("".join(line + "\n" for line in seal_episode(records)), encoding="utf-8")
        paths.append(str(path))
    (answer,) = proc.request("replay", [{"paths": paths}])
    if "error" in answer:
        return 0, 0, f"the replay raised {answer['error']}"
    steps = 0
    for i, episode in enumerate(answer["episodes"]):
        steps += episode["steps"]
        if episode["divergence"]:
            return steps, i, _describe(episode["divergence"])
    return steps, None, None


def _describe(d: dict[str, Any]) -> str:
    """A divergence, down to the first differing value inside the field."""
    found = first_difference(d["recorded"], d["replayed"])
    path, recorded, replayed = found or ("", d["recorded"], d["replayed"])
    where = d["field"] + (f".{path}" if path and path != "value" else "")
    return (
        f"episode {d['episode_id']} ({d['task_id']}, seed {d['seed']}) diverges at step "
        f"{d['step']}, {where}: recorded {short(recorded)}, replayed {short(replayed)}"
    )


def _cross_process(target: QATarget, picked: list[list[dict[str, Any]]]) -> tuple[str, int]:
    """Replay ``picked`` in the run's fresh process; raise CheckFailed on a divergence."""
    try:
        proc = target.fresh_process()
    except FreshProcessError as err:
        return f"; not replayed in a fresh process: {err}", 0
    try:
        steps, bad, report = _replay_in(proc, picked)
    except FreshProcessError as err:
        raise CheckFailed(f"the fresh-process replay failed: {err}") from err
    if bad is None:
        return f"; {len(picked)} of them ({steps} steps) also in {proc.describe()}", steps
    cause = ""
    if proc.clock_shift:
        plain = FreshProcess(proc.ref, shift_clock=False)
        try:
            _, again, _ = _replay_in(plain, [picked[bad]])
        except FreshProcessError:
            again = None
        finally:
            plain.close()
        cause = (
            " (it diverges with the real clock too: state depends on the process, e.g. "
            "hash() seeding)"
            if again is not None
            else " (only with the clock shifted: the environment or a tool it starts reads "
            "the wall clock)"
        )
    raise CheckFailed(
        f"replay diverged in {proc.describe()}{cause}: {report}",
        {"fresh_process": proc.describe()},
    )


def _pick(played: list[list[dict[str, Any]]]) -> list[list[dict[str, Any]]]:
    """Up to ``FRESH_EPISODES`` episodes for the fresh process, those with injected faults
    first, within ``FRESH_STEPS`` steps (at least one episode, however long)."""
    faulted = [e for e in played if any("fault" in r.get("info", {}) for r in e[:-1])]
    ordered = faulted + [e for e in played if e not in faulted]
    out: list[list[dict[str, Any]]] = []
    steps = 0
    for episode in ordered:
        if len(out) == FRESH_EPISODES or (out and steps + len(episode) > FRESH_STEPS):
            continue
        out.append(episode)
        steps += len(episode)
    return out


def run(target: QATarget, opts: QAOptions) -> tuple[str, dict[str, Any]]:
    prestart(target)
    pairs = jobs(target, opts.episodes, opts.seed, "all")
    episodes = []
    policies = ["random"] + (["oracle"] if target.has_oracle else [])
    picked = []
    for policy in policies:
        played = run_async(play_many(target, policy, pairs))
        episodes += played
        picked += _pick(played)
    faulted = sum(any("fault" in r.get("info", {}) for r in e[:-1]) for e in episodes)
    steps, divergence = run_async(_replay_all(target, episodes))
    metrics = {"episodes": len(episodes), "steps": steps, "faulted_episodes": faulted}
    if divergence:
        raise CheckFailed(f"replay diverged: {divergence}", metrics)
    fresh_note, fresh_steps = _cross_process(target, picked)
    metrics["fresh_process_steps"] = fresh_steps
    if target.fresh_unshifted():
        metrics["clock_not_shifted_in"] = target.fresh_unshifted()
    return (
        f"{len(episodes)} episodes ({', '.join(policies)}; {faulted} with injected faults), "
        f"{steps} steps replayed identically on a fresh instance{fresh_note}",
        metrics,
    )
