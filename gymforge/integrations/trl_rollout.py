"""``GymforgeRollout``: a TRL ``rollout_func`` that plays multi-turn gymforge episodes.

TRL 1.16 calls ``rollout_func(prompts, trainer)`` with the batch's prompts, each already
repeated ``num_generations`` times in a row, and expects a dict with one entry per prompt:
``prompt_ids``, ``completion_ids`` and ``logprobs`` (required), ``env_mask`` (1 = model
token, 0 = environment token) and any extra keys, which TRL forwards to the reward
functions. Here every prompt becomes one gymforge episode:

1. The prompt is mapped back to its dataset row ``(task_id, seed)`` through the rows the
   rollout was built with (TRL hands ``rollout_func`` prompts, not rows). Rows whose prompts
   are identical are interchangeable from the policy's side; they are used in turn.
2. The episodes run through ``gymforge.rollout.runner.run`` (concurrently, each on its own
   environment instance, with infrastructure retries and durable trajectory files) with a
   policy from ``policy`` (any zero-argument ``Policy`` factory). By default that is an
   ``OpenAIPolicyFactory`` pointed at the trainer's vLLM server (TRL server mode exposes
   vLLM's OpenAI-compatible API), asking for exact token ids and logprobs, with the
   trainer's global step as weight version.
3. Each finished episode is spliced into one TRL row by
   ``gymforge.trajectory.export.trl_row``: the server's exact tokens, environment tokens
   between turns masked out. An episode below token capture or with a chat template that
   is not prefix-stable is refused with an error rather than trained on re-tokenised text.

Extra keys returned: ``env_reward``, ``env_reward_components`` and ``env_success``, which
:class:`~gymforge.integrations.trl.GymforgeReward` passes through instead of grading again.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import InfraError, UserError
from gymforge.core.seeding import canonical_json
from gymforge.rollout.policy import Policy
from gymforge.rollout.runner import Job, run
from gymforge.trajectory.export import trl_row
from gymforge.trajectory.io import read_episodes

PolicyFactory = Callable[[], Policy]
OUTPUT_KEYS = (
    "prompt_ids",
    "completion_ids",
    "logprobs",
    "env_mask",
    "env_reward",
    "env_reward_components",
    "env_success",
)


def prompt_key(prompt: Any) -> str:
    """A canonical key for a TRL prompt: text, or chat messages (role and content only)."""
    if isinstance(prompt, str):
        return canonical_json(prompt)
    if isinstance(prompt, Sequence):
        return canonical_json(
            [[m.get("role"), m.get("content")] for m in prompt if isinstance(m, Mapping)]
        )
    raise TypeError(f"unsupported prompt type {type(prompt).__name__}")


class GymforgeRollout:
    """A ``rollout_func`` for ``GRPOTrainer``; see the module docstring.

    Args:
        env: environment id or zero-argument factory.
        rows: the dataset rows (a ``datasets.Dataset`` or dicts with ``prompt``, ``task_id``,
            ``seed``) whose prompts the trainer will pass; add more with :meth:`index`.
        policy: a zero-argument ``Policy`` factory; None builds an ``OpenAIPolicyFactory``
            for the trainer's vLLM server on the first call.
        concurrency: episodes in flight at once.
        trajectory_dir: keep each call's ``trajectories.jsonl`` under this directory
            (``call_000000/`` ...); None uses a temporary directory.
        server: options for the default policy: ``base_url``, ``model`` and any
            ``OpenAIPolicyFactory``/``Sampling`` setting (``temperature``, ``max_tokens``...).
    """

    def __init__(
        self,
        env: str | Callable[[], Environment],
        rows: Iterable[Mapping[str, Any]] = (),
        *,
        policy: PolicyFactory | None = None,
        concurrency: int = 32,
        trajectory_dir: str | Path | None = None,
        episode_timeout_s: float | None = None,
        max_retries: int = 2,
        **server: Any,
    ) -> None:
        from gymforge.integrations.trl import env_factory

        self.env_factory = env_factory(env)
        self.policy = policy
        self.concurrency = max(1, concurrency)
        self.trajectory_dir = Path(trajectory_dir) if trajectory_dir is not None else None
        self.episode_timeout_s = episode_timeout_s
        self.max_retries = max_retries
        self.server = server
        self.calls = 0
        self._rows: dict[str, dict[tuple[str, int], None]] = {}  # ordered sets
        self._turn: dict[str, int] = {}
        self._loop: asyncio.Runner | None = None
        self.index(rows)

    def index(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Make the prompts of ``rows`` resolvable to their ``(task_id, seed)``."""
        for row in rows:
            pair = (str(row["task_id"]), int(row["seed"]))
            self._rows.setdefault(prompt_key(row["prompt"]), {})[pair] = None

    def resolve(self, prompt: Any) -> tuple[str, int]:
        """The ``(task_id, seed)`` to play for ``prompt`` (rows sharing a prompt in turn)."""
        key = prompt_key(prompt)
        pairs = list(self._rows.get(key, ()))
        if not pairs:
            raise UserError(
                "rollout_func got a prompt that is in none of its rows; build GymforgeRollout "
                "with the dataset the trainer uses (or call .index(dataset)): "
                f"{key[:120]}"
            )
        turn = self._turn.get(key, 0)
        self._turn[key] = turn + 1
        return pairs[turn % len(pairs)]

    # ---- the TRL entry point ------------------------------------------------------------
    def __call__(self, prompts: list[Any], trainer: Any = None) -> dict[str, list[Any]]:
        """Play one episode per prompt; return the TRL rollout dict (see module docstring)."""
        policy = self.policy or self._default_policy(trainer)
        if self._loop is None:  # one loop for the run: the policy's HTTP client is reused
            self._loop = asyncio.Runner()
        out = self._loop.run(self.rollout(prompts, policy))
        eos = _eos_id(trainer)
        for i, ids in enumerate(out["completion_ids"]):
            if not ids:  # TRL reads ids[-1]; an empty completion gets a masked EOS
                ids.append(eos)
                out["env_mask"][i].append(0)
                out["logprobs"][i].append(0.0)
        return out

    async def rollout(self, prompts: Sequence[Any], policy: PolicyFactory) -> dict[str, list[Any]]:
        """The async core of ``__call__``: episodes for ``prompts``, spliced into rows."""
        call, self.calls = self.calls, self.calls + 1
        base = call * len(prompts)  # distinct rollout numbers -> distinct sampling seeds
        runs: list[str] = []
        jobs: list[Job] = []
        for i, prompt in enumerate(prompts):
            key = prompt_key(prompt)
            if not runs or runs[-1] != key:  # a new group: pick its row once
                task_id, seed = self.resolve(prompt)
            runs.append(key)
            jobs.append(Job(i, task_id, seed, base + i))
        with tempfile.TemporaryDirectory(prefix="gymforge-rollout-") as tmp:
            out_dir = self.trajectory_dir / f"call_{call:06d}" if self.trajectory_dir else Path(tmp)
            result = await run(
                self.env_factory,
                policy,
                jobs,
                out_dir,
                concurrency=self.concurrency,
                episode_timeout_s=self.episode_timeout_s,
                max_retries=self.max_retries,
            )
            if result.errors:
                raise InfraError(
                    f"{len(result.errors)} of {len(jobs)} episodes failed after retries; "
                    f"first: {result.errors[0]}"
                )
            logs = {
                (log.end.task_id, log.end.seed, log.end.rollout): log
                for log in read_episodes(out_dir / "trajectories.jsonl")
                if log.end is not None
            }
        out: dict[str, list[Any]] = {k: [] for k in OUTPUT_KEYS}
        for job in jobs:
            log = logs.get(job.key)
            if log is None:
                raise InfraError(f"episode for {job.task_id} rollout {job.rollout} is missing")
            row = trl_row(log)
            if isinstance(row, str):
                raise UserError(
                    f"episode {log.episode_id} cannot be trained on: {row} (the policy must "
                    "capture the server's exact token ids with a prefix-stable chat template)"
                )
            for key in OUTPUT_KEYS[:4]:
                out[key].append(list(row[key]))
            out["env_reward"].append(float(row["reward"]))
            out["env_reward_components"].append(dict(row["reward_components"]))
            out["env_success"].append(bool(row["success"]))
        return out

    # ---- the default policy: the trainer's vLLM server ---------------------------------
    def _default_policy(self, trainer: Any) -> PolicyFactory:
        if trainer is None:
            raise UserError("GymforgeRollout needs a policy factory or the trainer")
        self.policy = openai_policy_for(trainer, **self.server)
        return self.policy

    def close(self) -> None:
        """Close the policy's client (if it has ``aclose``) and the rollout's event loop."""
        if self._loop is None:
            return
        closer = getattr(self.policy, "aclose", None)
        if closer is not None:
            self._loop.run(closer())
        self._loop.close()
        self._loop = None


def openai_policy_for(trainer: Any, **options: Any) -> PolicyFactory:
    """An ``OpenAIPolicyFactory`` for the vLLM server of a TRL trainer in server mode.

    The base URL is ``options["base_url"]``, else ``args.vllm_server_base_url``, else
    ``http://{vllm_server_host}:{vllm_server_port}``, with ``/v1`` appended; the model name
    is the server's (as TRL's client read it) or the trainer's model path. Sampling follows
    the trainer (``temperature``, ``top_p``, ``top_k``, ``max_completion_length`` as
    ``max_tokens`` per turn); the weight version is the trainer's global step.
    """
    from gymforge.rollout.openai_policy import make_openai_policy_factory

    args = trainer.args
    base_url = options.pop("base_url", None) or getattr(args, "vllm_server_base_url", None)
    if not base_url:
        host = getattr(args, "vllm_server_host", "127.0.0.1")
        base_url = f"http://{host}:{getattr(args, 'vllm_server_port', 8000)}"
    base_url = base_url.rstrip("/")
    base_url = base_url if base_url.endswith("/v1") else base_url + "/v1"
    client = getattr(getattr(trainer, "vllm_generation", None), "vllm_client", None)
    model = options.pop("model", None) or getattr(client, "model", None)
    if model is None:
        model = getattr(trainer.model.config, "_name_or_path", None) or "model"
    top_k = getattr(args, "top_k", None)
    settings: dict[str, Any] = {
        "temperature": getattr(args, "temperature", 1.0),
        "top_p": getattr(args, "top_p", None),
        "max_tokens": getattr(args, "max_completion_length", None),
        "extra_body": {"top_k": top_k} if top_k else {},
        "weight_version": lambda: str(trainer.state.global_step),
    }
    settings.update(options)
    return make_openai_policy_factory(f"openai:{model}", base_url, **settings)


def _eos_id(trainer: Any) -> int:
    tokenizer = getattr(trainer, "processing_class", None)
    tokenizer = getattr(tokenizer, "tokenizer", tokenizer)  # a processor wraps its tokenizer
    eos = getattr(tokenizer, "eos_token_id", None)
    return int(eos) if eos is not None else 0
