"""``vllm:MODEL``: a token-in/token-out policy that owns the episode's token sequence.

The chat policy (``openai:MODEL``) sends messages and the server re-renders the whole
transcript each turn, so turn k+1's prompt ids need not extend turn k's prompt + completion
(re-serialised tool calls, non-canonical sampled tokens re-tokenised), and such episodes
cannot be trained on. This policy makes every multi-turn episode exact by construction:

- turn 1's prompt is the reset messages rendered with the model's chat template (tools
  included, generation prompt added);
- turn k+1's prompt is turn k's prompt ids + its completion ids exactly as generated + what
  the template closes an assistant turn with (less what the model already generated, e.g.
  its EOS) + the template delta of the environment's new messages
  (:mod:`gymforge.rollout.chat_template`). Earlier turns are never re-rendered or
  re-tokenised;
- requests go to the completions endpoint with the prompt as a list of token ids (vLLM
  accepts that), on the request path the chat policy has (``request_path``:
  :class:`~gymforge.rollout.server.ServerFactory`; by default gymforge's lean JSON client
  with the SDK client's URL, headers and errors, or the SDK's generic ``client.post`` where
  the SDK would do something the lean client does not), asking ``return_token_ids``,
  logprobs of the sampled tokens and ``include_stop_str_in_output`` (a stop string that
  ends a turn stays in the text, so text and ids agree and the next prompt still extends
  the last one).

The template is rendered by the server's ``/tokenize`` by default, or by a tokenizer loaded
locally with ``transformers`` (``tokenizer=PATH``, ``--tokenizer``). Tool calls are parsed
from the generated text in the model's format (:mod:`gymforge.rollout.tool_formats`),
detected from the template unless ``tool_format`` is given; malformed calls are ``Invalid``
and take the environment's malformed-output path.

Each turn records ``prompt_token_ids`` and ``completion_token_ids`` as the server returned
them, the sampled tokens' ``logprobs``, ``finish_reason``, ``model`` and the weight version
read when the successful request was sent, at capture level ``tokens``. A server that
cannot do token-in (no ``/tokenize``, refuses id prompts, or returns no ids / other ids
than were sent: a plain OpenAI-compatible server) fails the first request with
:class:`TokenInUnsupported`, which names ``openai:MODEL`` as the alternative and stops the
run (retrying cannot help). Retries, timeouts and context-length errors are those of every
server policy (:mod:`gymforge.rollout.server`), and so is a refusal once the agent acted, of
the completion or of a ``/tokenize`` rendering (:mod:`gymforge.rollout.transcript_refusal`).
What a turn keeps of the answer is read by :mod:`gymforge.rollout.completion_reply`.

Every request sends ``max_tokens`` (the completions endpoint's own default is 16): the
environment's remaining token budget and the room left in the context (the model's
``max_model_len``, which vLLM states in ``/tokenize`` and ``/v1/models``, less the prompt's
ids), capped by ``--max-tokens``; a prompt that fills the context is not sent at all, the
episode ends truncated (``context_length``; :mod:`gymforge.rollout.turn_budget`).
"""

from __future__ import annotations

import json
import random
from typing import Any, Literal

import orjson

from gymforge.core.errors import ContextLengthExceeded, UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Observation, ToolCall
from gymforge.rollout.capture import CapturedTurn
from gymforge.rollout.chat_template import (
    LocalTemplate,
    TemplateDelta,
    Tools,
    Toolset,
    close_rest,
)
from gymforge.rollout.completion_reply import SentPrompt, read_completion, read_turn
from gymforge.rollout.context_full import context_limit
from gymforge.rollout.liveness import TurnWatch, WatchedTurns
from gymforge.rollout.models_window import ModelsWindow
from gymforge.rollout.parsing import message_dict
from gymforge.rollout.server import (
    PolicyRequestRejected,
    RequestPath,
    Retry,
    Sampling,
    ServerFactory,
    Transport,
    WeightVersion,
    split_settings,
)
from gymforge.rollout.tokenize_endpoint import ALTERNATIVE, ServerTemplate, TokenInUnsupported
from gymforge.rollout.tool_formats import FORMATS, ToolFormat, detect_format, parse_completion
from gymforge.rollout.transcript_refusal import judged
from gymforge.rollout.turn_budget import TurnBudget, send_within


class VLLMPolicyFactory(ServerFactory):
    """Makes :class:`VLLMPolicy` objects sharing one client, weight version and template
    cache. ``tokenizer``: a local tokenizer path (else the server's ``/tokenize``);
    ``tool_format``: ``auto`` (detected from the template) or one of ``FORMATS``;
    ``request_path``: ``auto``, ``fast`` or ``lean``, as for the chat policy."""

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: Sampling | None = None,
        retry: Retry | None = None,
        transport: Transport | None = None,
        max_connections: int = 4096,
        checkpoint: str | None = None,
        weight_version: WeightVersion = None,
        tokenizer: str | None = None,
        tool_format: Literal["auto", "hermes", "llama3_json", "none"] = "auto",
        request_path: RequestPath = "auto",
    ) -> None:
        super().__init__(
            model,
            base_url=base_url,
            api_key=api_key,
            sampling=sampling,
            retry=retry,
            transport=transport,
            max_connections=max_connections,
            checkpoint=checkpoint,
            weight_version=weight_version,
            request_path=request_path,
        )
        if tool_format != "auto" and tool_format not in FORMATS:
            raise UserError(f"unknown tool format {tool_format!r}; use auto or {FORMATS}")
        self.tokenizer = tokenizer
        self.tool_format: ToolFormat | None = None if tool_format == "auto" else tool_format
        renderer = LocalTemplate(tokenizer) if tokenizer else ServerTemplate(self)
        self.template = TemplateDelta(renderer)
        self.context_window: int | None = None  # the model's, once a response states it
        self._models = ModelsWindow()

    def __call__(self) -> VLLMPolicy:
        return VLLMPolicy(self)

    @property
    def root_url(self) -> str:
        """The root of the server the completions go to (vLLM serves ``/tokenize`` beside
        ``/v1``): the SDK client's base URL (``base_url``, else ``$OPENAI_BASE_URL``, as the
        SDK reads them) less ``/v1``. Read in the running event loop (the client is its)."""
        base = str(self.client().base_url).rstrip("/")
        return base[:-3] if base.endswith("/v1") else base

    async def aclose(self) -> None:
        """Close the running loop's clients (the SDK's, the lean one, and a local
        renderer's, if it holds any)."""
        closer = getattr(self.template.renderer, "aclose", None)
        if closer is not None:
            await closer()
        await super().aclose()

    def bound_accepted(self, tokens: int | None) -> bool:
        """Also any bound once the model's context is known: a turn's bound is then within
        the room the context leaves, and one past it is refused as a full context."""
        return self.context_window is not None or super().bound_accepted(tokens)

    async def window(self) -> int | None:
        """The model's context length: from ``/tokenize``'s ``max_model_len``, else asked of
        ``/v1/models`` until it answers (:mod:`gymforge.rollout.models_window`: concurrent
        turns wait for one request), else from a context-full refusal."""
        if self.context_window is None and not self._models.answered:
            listed = await self._models.ask(self, self.model)
            if self.context_window is None:  # a /tokenize answer may have stated it since
                self.context_window = listed
        return self.context_window

    async def format_for(self, tools: Tools | Toolset) -> ToolFormat:
        if self.tool_format is None:
            self.tool_format = detect_format(await self.template.probe_text(tools))
        return self.tool_format


def _completion_hint(status: int, message: str) -> str:
    if status in (404, 422) or (status == 400 and "prompt" in message.lower()):
        return f" (token-id prompts refused? {ALTERNATIVE})"
    return ""


class VLLMPolicy(WatchedTurns):
    """One episode's token sequence. Made by :class:`VLLMPolicyFactory`."""

    def __init__(self, factory: VLLMPolicyFactory) -> None:
        self.factory = factory
        self.name = f"vllm:{factory.model}"
        self.checkpoint = factory.checkpoint
        self.ids: list[int] | None = None  # prompt + completion of the last turn
        self._ids_json = b""  # the same ids as JSON array items, grown turn by turn
        self.tools = Toolset(None)
        self.turns = 0
        self._last_completion: list[int] = []
        self._last_call: str | None = None
        self._seed = 0
        self._rng = random.Random(0)
        self.budget = TurnBudget(factory.sampling.max_tokens)
        self.watch = TurnWatch(factory)

    @property
    def weight_version(self) -> str | None:
        return self.factory.current_weight_version()

    async def start(self, ctx: EpisodeContext) -> None:
        self.ids, self.tools, self.turns, self._ids_json = None, Toolset(None), 0, b""
        self._last_completion, self._last_call = [], None
        self._seed = ctx.sampling_seed
        self._rng = random.Random(
            derive_seed("vllm-policy-backoff", ctx.task_id, ctx.seed, ctx.sampling_seed)
        )
        self.budget.start(ctx)
        self.watch.start()

    async def next_prompt(self, observation: Observation) -> list[int]:
        """The exact prompt ids of the coming turn (module docstring). The episode's token
        sequence changes only when a turn's request succeeds (:meth:`act`), so a turn asked
        again after a failure sends the same prompt."""
        template = self.factory.template
        messages = [self._message(m) for m in observation.messages]
        if self.ids is None:
            self.tools = Toolset([dict(t) for t in observation.tools] or None)
            return await template.first_prompt(messages, self.tools)
        close = close_rest(self._last_completion, await template.close(self.tools))
        added = close + await template.delta(messages, self.tools)
        return self.ids + added

    def _message(self, m: Any) -> dict[str, Any]:
        out = message_dict(m)
        if m.role == "tool" and "name" not in out and self._last_call:
            out["name"] = self._last_call  # hermes-style templates render the tool's name
        return out

    async def act(self, observation: Observation) -> PolicyTurn:
        """The turn's request; when anything fails, the policy is left as it was (its
        tools too, which the first turn sets), so the turn asked again is sent as it
        would have been."""
        tools = self.tools
        try:  # a refusal or failure once the agent acted is judged (rollout.transcript_refusal)
            return await judged(self.watch, self._rng, lambda: self._act(observation))
        except BaseException:
            self.tools = tools
            raise

    async def _act(self, observation: Observation) -> PolicyTurn:
        prompt = await self.next_prompt(observation)
        ids_json = _extend_json(self._ids_json, prompt[len(self.ids or ()) :])
        fmt = await self.factory.format_for(self.tools)
        window = await self.factory.window()
        room = None if window is None else window - len(prompt)
        max_tokens = self.budget.max_tokens(room, observing=observation)
        if max_tokens is None:
            raise PolicyRequestRejected(
                f"vllm:{self.factory.model}: no bound for max_tokens (the server states no "
                "context length and the environment no token budget; the completions "
                f"endpoint would stop every turn at 16 tokens): pass --max-tokens; if the "
                f"server is not vLLM, {ALTERNATIVE}"
            )
        sent = (prompt, b"[" + ids_json + b"]")
        try:
            data, version = await send_within(
                self.watch,
                self._rng,
                lambda n: self._send(self.request_body(ids_json, n), sent),
                max_tokens,
                _completion_hint,
            )
        except ContextLengthExceeded as err:
            self.factory.context_window = context_limit(str(err)) or window
            raise
        except PolicyRequestRejected as err:
            if ALTERNATIVE in str(err):
                raise TokenInUnsupported(str(err), status=err.status) from err
            raise
        turn = read_turn(data, prompt, self.factory.base_url)
        action = parse_completion(turn.text, fmt, f"call_{self.turns + 1}")
        grown = _extend_json(ids_json, turn.completion)  # ids_json: the sent prompt's, kept
        # the turn is read: from here on nothing raises, and the policy moves on
        self.budget.observe(observation)
        self.turns += 1
        self.ids = prompt + turn.completion
        self._ids_json = grown
        self._last_completion = turn.completion
        self.budget.acted(action)
        self._last_call = action.name if isinstance(action, ToolCall) else None
        return CapturedTurn(
            action=action,
            capture_level="tokens",
            text=turn.text,
            tool_format=fmt,
            prompt_token_ids=prompt,
            completion_token_ids=turn.completion,
            logprobs=turn.logprobs,
            finish_reason=turn.finish_reason,
            model=turn.model,
            weight_version=version,
        )

    def request_body(self, prompt_json: bytes, max_tokens: int | None = None) -> bytes:
        """The completions request, JSON-encoded, for the prompt ids ``prompt_json`` (the
        items of a JSON array: kept across turns, so each turn encodes only its new ids),
        asking for at most ``max_tokens`` (:mod:`gymforge.rollout.turn_budget`)."""
        s = self.factory.sampling
        body: dict[str, Any] = {
            "model": self.factory.model,
            "seed": self._seed,
            "return_token_ids": True,
            "include_stop_str_in_output": True,
        }
        optional = {
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": max_tokens,
            "stop": list(s.stop) if s.stop else None,
        }
        body.update((k, v) for k, v in optional.items() if v is not None)
        if s.logprobs:
            body["logprobs"] = s.top_logprobs or 0
        body.update(s.extra_body)
        head = json.dumps(body, ensure_ascii=False).encode()
        return head[:-1] + b', "prompt": [' + prompt_json + b"]}"

    async def _send(self, body: bytes, sent: SentPrompt) -> dict[str, Any]:
        return await self.factory.post("/completions", body, lambda c: read_completion(c, sent))


def _extend_json(items: bytes, ids: list[int]) -> bytes:
    """``items`` (JSON array items) followed by ``ids`` (exact ints: ``checked_ids`` and
    ``/tokenize``'s reading check them), written by orjson where it can (hundreds a turn;
    ``benchmarks/token_in_cpu.py``), the same digits as ``str``."""
    if not ids:
        return items
    try:
        more = orjson.dumps(ids)[1:-1]
    except TypeError:  # an id past 64 bits (orjson.JSONEncodeError is a TypeError)
        more = ",".join(map(str, ids)).encode()
    return items + b"," + more if items else more


def make_vllm_policy_factory(
    spec: str, base_url: str | None = None, **settings: Any
) -> VLLMPolicyFactory:
    """The factory for a CLI spec ``vllm:MODEL``: ``settings`` as for
    :func:`~gymforge.rollout.openai_policy.make_openai_policy_factory` plus ``tokenizer`` and
    ``tool_format``. A tokenizer that cannot be loaded is a ``UserError`` here, before any
    episode starts."""
    kind, _, model = spec.partition(":")
    if kind != "vllm" or not model:
        raise UserError(f"policy spec must look like vllm:MODEL, got {spec!r}")
    settings = {k: v for k, v in settings.items() if k != "text_tool_calls"}
    sampling, retry, options = split_settings(settings, VLLMPolicyFactory, "vllm policy")
    return VLLMPolicyFactory(model, base_url=base_url, sampling=sampling, retry=retry, **options)
