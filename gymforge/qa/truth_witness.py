"""The truth witness: no episode QA plays may change the hidden truth of its task.

A task's truth is what the verifier compares against. An environment whose tools share a
mutable value with it (a dict or list of ``Task.truth`` handed to the world uncopied, a tool
that "keeps the catalogue in sync") lets an agent rewrite what it is judged by: it sets the
answer, then gives it. Nothing else QA measures sees that when the oracle never makes the
edit, the random agent's edits change nothing its replies are judged on, and the edit does
not show in the world state.

So every episode ``gymforge.qa.episodes.play`` plays (the oracle's, the baselines', every
attack, the fuzzer's, in this process and in the fresh one) is witnessed:

- before it, the task the environment's source (``tasks``) resolves the id to, and the
  canonical JSON of its truth; the witness holds that task, so a source that hands back a
  task while it is alive (``TaskSource.resolve``) gives the environment this very object;
- after it, the truth of the task the source resolves the id to now, and of the task the
  environment holds (``task``, when it is another object), must have that canonical JSON;
- and the truth the environment judged the episode with (``judged_truth``: a ``ToolEnv``'s
  ``truth``, the model it parsed ``Task.truth`` into), dumped, must be that task's truth: a
  tool that edits ``self.truth`` (a mutable model parsed for the episode, a frozen one the
  family vouched for and every episode of the task shares) edits what the verifier may
  read without touching ``Task.truth``.

The rule is the one ``TaskSource`` states (an environment must not mutate ``Task.truth``), so
no honest environment breaks it; truths are compared as canonical JSON (a truth strict JSON
has no text for, a set or a NaN, by one of the witness's own: :func:`witness_json`), so two tasks
rebuilt alike (a served environment's task view, resolved twice) compare equal, and the
judged truth, dumped, is the task's truth itself or else is compared with a fresh parse of
that truth dumped the same way (a truth that does not round-trip, a dataset row's, is not an
edit). The cost is one ``resolve`` and three canonical JSON texts of the truth per episode
(a parse more where a judged truth does not dump to the task's own; a few percent of a QA
run on the built-ins): no episode is added. A difference raises ``TruthEdited`` (a
``CheckFailed``), which fails the check that played the episode, naming the first changed
value and the tools the episode ran.

What it cannot see: an edit no QA episode makes (a tool that edits only when given a value
no scripted policy, attack or fuzz case passes it, such as a valid id); an edit to a copy of
the truth that an environment without ``judged_truth`` keeps for itself; an environment
without ``tasks``; episodes QA steps without ``play`` (throughput's, the abandoned episodes
of ``reset_isolation``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from gymforge.core.capabilities import JUDGED_TRUTH, TASK, TASKS, TaskCatalog, supported
from gymforge.core.env import Environment
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Task
from gymforge.qa.findings import CheckFailed, first_difference, short
from gymforge.tasks.truth_dump import dump_truth


class TruthEdited(CheckFailed):
    """An episode changed the hidden truth of its task; the message names the change."""


@dataclass
class TruthWitness:
    """What one episode's task truth was before it (see the module docstring)."""

    task_id: str
    source: TaskCatalog | None
    task: Task | None
    """Held for the episode, so that a source that caches live tasks hands it to ``reset``."""
    before: str | None
    """The canonical JSON of ``task.truth``; None when there is nothing to witness."""

    @classmethod
    def before_episode(cls, env: Environment, task_id: str) -> TruthWitness:
        """The truth of ``task_id`` as ``env``'s task source resolves it now. A source that
        cannot resolve the id leaves the episode unwitnessed: its ``reset`` says why."""
        found = supported(env, TASKS)
        if found is None:
            return cls(task_id, None, None, None)
        try:
            task = found.tasks.resolve(task_id)
        except Exception:  # an unknown id, a source that is down: reset reports it
            return cls(task_id, None, None, None)
        return cls(task_id, found.tasks, task, witness_json(task.truth))

    def after_episode(self, env: Environment, policy: str, records: list[dict[str, Any]]) -> None:
        """Raise ``TruthEdited`` if the truth of the task, as the source resolves it now or
        as ``env`` holds it, is not what it was before the episode, or if the truth ``env``
        judged the episode with dumps neither to that truth nor to a fresh parse of it."""
        if self.before is None or self.source is None:
            return
        edit = Edit(self.task_id, policy, tools_called(records))
        now = self.source.resolve(self.task_id)
        edit.check(self.before, now.truth, "the task its source resolves the id to")
        held = supported(env, TASK)
        task = held.task if held is not None else None
        if task is None or task.task_id != self.task_id:
            task = now
        elif task is not now:
            edit.check(self.before, task.truth, "the task the environment holds")
        judging = supported(env, JUDGED_TRUTH)
        if judging is not None:
            judged = judging.judged_truth
            assert judged is not None  # None is absent (``supported``)
            dumped = dump_truth(judged)
            if witness_json(dumped) != self.before:  # else the task's truth as it was
                fresh = dump_truth(type(judged).model_validate(task.truth))
                edit.check(witness_json(fresh), dumped, "the truth it judged with")


@dataclass(frozen=True)
class Edit:
    """How ``TruthWitness`` words a changed truth: the episode's task, policy and tools."""

    task_id: str
    policy: str
    tools: list[str]

    def check(self, want: str, truth: Any, whose: str) -> None:
        """Raise ``TruthEdited`` unless ``truth``'s text (:func:`witness_json`) is ``want``."""
        got = witness_json(truth)
        if got == want:
            return
        found = first_difference(_read(want), _read(got))
        path, was, now = found if found is not None else ("value", "?", "?")
        raise TruthEdited(
            f"the hidden truth of task {self.task_id} changed during a {self.policy} episode "
            f"({whose}): truth.{path} was {short(was, 80)}, is now {short(now, 80)}; tools "
            f"called: {', '.join(self.tools) or 'none'}. A tool or the verifier writes into a "
            "value it shares with the truth, so an agent can set what it is judged against "
            "(copy what the world takes from the truth; never write the truth)"
        )


def witness_json(truth: Any) -> str:
    """The text a truth is compared by: its canonical JSON, or, for a truth strict JSON has
    no text for (a ``set`` field, which ``dump_truth`` hands on as it is; a float a dataset
    left NaN), one of the witness's own: sets sorted, NaN and infinities as JSON's
    extensions write them, any other value by its type and ``repr``. Such a truth is
    witnessed as any, never a crash of the check that plays its episode."""
    try:
        return canonical_json(truth)
    except (TypeError, ValueError):
        return json.dumps(_plain(truth), sort_keys=True, separators=(",", ":"), allow_nan=True)


def _read(text: str) -> Any:
    """A :func:`witness_json` text read back, NaN and infinities as the words they are (so
    NaN equals NaN where the difference is looked for)."""
    return json.loads(text, parse_constant=str)


def _plain(value: Any) -> Any:
    """``value`` with what JSON cannot hold as JSON that names it (:func:`witness_json`)."""
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=lambda v: json.dumps(v, sort_keys=True, allow_nan=True))
    return f"{type(value).__name__}: {value!r}"


NEVER_RAN = frozenset({"unknown_tool", "invalid_arguments"})
"""Error kinds of a call that never reached the tool's code."""


def tools_called(records: list[dict[str, Any]]) -> list[str]:
    """The tools whose code an episode's step records ran (every call but those refused as
    unknown or invalid), each named once, in order."""
    names: dict[str, None] = {}
    for record in records[1:-1]:
        result = record.get("tool_result") or {}
        if result and (result.get("error") or {}).get("kind") not in NEVER_RAN:
            names.setdefault(str(result.get("tool")), None)
    return list(names)
