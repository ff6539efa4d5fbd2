"""The wire protocol of ``gymforge serve``: one WebSocket session per episode stream.

Transport: text frames, each one JSON object (UTF-8, ASCII-escaped, no NaN/infinity). The
client speaks first after the server's ``hello``; every client message gets exactly one
reply, in order. ``id`` (an integer or a string) is echoed in the reply when given.

Client -> server (``type``):

=================  ==========================================================  ==============
``reset``          ``task_id``, ``seed``; ``state`` (bool) asks for the snapshot   ``reset_result``
``step``           ``action`` (a ToolCall/Reply/Invalid); ``state`` as above       ``step_result``
``snapshot``       --                                                              ``state``
``oracle_action``  the reference solution's next action (QA hooks only)            ``action``
``policy_start``   ``case``, ``task_id``, ``seed``: run a red-team case server-side ``ok``
``policy_act``     the started case's next action, on the last observation         ``action``
``inject``         ``fault_plan`` and/or ``crash_tools`` (fault injection only)     ``ok``
``ping``           --                                                              ``pong``
``close``          end the session; the server then closes with 1000               ``closed``
=================  ==========================================================  ==============

A ``step_result``'s ``info`` is what ``gymforge.trajectory.redact.public_info`` shows: without QA
hooks, only the allow-listed entries and verdict facts (nothing that reveals the answer),
the rest named in ``info["withheld"]``.

Any failure is an ``error`` reply: ``{"type": "error", "id", "code", "message", "fatal"}``.
``fatal`` errors are followed by a close. A frame that is not a message at all (not
UTF-8, not JSON, not an object, nested deeper than ``MAX_DEPTH``, or over
``max_message_bytes``: ``gymforge.serve.frames``) is fatal: the session closes with 1007
(1009 when oversized). Otherwise the session lives on (an unknown type, a message that
breaks its schema, a step before reset and an exception inside the environment are all
non-fatal). Close codes are in ``CLOSE_CODES``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from gymforge.core.env import EnvSpec, StepResult
from gymforge.core.seeding import canonical_json, stable_hash
from gymforge.core.types import Action, Observation, Task
from gymforge.serve.wire import ascii_json, ascii_utf8, json_text
from gymforge.tools.faults import FaultKind, FaultPlan
from gymforge.trajectory.redact import public_info

PROTOCOL_VERSION = 1

CLOSE_NORMAL = 1000
CLOSE_BAD_DATA = 1007
CLOSE_POLICY_VIOLATION = 1008
CLOSE_TOO_BIG = 1009
CLOSE_INTERNAL = 1011
CLOSE_TRY_AGAIN = 1013
CLOSE_IDLE = 4408
CLOSE_CODES: dict[int, str] = {
    CLOSE_NORMAL: "the client sent close, or the server is shutting down",
    CLOSE_BAD_DATA: "a frame that is not a message: not UTF-8 JSON, not an object, too deep",
    CLOSE_POLICY_VIOLATION: "authentication failed (missing/wrong bearer token) or bad Origin",
    CLOSE_TOO_BIG: "a frame over max_message_bytes (after a too_large error), or beyond the "
    "hard transport cap (4x max_message_bytes, no error frame)",
    CLOSE_INTERNAL: "the environment could not be created, or a request timed out",
    CLOSE_TRY_AGAIN: "the server, or this client's share of it, is at capacity",
    CLOSE_IDLE: "idle reaper: no message for idle_timeout seconds",
}

ErrorCode = Literal[
    "bad_json",
    "bad_message",
    "unknown_type",
    "too_large",
    "too_deep",
    "episode_state",
    "unknown_task",
    "env_error",
    "not_applicable",
    "forbidden",
    "unsupported",
    "timeout",
    "unauthorized",
    "capacity",
    "idle_timeout",
]
ERROR_CODES: dict[str, str] = {
    "bad_json": "the frame is not a UTF-8 JSON object (fatal)",
    "bad_message": "the message does not match its schema",
    "unknown_type": "no such message type",
    "too_large": "the message exceeds max_message_bytes; it was not processed (fatal)",
    "too_deep": "the message nests deeper than MAX_DEPTH; it was not processed (fatal)",
    "episode_state": "step/snapshot/oracle before reset or after the end (EpisodeStateError)",
    "unknown_task": "the task id resolves to no task",
    "env_error": "the environment raised; the session survives",
    "not_applicable": "the red-team case cannot be built for this task (AttackNotApplicable)",
    "forbidden": "the server disabled this operation (QA hooks or fault injection off)",
    "unsupported": "the environment lacks what the operation needs (no toolset, no case)",
    "timeout": "the environment did not answer within request_timeout (fatal)",
    "unauthorized": "missing or wrong bearer token (fatal)",
    "capacity": "max_sessions or max_sessions_per_client reached (fatal)",
    "idle_timeout": "reaped after idle_timeout seconds without a message (fatal)",
}


class _Msg(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int | str | None = None


class ResetMsg(_Msg):
    type: Literal["reset"]
    task_id: str = Field(max_length=10_000)
    seed: int
    state: bool = False


class StepMsg(_Msg):
    type: Literal["step"]
    action: Action
    state: bool = False


class SnapshotMsg(_Msg):
    type: Literal["snapshot"]


class OracleActionMsg(_Msg):
    type: Literal["oracle_action"]


class PolicyStartMsg(_Msg):
    type: Literal["policy_start"]
    case: str
    task_id: str = Field(max_length=10_000)
    seed: int


class PolicyActMsg(_Msg):
    type: Literal["policy_act"]


class FaultPlanModel(BaseModel):
    """``FaultPlan`` on the wire; ``forced`` entries are ``[tool, call_index, kind]``."""

    model_config = ConfigDict(extra="forbid")

    rates: dict[FaultKind, float] = Field(default_factory=dict)
    tools: list[str] | None = None
    forced: list[tuple[str, int, FaultKind]] = Field(default_factory=list)

    def to_plan(self) -> FaultPlan:
        tools = None if self.tools is None else frozenset(self.tools)
        return FaultPlan(dict(self.rates), tools, tuple(self.forced))

    @classmethod
    def of(cls, plan: FaultPlan) -> FaultPlanModel:
        tools = None if plan.tools is None else sorted(plan.tools)
        return cls(rates=dict(plan.rates), tools=tools, forced=list(plan.forced))


class InjectMsg(_Msg):
    """Replace this session's fault plan and/or make tools crash (``[]`` restores them)."""

    type: Literal["inject"]
    fault_plan: FaultPlanModel | None = None
    crash_tools: list[str] | None = None


class PingMsg(_Msg):
    type: Literal["ping"]


class CloseMsg(_Msg):
    type: Literal["close"]


ClientMessage = Annotated[
    ResetMsg
    | StepMsg
    | SnapshotMsg
    | OracleActionMsg
    | PolicyStartMsg
    | PolicyActMsg
    | InjectMsg
    | PingMsg
    | CloseMsg,
    Field(discriminator="type"),
]
CLIENT_ADAPTER: TypeAdapter[Any] = TypeAdapter(ClientMessage)
MESSAGE_TYPES: tuple[str, ...] = (
    "reset",
    "step",
    "snapshot",
    "oracle_action",
    "policy_start",
    "policy_act",
    "inject",
    "ping",
    "close",
)


# ---- server messages (documented for /schema; built as plain dicts on the hot path) ------
class _Reply(BaseModel):
    id: int | str | None = None


class TaskView(BaseModel):
    """A task as the wire shows it: the hidden truth replaced by its SHA-256 digest."""

    task_id: str
    family: str
    prompt: str
    truth: dict[str, str]
    params: dict[str, Any] = Field(default_factory=dict)
    difficulty: int = 0
    split: Literal["train", "heldout"] = "train"


class HelloReply(_Reply):
    type: Literal["hello"]
    protocol: int
    session: str
    env: dict[str, str]
    limits: dict[str, float]


class ResetReply(_Reply):
    type: Literal["reset_result"]
    observation: Observation
    task: TaskView | None = None
    state: dict[str, Any] | None = None
    server_ms: float = 0.0


class StepReply(_Reply):
    type: Literal["step_result"]
    observation: Observation
    reward: float
    reward_components: dict[str, float]
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    timing: dict[str, float]
    state: dict[str, Any] | None = None
    server_ms: float = 0.0


class StateReply(_Reply):
    type: Literal["state"]
    state: dict[str, Any]


class ActionReply(_Reply):
    type: Literal["action"]
    action: Action


class SimpleReply(_Reply):
    type: Literal["ok", "pong", "closed"]


class ErrorReply(_Reply):
    type: Literal["error"]
    code: ErrorCode
    message: str
    fatal: bool = False


ServerMessage = Annotated[
    HelloReply | ResetReply | StepReply | StateReply | ActionReply | SimpleReply | ErrorReply,
    Field(discriminator="type"),
]


def protocol_json_schema() -> dict[str, Any]:
    """JSON Schemas of both directions, plus the close and error code tables."""
    return {
        "protocol": PROTOCOL_VERSION,
        "client_message": CLIENT_ADAPTER.json_schema(),
        "server_message": TypeAdapter(ServerMessage).json_schema(),
        "close_codes": {str(k): v for k, v in CLOSE_CODES.items()},
        "error_codes": ERROR_CODES,
    }


# ---- encoding helpers shared by server and client ----------------------------------------
def dumps(message: dict[str, Any], dumped: Collection[str] = ()) -> str:
    """Wire encoding: ASCII-escaped (lone surrogates survive), NaN refused (ValueError).

    orjson writes it where its text is provably the same (``gymforge.serve.wire``; the keys
    in ``dumped`` hold values made by pydantic's ``model_dump(mode="json")``); otherwise
    the C encoder is called directly (what ``JSONEncoder.encode`` does after building a
    float formatter per call)."""
    fast = ascii_json(message, dumped)
    return json_text(message) if fast is None else fast


def dumps_utf8(message: dict[str, Any], dumped: Collection[str] = ()) -> bytes:
    """``dumps(message, dumped)`` encoded (ASCII: its UTF-8 is its bytes), from orjson's
    bytes without a text between where they are it (``wire.ascii_utf8``)."""
    fast = ascii_utf8(message, dumped)
    return json_text(message).encode() if fast is None else fast


def error(code: ErrorCode, message: str, msg_id: Any = None, fatal: bool = False) -> str:
    return dumps(
        {"type": "error", "id": msg_id, "code": code, "message": message[:2000], "fatal": fatal}
    )


_TRUTH_DIGESTS: dict[tuple[str, str], str] = {}


def task_view(task: Task, truth_digest: bool) -> dict[str, Any]:
    """``task`` for the wire: everything but the hidden truth. With ``truth_digest`` (QA
    hooks on) the truth becomes its digest (equal truths give equal digests, so duplicate
    audits still work remotely); otherwise ``{}``: an unsalted digest of a small truth (a
    number, a word) is inverted by hashing guesses."""
    data = task.model_dump(mode="json")
    if not truth_digest:
        data["truth"] = {}
        return data
    key = (task.task_id, task.prompt)  # ids resolve deterministically; memoised per process
    digest = _TRUTH_DIGESTS.get(key)
    if digest is None:
        if len(_TRUTH_DIGESTS) > 100_000:
            _TRUTH_DIGESTS.clear()
        digest = _TRUTH_DIGESTS[key] = stable_hash(canonical_json(task.truth)).hex()
    data["truth"] = {"sha256": digest}
    return data


def spec_json(spec: EnvSpec) -> dict[str, str]:
    return {
        "id": spec.id,
        "version": spec.version,
        "renderer_version": spec.renderer_version,
        "description": spec.description,
    }


def observation_dump(obs: Observation) -> dict[str, Any]:
    """``obs.model_dump(mode="json")``: its serializer called as ``model_dump`` calls it,
    with every option at its default, without ``model_dump``'s keyword pass-through (a
    third of the dump's cost; tests/serve/test_serve_wire.py holds the two equal). Anything
    but an ``Observation`` itself (a subclass may dump itself its own way, hiding a field)
    is dumped by its own ``model_dump``."""
    if type(obs) is not Observation:
        return obs.model_dump(mode="json")
    dumped: dict[str, Any] = obs.__pydantic_serializer__.to_python(obs, mode="json")
    return dumped


def step_reply(result: StepResult, reveal: bool) -> dict[str, Any]:
    """A step's outcome for the wire, a ``step_result`` (without ``id``, ``state`` and
    ``server_ms``): its ``info`` as ``public_info`` shows it (whole only when ``reveal``,
    i.e. QA hooks on; see ``gymforge.trajectory.redact``)."""
    return {
        "type": "step_result",
        "observation": observation_dump(result.observation),
        "reward": result.reward,
        "reward_components": result.reward_components,
        "terminated": result.terminated,
        "truncated": result.truncated,
        "info": public_info(result.info, reveal),
        "timing": result.timing,
    }


def step_from_json(data: dict[str, Any]) -> StepResult:
    """Rebuild the ``StepResult`` exactly (the reward is checked against its components)."""
    timing = dict(data.get("timing") or {})
    if "server_ms" in data:
        timing["server_ms"] = data["server_ms"]
    return StepResult(
        observation=Observation.model_validate(data["observation"]),
        reward=data["reward"],
        reward_components=data["reward_components"],
        terminated=data["terminated"],
        truncated=data["truncated"],
        info=data["info"],
        timing=timing,
    )
