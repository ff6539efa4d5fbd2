"""What a server publishes about its environment, read once from a probe instance.

``EnvCatalog`` builds ``GET /metadata`` (spec, budget, tool schemas with write flags, task
families with their difficulty levels and knobs, the held-out split, datasets, the QA
profile with verifier kinds and red-team case names, whether an oracle exists) and answers
the task operations behind ``POST /tasks/{op}``, which let a client-side ``TaskSource``
proxy (and every training path that drives one) run against the server's real families:

- ``sample``: ``{n, seed, split, difficulties?, families?, with_tasks?}`` ->
  ``{"task_ids": [...], "tasks"?: [TaskView]}`` (``with_tasks`` saves the resolves that
  usually follow a sample)
- ``resolve``: ``{task_id}`` -> ``{"task": TaskView}`` (truth replaced by its digest with
  QA hooks on, by ``{}`` otherwise)
- ``heldout``: ``{family, params, region?}`` -> ``{"heldout": bool}``
- ``family``: ``{family, method, ...}`` -> ``{"result": ...}`` for ``params_for``,
  ``difficulty``, ``neighbors``, ``variant_id`` and ``contains``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from gymforge.core.capabilities import BUDGET, ORACLE, ORACLE_PLAN, TOOLSET, supported
from gymforge.core.env import Environment
from gymforge.core.errors import UnknownTaskError
from gymforge.qa_profile import QA, QAProfile
from gymforge.registry.handle import task_source
from gymforge.serve.protocol import PROTOCOL_VERSION, spec_json, task_view
from gymforge.tasks.family import ChoiceKnob, IntKnob
from gymforge.tasks.source import TaskSource

MAX_SAMPLE = 100_000


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SampleReq(_Body):
    n: int = Field(ge=0, le=MAX_SAMPLE)
    seed: int
    split: Literal["train", "heldout", "all"] = "train"
    difficulties: list[int] | None = None
    families: list[str] | None = None
    with_tasks: bool = False


class ResolveReq(_Body):
    task_id: str = Field(max_length=10_000)


class HeldoutReq(_Body):
    family: str
    params: dict[str, Any]
    region: str | None = None


class FamilyReq(_Body):
    family: str
    method: Literal["params_for", "difficulty", "neighbors", "variant_id", "contains"]
    difficulty: int | None = None
    seed: int | None = None
    params: dict[str, Any] | None = None


TASK_OPS: dict[str, type[_Body]] = {
    "sample": SampleReq,
    "resolve": ResolveReq,
    "heldout": HeldoutReq,
    "family": FamilyReq,
}


class OpError(ValueError):
    """A task operation that cannot be answered (bad arguments); HTTP 400."""


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return repr(value)


def _knob(knob: Any) -> dict[str, Any]:
    if isinstance(knob, IntKnob):
        return {"kind": "int", "lo": knob.lo, "hi": knob.hi}
    if isinstance(knob, ChoiceKnob):
        return {"kind": "choice", "values": [_jsonable(v) for v in knob.values]}
    return {"kind": type(knob).__name__}


def _tasks_json(tasks: TaskSource) -> dict[str, Any]:
    families = {}
    for name, fam in sorted(tasks.families.items()):
        families[name] = {
            "name": fam.name,
            "version": fam.version,
            "levels": {
                str(level): {
                    "knobs": {k: _knob(v) for k, v in sorted(space.knobs.items())},
                    "constrained": getattr(space, "constraint", None) is not None,
                }
                for level, space in sorted(fam.levels.items())
            },
        }
    return {
        "families": families,
        "datasets": [{"name": d.name, "pin": d.pin, "size": len(d.tasks)} for d in tasks.datasets],
        "split": {
            "families": sorted(tasks.split.families),
            "regions": {f: sorted(r) for f, r in sorted(tasks.split.regions.items())},
            "declared": tasks.split.declared,
        },
    }


def _profile_json(qa: QAProfile) -> dict[str, Any]:
    return {
        "verifier_kinds": list(qa.verifier_kinds),
        "redteam": [{"name": c.name, "description": c.description} for c in qa.redteam],
        "baselines": dataclasses.asdict(qa.baselines),
        "throughput": dataclasses.asdict(qa.throughput),
        "family_weights": dict(qa.family_weights) if qa.family_weights is not None else None,
        "family_share_tolerance": qa.family_share_tolerance,
        "max_duplicate_rate": qa.max_duplicate_rate,
        "success_band": list(qa.success_band),
        "not_applicable": dict(qa.not_applicable),
    }


def _tools_json(env: object) -> list[dict[str, Any]] | None:
    found = supported(env, TOOLSET)
    if found is None:
        return None
    return [
        {"name": name, "description": t.description, "writes": t.writes, "schema": t.schema}
        for name, t in found.toolset.tools.items()
    ]


class EnvCatalog:
    """The probe instance and everything derived from it. ``limits`` goes into metadata."""

    def __init__(
        self, factory: Callable[[], Environment], ref: str, *, qa_hooks: bool, fault_injection: bool
    ) -> None:
        self.factory = factory
        self.ref = ref
        self.probe = factory()
        self.spec = self.probe.spec
        self.tasks: TaskSource | None = task_source(self.probe)
        has_qa = supported(self.probe, QA)
        self.profile: QAProfile | None = has_qa.qa if has_qa is not None else None
        self.planner = supported(self.probe, ORACLE_PLAN)
        self.budget = supported(self.probe, BUDGET)
        self.qa_hooks = qa_hooks
        self.fault_injection = fault_injection
        self.tools = _tools_json(self.probe)

    @property
    def has_oracle(self) -> bool:
        return self.qa_hooks and supported(self.probe, ORACLE) is not None

    def metadata(self, limits: dict[str, Any], auth: bool) -> dict[str, Any]:
        budget = self.budget.budget if self.budget is not None else None
        return {
            "protocol": PROTOCOL_VERSION,
            "ref": self.ref,
            "spec": spec_json(self.spec),
            "budget": dataclasses.asdict(budget) if budget is not None else None,
            "has_oracle": self.has_oracle,
            "has_oracle_plan": self.qa_hooks and self.planner is not None,
            "scripted_baselines": ["random", "noop", *(["oracle"] if self.has_oracle else [])],
            "tools": self.tools,
            "tasks": _tasks_json(self.tasks) if self.tasks is not None else None,
            "qa": _profile_json(self.profile) if self.profile is not None else None,
            "server": {
                "qa_hooks": self.qa_hooks,
                "fault_injection": self.fault_injection and self.tools is not None,
                "auth": auth,
                "limits": limits,
            },
        }

    def redteam_case(self, name: str) -> Any:
        cases = self.profile.redteam if self.profile is not None else ()
        return next((c for c in cases if c.name == name), None)

    def oracle_plan(self, task_id: str) -> list[dict[str, Any]] | None:
        if not self.qa_hooks or self.planner is None or self.tasks is None:
            return None
        plan = self.planner.oracle_plan(self.tasks.resolve(task_id))
        return None if plan is None else [a.model_dump(mode="json") for a in plan]

    def task_op(self, op: str, body: _Body) -> dict[str, Any]:
        """Answer one task operation; UnknownTaskError -> 404, OpError -> 400."""
        tasks = self.tasks
        if tasks is None:
            raise OpError(f"{self.spec.id} exposes no task source")
        if isinstance(body, SampleReq):
            ids = tasks.sample(body.n, body.seed, body.split, body.difficulties, body.families)
            if not body.with_tasks:
                return {"task_ids": ids}
            return {
                "task_ids": ids,
                "tasks": [task_view(tasks.resolve(i), self.qa_hooks) for i in ids],
            }
        if isinstance(body, ResolveReq):
            return {"task": task_view(tasks.resolve(body.task_id), self.qa_hooks)}
        if isinstance(body, HeldoutReq):
            if body.region is None:
                return {"heldout": tasks.split.is_heldout(body.family, body.params)}
            pred = tasks.split.regions.get(body.family, {}).get(body.region)
            if pred is None:
                raise OpError(f"no held-out region {body.region!r} for {body.family!r}")
            return {"heldout": bool(pred(body.params))}
        assert isinstance(body, FamilyReq)
        fam = tasks.families.get(body.family)
        if fam is None:
            raise UnknownTaskError(f"unknown task family {body.family!r}")
        return {"result": _family_call(fam, body)}


def _family_call(fam: Any, body: FamilyReq) -> Any:
    def need(value: Any, what: str) -> Any:
        if value is None:
            raise OpError(f"{body.method} needs {what}")
        return value

    try:
        if body.method == "params_for":
            return fam.params_for(need(body.difficulty, "difficulty"), need(body.seed, "seed"))
        if body.method == "difficulty":
            return fam.difficulty(need(body.params, "params"))
        if body.method == "neighbors":
            return fam.neighbors(need(body.params, "params"))
        if body.method == "variant_id":
            return fam.variant_id(need(body.params, "params"), need(body.seed, "seed"))
        level = fam.levels.get(need(body.difficulty, "difficulty"))
        return bool(level is not None and level.contains(need(body.params, "params")))
    except (KeyError, TypeError) as err:
        raise OpError(f"{body.method}: {type(err).__name__}: {err}") from err
