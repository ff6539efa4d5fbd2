"""What QA needs from a served environment, on the client side.

The server must be started with ``--qa-hooks`` (off by default, since the oracle, plans,
red-team cases and truth digests reveal hidden truth); without it the checks that need
them fail with that reason.

- ``RemoteToolset``: the server's tool names, schemas and write flags (the ``state``
  red-team attacks and the truncation staller read them). ``set_fault_plan`` and replacing
  tools with crashing ones (``error_paths``) are forwarded as an ``inject`` message before
  the session's next request, so the faults fire in the server's real toolset, on this
  session only. A server started with ``--no-fault-injection`` refuses them: the check then
  fails loudly instead of passing without having injected anything.
- ``RemoteCasePolicy``: an environment-specific red-team case is Python code that may read
  the environment's internals, so it cannot cross the wire; it runs *on the server*, bound
  to this session's environment (``policy_start`` / ``policy_act``), while the episode itself
  is stepped and judged through the ordinary client path.
- ``profile_from_metadata``: the ``QAProfile`` rebuilt from ``/metadata``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, runtime_checkable

from pydantic import TypeAdapter

from gymforge.core.policy import EpisodeContext, PolicyTurn, scripted_env
from gymforge.core.types import Action, Observation
from gymforge.qa_profile import Baselines, QAProfile, RedTeamCase, ThroughputBudget
from gymforge.serve.http import RemoteError
from gymforge.serve.protocol import FaultPlanModel
from gymforge.tools.faults import FaultPlan

ACTION: TypeAdapter[Action] = TypeAdapter(Action)


@dataclass(frozen=True)
class RemoteTool:
    """A server tool as the client knows it. ``fn`` is set only by fault injection (any
    replacement function means "make this tool crash on the server")."""

    name: str
    description: str
    writes: bool
    schema: dict[str, Any]
    fn: Callable[..., Any] | None = None
    error_effects: frozenset[str] = frozenset()  # not served: a remote tool claims none
    ends_episode: bool = False  # not served either: QA's staller may pick a remote one


class RemoteToolset:
    """The ``toolset`` attribute of a remote environment (see the module docstring)."""

    def __init__(self, env: Any, tools: list[dict[str, Any]], injectable: bool) -> None:
        self._env = env
        self._injectable = injectable
        self._original = {
            t["name"]: RemoteTool(t["name"], t["description"], t["writes"], t["schema"])
            for t in tools
        }
        self._tools = dict(self._original)

    @property
    def tools(self) -> dict[str, RemoteTool]:
        return self._tools

    @tools.setter
    def tools(self, new: dict[str, Any]) -> None:
        crash = sorted(
            n for n, t in new.items() if n in self._original and getattr(t, "fn", None) is not None
        )
        if crash:
            self._need()
        self._tools = dict(new)
        if crash or self._injectable:
            self._env._pending["crash_tools"] = crash

    @property
    def schemas(self) -> tuple[dict[str, Any], ...]:
        return tuple(t.schema for t in self._original.values())

    def set_fault_plan(self, plan: FaultPlan) -> None:
        """Replace this session's fault plan (it lasts until the next reset, as locally)."""
        self._need()
        self._env._pending["fault_plan"] = FaultPlanModel.of(plan).model_dump(mode="json")

    def _need(self) -> None:
        if not self._injectable:
            raise RemoteError(
                "fault injection is disabled on this server (started with "
                "--no-fault-injection); QA's injected faults cannot run",
                "forbidden",
            )


@runtime_checkable
class ServedSession(Protocol):
    """A client environment whose session can carry server-side policy messages
    (``RemoteEnvironment``)."""

    async def _policy_request(self, message: dict[str, Any]) -> dict[str, Any]: ...


class RemoteCasePolicy:
    """Drives a server-side red-team case for one episode on a remote environment."""

    checkpoint = "redteam"
    scripted = True  # it drives a server-side attack through the session the runner hands it

    def __init__(self, case: str) -> None:
        self.case = case
        self.name = f"redteam:{case}"

    async def start(self, ctx: EpisodeContext) -> None:
        env = scripted_env(ctx, f"red-team case {self.case!r}")
        if not isinstance(env, ServedSession):
            raise RemoteError(f"red-team case {self.case!r} runs only on a served environment")
        self._request = env._policy_request
        await self._request(
            {"type": "policy_start", "case": self.case, "task_id": ctx.task_id, "seed": ctx.seed}
        )

    async def act(self, observation: Observation) -> PolicyTurn:
        reply = await self._request({"type": "policy_act"})
        return PolicyTurn(ACTION.validate_python(reply["action"]))


def profile_from_metadata(data: dict[str, Any] | None) -> QAProfile:
    """The server environment's ``QAProfile``; red-team cases become ``RemoteCasePolicy``s."""
    if data is None:
        return QAProfile()
    cases = tuple(
        RedTeamCase(c["name"], partial(RemoteCasePolicy, c["name"]), c.get("description", ""))
        for c in data["redteam"]
    )
    return QAProfile(
        verifier_kinds=tuple(data["verifier_kinds"]),
        redteam=cases,
        baselines=Baselines(**data["baselines"]),
        throughput=ThroughputBudget(**data["throughput"]),
        family_weights=data["family_weights"],
        family_share_tolerance=data["family_share_tolerance"],
        max_duplicate_rate=data["max_duplicate_rate"],
        success_band=(float(data["success_band"][0]), float(data["success_band"][1])),
        not_applicable=dict(data["not_applicable"]),
    )
