"""The trajectory record schema. One JSON object per line, ``record`` tells the kind.

``StepRecord`` (``"record": "step"``): step 0 is the reset (no action); step k >= 1 is the
k-th action and its outcome. ``EpisodeRecord`` (``"record": "episode"``) closes an episode
with its totals. ``gymforge schema trajectory`` prints the JSON Schema below; the writer
validates every record through these same models.

Integrity: ``digest`` = sha256 of (previous digest + the canonical JSON of this record
without ``digest`` and ``seal``). The chain starts from the empty string at step 0 and ends
at the episode record, so an accidental edit to any field of any record, or a dropped or
reordered step, is caught by ``verify_chain``. Anyone can recompute it, so it proves nothing
against a deliberate edit.

Sealed files (written with a seal key, see ``gymforge.trajectory.seal``): every line also
carries ``seal`` = HMAC-SHA256(key, previous line's seal + the same bytes the digest covers),
one chain over the whole file, and each invocation that wrote to the file ends it with a
``RunSealRecord`` (``"record": "run_seal"``) counting the episodes and records before it and
naming the runs and the configuration.

Run-specific fields, which differ between two runs of the same seed: ``run_id``,
``episode_id``, ``timestamp``, ``timing`` and hence ``digest``. Everything else is
deterministic.
"""

from __future__ import annotations

import hashlib
import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from gymforge.core.errors import IntegrityError
from gymforge.core.seeding import canonical_json
from gymforge.core.types import Action, Message

SCHEMA_VERSION = 1
HEX64 = r"^[0-9a-f]{64}$"


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ObservationRecord(_Record):
    """``tools`` is written as canonical JSON (sorted keys), which reorders each tool's keys
    and so its ``properties``; ``tools_json`` keeps the tools' JSON text exactly as the
    environment gave them, so a prompt can be re-rendered from the record
    (:meth:`tool_specs`)."""

    rendered: list[Message]
    data: dict[str, Any]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tools_json: str | None = None
    tokens: int = Field(ge=0)
    tokenizer: str
    tokens_exact: bool

    def tool_specs(self) -> list[dict[str, Any]]:
        """The tools in the environment's order, keys included."""
        if self.tools_json is not None:
            specs: list[dict[str, Any]] = json.loads(self.tools_json)
            return specs
        return self.tools


class PolicyRecord(_Record):
    """What the policy emitted, verbatim. ``text`` is the completion's text (the message
    content) and ``tool_calls`` the structured calls of a chat completion: replay checks
    that they parse to the step's recorded action. ``tool_format`` names the text format a
    token-in policy parsed its calls from (``hermes``, ``llama3_json``, ``none``); replay
    parses the text the same way."""

    capture_level: Literal["tokens", "logprobs", "text", "none"]
    text: str | None = None
    tool_calls: list[Any] | None = None
    tool_format: Literal["hermes", "llama3_json", "none"] | None = None
    prompt_token_ids: list[int] | None = None
    completion_token_ids: list[int] | None = None
    logprobs: list[float] | None = None
    finish_reason: str | None = None
    model: str | None = None
    weight_version: str | None = None
    model_turns: list[dict[str, Any]] | None = None
    """A harness policy's model requests behind this step (``PolicyTurn.model_turns``)."""


class EpisodeKeys(_Record):
    """The identity fields shared by every record of an episode."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    episode_id: str
    task_id: str
    seed: int
    env_id: str
    env_version: str
    renderer_version: str
    policy_checkpoint: str
    weight_version: str | None = None
    rollout: int = Field(default=0, ge=0)
    sampling_seed: int | None = None


class StepRecord(EpisodeKeys):
    record: Literal["step"] = "step"
    step: int = Field(ge=0)
    observation: ObservationRecord
    action: Action | None
    policy: PolicyRecord | None = None
    tool_result: dict[str, Any] | None = None
    reward: float
    reward_components: dict[str, float]
    terminated: bool
    truncated: bool
    info: dict[str, Any]
    state_fingerprint: str = Field(pattern=r"^sha256:[0-9a-f]{64}$")
    timing: dict[str, float] = Field(default_factory=dict)
    timestamp: float
    digest: str = Field(pattern=HEX64)
    seal: str | None = Field(default=None, pattern=HEX64)


class EpisodeRecord(EpisodeKeys):
    record: Literal["episode"] = "episode"
    family: str
    difficulty: int
    split: Literal["train", "heldout"]
    steps: int = Field(ge=0)
    reward: float
    reward_components: dict[str, float]
    terminated: bool
    truncated: bool
    success: bool
    failure_reason: str | None
    tokens: int = Field(default=0, ge=0)
    timing: dict[str, float] = Field(default_factory=dict)
    timestamp: float
    digest: str = Field(pattern=HEX64)
    seal: str | None = Field(default=None, pattern=HEX64)


class RunSealRecord(_Record):
    """The last line an invocation writes to a sealed file: a seal over the whole file so
    far. ``episodes`` and ``records`` count the episode records and the step + episode
    lines before it; ``run_ids`` are the runs those episodes belong to, in order of first
    appearance; ``config`` is the run's configuration (environment, policy, seed, ...);
    ``key_id`` names the key (an HMAC of a fixed text, not the key).

    ``continued`` marks a run seal that a later invocation (``--resume``, or the re-seal that
    adds ``eval.json``) carried on from: it was the file's last line and is rewritten so
    when that invocation starts writing, so a file cut back to it is unfinished, never
    finished. ``previous_seal`` is the seal of the run seal line before this one (absent for
    the first); ``files`` the sha256 of the run's documents (``manifest.json``,
    ``summary.json``, ``eval.json``, ...) when this seal was written."""

    schema_version: int = SCHEMA_VERSION
    record: Literal["run_seal"] = "run_seal"
    continued: bool = False
    previous_seal: str | None = Field(default=None, pattern=HEX64)
    files: dict[str, Annotated[str, Field(pattern=HEX64)]] | None = None
    run_id: str
    run_ids: list[str]
    episodes: int = Field(ge=0)
    records: int = Field(ge=0)
    config: dict[str, Any]
    key_id: str = Field(pattern=r"^[0-9a-f]{16}$")
    timestamp: float
    digest: str = Field(pattern=HEX64)
    seal: str = Field(pattern=HEX64)


AnyLine = StepRecord | EpisodeRecord | RunSealRecord
TrajectoryLine = Annotated[AnyLine, Field(discriminator="record")]
LINE_ADAPTER: TypeAdapter[AnyLine] = TypeAdapter(TrajectoryLine)
UNSEALED_KEYS = ("digest", "seal")
"""The keys a record's digest and seal do not cover (they are the digest and the seal)."""


def trajectory_json_schema() -> dict[str, Any]:
    schema = LINE_ADAPTER.json_schema()
    schema["title"] = "gymforge trajectory line"
    schema["$id"] = f"urn:gymforge:trajectory:v{SCHEMA_VERSION}"
    return schema


def component_totals(step_components: list[dict[str, float]]) -> dict[str, float]:
    """Per-component sums over an episode's steps, in step order: the episode totals."""
    totals: dict[str, float] = {}
    for components in step_components:
        for name, value in components.items():
            totals[name] = totals.get(name, 0.0) + value
    return totals


def load_line(line: bytes | str) -> Any:
    """A trajectory file's line as JSON, read by ``json.loads``; a line nested deeper than
    that reader's recursion allows is a ``json.JSONDecodeError`` like any other text that
    is not JSON (the reader raises RecursionError for it), so every caller that handles a
    damaged line handles this one."""
    try:
        return json.loads(line)
    except RecursionError:
        text = line if isinstance(line, str) else line.decode("utf-8", "replace")
        raise json.JSONDecodeError("nested too deeply to read", text, 0) from None


def chain_digest(previous: str, record: dict[str, Any]) -> str:
    """The digest of ``record`` (without its ``digest`` and ``seal``) chained onto
    ``previous``."""
    return chain_step(previous, unsealed_json(record))


def unsealed_json(record: dict[str, Any]) -> str:
    """The bytes the digest and the seal of ``record`` cover: its canonical JSON without
    the ``digest`` and ``seal`` keys. IntegrityError when it has none: a file's record
    holding ``NaN`` or an infinity, which Python's JSON reader takes."""
    try:
        return canonical_json({k: v for k, v in record.items() if k not in UNSEALED_KEYS})
    except ValueError as err:
        kind = record.get("record")
        label = f"step {record.get('step')}" if kind == "step" else f"{kind} record"
        raise IntegrityError(
            f"{label} of episode {record.get('episode_id')} holds a value JSON cannot carry: {err}"
        ) from err


def chain_step(previous: str, unsealed: str) -> str:
    """The chain's one formula: SHA-256 of ``previous`` followed by a record's canonical
    JSON without its ``digest`` and ``seal`` keys (``unsealed``)."""
    return hashlib.sha256((previous + unsealed).encode()).hexdigest()
