"""``GymforgeRollout``: a TRL ``rollout_func`` that plays multi-turn gymforge episodes.

TRL 1.16 calls ``rollout_func(prompts, trainer)`` with the batch's prompts, each already
repeated ``num_generations`` times in a row, and expects a dict with one entry per prompt:
``prompt_ids``, ``completion_ids`` and ``logprobs`` (required), ``env_mask`` (1 = model
token, 0 = environment token) and any extra keys, which TRL forwards to the reward
functions. Here every prompt becomes one gymforge episode:

1. The prompt is mapped back to its dataset row ``(task_id, seed)`` through the rows the
   rollout was built with (TRL hands ``rollout_func`` prompts, not rows). Rows whose prompts
   are identical are interchangeable from the policy's side; they are used in turn.
2. Each prompt's rollout number (which seeds its sampling) is unique over the calls and
   over the trainer's processes (TRL calls ``rollout_func`` on each, and a group can span
   two): the ``k``-th rollout this process plays is numbered ``k * processes + index``.
3. The episodes run through ``gymforge.rollout.runner.run`` on a ``LocalExecutor``
   (concurrently, each on its own environment instance, with infrastructure retries and
   durable trajectory files) with a
   policy from ``policy`` (any zero-argument ``Policy`` factory). By default that is a
   token-in ``vllm:`` policy (:mod:`gymforge.rollout.vllm_policy`) pointed at the trainer's
   vLLM server, so multi-turn episodes are exact by construction, with the trainer's global
   step as weight version; ``policy_kind="openai"`` uses the chat policy instead.
4. Each finished episode is spliced into one TRL row by
   ``gymforge.trajectory.export.trl_row``: the server's exact tokens, environment tokens
   between turns masked out.

**An inexact episode is trained on as far as it is exact.** An episode whose turn k+1's
prompt does not extend turn k's prompt + completion (a chat policy whose server rendered
the transcript again and tokenised the model's text otherwise: use ``vllm:``) is cut to its
turns before turn k+1, and a harness's rewritten history to the branch of its last turn
(``trl_row``'s ``cut``); an episode that ended, counted, before its first model turn was
answered (a first answer too long to wait for: ``turn_timeout``) is a row with no model
token (``no_model_turn``). The row keeps the episode's reward and its place in its group's
statistics: skipped, as the TRL export skips such episodes, a failing episode made inexact
on purpose escaped its penalty (tests/redteam/test_trl_rollout_refusal_escapes_penalty.py).
Every call logs ``gymforge/cut`` and ``gymforge/cut/<reason>``; :attr:`GymforgeRollout.cut`
counts them over the run.

**One bad episode never stops training.** An episode that cannot be trained on at all is
skipped, with its reason: ``below_tokens_capture``, ``logprobs_length_mismatch``, or
``infra_error`` (failed after the runner's retries). TRL needs one row per prompt, so its
row is a **placeholder**: the episode's first prompt ids (or the EOS), one EOS completion
token, ``env_mask`` all zeros (so its completion mask is all zero and it adds nothing to the
loss), and ``env_reward`` None. :class:`~gymforge.integrations.trl.GymforgeReward` returns
None for such a row, and TRL 1.16 treats a row for which every reward function returns None
as unscorable: its reward is NaN in the nan-aware group mean and std (so it is excluded from
its group's advantage statistics) and its advantage is set to 0. Every call logs, through
the trainer's metric log (the channel behind reward functions' ``log_metric``),
``gymforge/refused`` (episodes skipped in the batch) and ``gymforge/refused/<reason>``;
:attr:`GymforgeRollout.refused` counts them over the run. Only a batch in which every
episode is refused raises (``UserError``, with the counts per reason).

Extra keys returned: ``env_reward``, ``env_reward_components``, ``env_success`` (which
``GymforgeReward`` passes through instead of grading again) and ``env_refused`` (the reason,
or None).
"""

from __future__ import annotations

import asyncio
import tempfile
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.core.policy import Policy
from gymforge.core.seeding import canonical_json
from gymforge.integrations.trl_common import env_factory
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.jobs import Job
from gymforge.rollout.runner import run
from gymforge.rollout.spec import RunSpec
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
    "env_refused",
)
REFUSED_METRIC = "gymforge/refused"
CUT_METRIC = "gymforge/cut"


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
            (``call_000000/`` ...; ``process_K/call_000000/`` ... on process K of a
            distributed trainer); None uses a temporary directory.
        server: options for the default policy: ``policy_kind`` (``vllm`` or ``openai``),
            ``base_url``, ``model`` and any policy setting (``temperature``, ``max_tokens``,
            ``tokenizer``...).
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
        self.env_factory = env_factory(env)
        self.env_name = env if isinstance(env, str) else getattr(env, "__name__", "env")
        self.policy = policy
        self.concurrency = max(1, concurrency)
        self.trajectory_dir = Path(trajectory_dir) if trajectory_dir is not None else None
        self.episode_timeout_s = episode_timeout_s
        self.max_retries = max_retries
        self.server = server
        self.calls = 0
        self.played = 0  # rollouts numbered so far, on this process
        self.refused: Counter[str] = Counter()
        self.cut: Counter[str] = Counter()  # episodes trained on in part (module docstring)
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
        eos = _eos_id(trainer)
        before = self.cut.copy()
        out = self._loop.run(self.rollout(prompts, policy, eos, process_of(trainer)))
        cut = self.cut - before  # this call's
        log = getattr(trainer, "_log_metric", None)  # TRL's log_metric behind reward funcs
        if callable(log):
            reasons = Counter(r for r in out["env_refused"] if r is not None)
            log(REFUSED_METRIC, float(sum(reasons.values())))
            for reason, count in sorted(reasons.items()):
                log(f"{REFUSED_METRIC}/{reason}", float(count))
            if cut:
                log(CUT_METRIC, float(sum(cut.values())))
                for reason, count in sorted(cut.items()):
                    log(f"{CUT_METRIC}/{reason}", float(count))
        for i, ids in enumerate(out["completion_ids"]):
            if not ids:  # TRL reads ids[-1]; an empty completion gets a masked EOS
                ids.append(eos)
                out["env_mask"][i].append(0)
                out["logprobs"][i].append(0.0)
        return out

    async def rollout(
        self,
        prompts: Sequence[Any],
        policy: PolicyFactory,
        eos: int = 0,
        process: tuple[int, int] = (0, 1),
    ) -> dict[str, list[Any]]:
        """The async core of ``__call__``: episodes for ``prompts``, spliced into rows, with
        a placeholder row (see the module docstring) for each refused episode. ``process``:
        this process's index and the number of processes (:func:`process_of`)."""
        call, self.calls = self.calls, self.calls + 1
        index, processes = process
        start, self.played = self.played, self.played + len(prompts)
        runs: list[str] = []
        jobs: list[Job] = []
        for i, prompt in enumerate(prompts):
            key = prompt_key(prompt)
            if not runs or runs[-1] != key:  # a new group: pick its row once
                task_id, seed = self.resolve(prompt)
            runs.append(key)
            # distinct rollout numbers -> distinct sampling seeds, over calls and processes
            jobs.append(Job(i, task_id, seed, (start + i) * processes + index))
        with tempfile.TemporaryDirectory(prefix="gymforge-rollout-") as tmp:
            out_dir = Path(tmp)
            if self.trajectory_dir is not None:  # one file per process: none truncates another's
                mine = (
                    self.trajectory_dir / f"process_{index}"
                    if processes > 1
                    else self.trajectory_dir
                )
                out_dir = mine / f"call_{call:06d}"
            spec = RunSpec(
                env=self.env_name,
                policy="rollout_func",
                jobs=jobs,
                out=out_dir,
                concurrency=self.concurrency,
                episode_timeout=self.episode_timeout_s,
                max_retries=self.max_retries,
            )
            result = await run(spec, LocalExecutor(self.env_factory, policy))
            path = out_dir / "trajectories.jsonl"
            logs = {
                (log.end.task_id, log.end.seed, log.end.rollout): log
                for log in (read_episodes(path) if path.exists() else [])
                if log.end is not None
            }
        out: dict[str, list[Any]] = {k: [] for k in OUTPUT_KEYS}
        refused: Counter[str] = Counter()
        for job in jobs:
            log = logs.get(job.key)
            row: dict[str, Any] | str = trl_row(log, cut=True) if log is not None else "infra_error"
            if isinstance(row, str):
                refused[row] += 1
                _placeholder(out, log, eos, row)
                continue
            if "cut" in row:
                self.cut[row["cut"]] += 1
            for key in OUTPUT_KEYS[:4]:
                out[key].append(list(row[key]))
            if not out["prompt_ids"][-1]:  # no_model_turn: no prompt ids were recorded
                out["prompt_ids"][-1].append(eos)
            out["env_reward"].append(float(row["reward"]))
            out["env_reward_components"].append(dict(row["reward_components"]))
            out["env_success"].append(bool(row["success"]))
            out["env_refused"].append(None)
        self.refused.update(refused)
        if jobs and sum(refused.values()) == len(jobs):
            first = f"; first infrastructure error: {result.errors[0]}" if result.errors else ""
            raise UserError(
                f"every episode of the batch ({len(jobs)}) was refused for training: "
                f"{dict(refused)}{first}"
            )
        return out

    # ---- the default policy: the trainer's vLLM server ---------------------------------
    def _default_policy(self, trainer: Any) -> PolicyFactory:
        if trainer is None:
            raise UserError("GymforgeRollout needs a policy factory or the trainer")
        self.policy = server_policy_for(trainer, **self.server)
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


def server_policy_for(trainer: Any, policy_kind: str = "vllm", **options: Any) -> PolicyFactory:
    """A ``vllm:`` (default) or ``openai:`` policy factory for the vLLM server of a TRL
    trainer in server mode.

    The base URL is ``options["base_url"]``, else ``args.vllm_server_base_url``, else
    ``http://{vllm_server_host}:{vllm_server_port}``, with ``/v1`` appended; the model name
    is the server's (as TRL's client read it) or the trainer's model path. Sampling follows
    the trainer (``temperature``, ``top_p``, ``top_k``, ``max_completion_length`` as
    ``max_tokens`` per turn); the weight version is the trainer's global step.
    """
    from gymforge.rollout.resolve import resolve_policy

    if policy_kind not in ("vllm", "openai"):
        raise UserError(f"policy_kind must be vllm or openai, not {policy_kind!r}")
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
    return resolve_policy(f"{policy_kind}:{model}", base_url, **settings).factory


def _placeholder(out: dict[str, list[Any]], log: Any, eos: int, reason: str) -> None:
    """A row that trains nothing: all-zero mask, no reward (module docstring)."""
    first = log.steps[1].policy if log is not None and len(log.steps) > 1 else None
    prompt = list(first.prompt_token_ids or []) if first is not None else []
    out["prompt_ids"].append(prompt or [eos])
    out["completion_ids"].append([eos])
    out["env_mask"].append([0])
    out["logprobs"].append([0.0])
    out["env_reward"].append(None)
    out["env_reward_components"].append({})
    out["env_success"].append(False)
    out["env_refused"].append(reason)


def process_of(trainer: Any) -> tuple[int, int]:
    """``(index, count)`` of the trainer's processes (``accelerator.process_index`` and
    ``num_processes``; ``(0, 1)`` without them). TRL calls ``rollout_func`` on every process
    with its slice of the batch, and one group of rollouts can span two slices: the index
    keeps the processes' rollout numbers (and so sampling seeds) and files apart."""
    accelerator = getattr(trainer, "accelerator", None)
    index = getattr(accelerator, "process_index", 0)
    count = getattr(accelerator, "num_processes", 1)
    if type(index) is not int or type(count) is not int or not 0 <= index < count:
        raise UserError(f"the trainer's process index {index!r} of {count!r} is not usable")
    return index, count


def _eos_id(trainer: Any) -> int:
    tokenizer = getattr(trainer, "processing_class", None)
    tokenizer = getattr(tokenizer, "tokenizer", tokenizer)  # a processor wraps its tokenizer
    eos = getattr(tokenizer, "eos_token_id", None)
    return int(eos) if eos is not None else 0
