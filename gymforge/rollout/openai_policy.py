"""``OpenAIPolicy``: a model behind any OpenAI-compatible chat server, via the ``openai`` SDK.

Build policies with :class:`OpenAIPolicyFactory` (or :func:`make_openai_policy_factory` from
a CLI spec). The factory owns one ``AsyncOpenAI`` client (one connection pool) per event
loop, the sampling and retry settings, and the **weight version** a trainer bumps mid-run.
The runner calls ``factory()`` once per episode and ``await factory.aclose()`` at the end.

Per episode the policy keeps the whole conversation: each ``act`` appends the observation's
new messages, sends the transcript (with ``tools`` from the reset observation), and appends
its own assistant turn (``gymforge.rollout.parsing``), so every request is the exact
transcript so far. ``seed`` is ``EpisodeContext.sampling_seed``, so the rollouts of a group
differ deterministically.

**Token capture.** Requests ask for ``logprobs`` and vLLM's ``return_token_ids``. Each turn
records ``prompt_token_ids``, ``completion_token_ids``, ``logprobs``, ``finish_reason``,
``model`` exactly as returned (never re-tokenised; rules and ``capture_level`` in
:func:`gymforge.rollout.parsing.capture_fields`), and the weight version read when the
successful request was sent.

**max_tokens** is sent on every request whose bound is known: the environment's remaining
token budget, capped by ``--max-tokens`` (:mod:`gymforge.rollout.turn_budget`).

**Failures** are handled as for every server policy (:mod:`gymforge.rollout.server`):
retries with seeded backoff, then :class:`PolicyServerError`, :class:`PolicyRequestRejected`
or :class:`ContextLengthExceeded`; their docstrings say what the runner should do. A refusal
once the agent acted is the episode's counted end (``transcript_refused``) when the server
answers the episode's first request for one token, and so is a server failure the turn
meets again after that answer (``transcript_failed``; :mod:`gymforge.rollout.transcript_refusal`).

**Multi-turn exactness.** The server renders and tokenises the whole transcript every turn,
so turn k+1's prompt ids need not start with turn k's prompt + completion ids (tool-call
JSON re-serialised, non-canonical sampled tokenisations re-tokenised). The TRL export and
``GymforgeRollout`` detect that and refuse such episodes (``prefix_mismatch``); the
``vllm:`` policy (:mod:`gymforge.rollout.vllm_policy`) is exact by construction.

**Request path.** ``"lean"`` sends the body over gymforge's keep-alive JSON client
(:mod:`gymforge.rollout.json_http`) to the URL the SDK client would post to, with its
headers (auth, organization, project, user agent) and, for ``https``, its TLS context; it
raises every failure as the SDK does (:func:`~gymforge.rollout.server_http.status_error`: the
same classes, messages, bodies and ``Retry-After``), so retries, errors and exit codes are
the same, at about a fifth of the SDK's client CPU per call
(``benchmarks/rollout_cpu.py``). ``"fast"`` sends the same body with the SDK's documented
generic ``client.post`` and decodes it with ``jiter``; ``"typed"`` uses
``client.chat.completions.create`` (about 3x the fast path's client CPU: TypedDict
transforms of the whole transcript, response models). All three record the same fields.
``"auto"`` (the default) is ``"lean"`` unless the SDK would do something the lean client
does not (:func:`sdk_only_reason`: a proxy from the environment applies to the server's
URL, or the client authenticates through a provider); then it is ``"fast"``, and the reason
is logged once. An answer the lean client does not read as the SDK would (a redirect, a
coded body) is asked again through the SDK under ``"auto"``, which the factory keeps to
from then on (:meth:`~gymforge.rollout.server.ServerFactory.post`).
"""

from __future__ import annotations

import inspect
import random
from collections.abc import Awaitable, Callable
from typing import Any

import openai

from gymforge.core.errors import ContextLengthExceeded, UserError
from gymforge.core.policy import EpisodeContext, PolicyTurn
from gymforge.core.seeding import derive_seed
from gymforge.core.types import Observation
from gymforge.rollout.chat_reply import ChatReply, read_chat, reply_from_json, turn_from_reply
from gymforge.rollout.liveness import TurnWatch, WatchedTurns
from gymforge.rollout.parsing import message_dict, tools_not_json
from gymforge.rollout.server import (
    PolicyRequestRejected,
    PolicyServerError,
    RequestPath,
    Retry,
    Sampling,
    ServerFactory,
    Transport,
    WeightVersion,
    first_choice,
    sdk_only_reason,
    split_settings,
)
from gymforge.rollout.transcript_refusal import judged
from gymforge.rollout.turn_budget import TurnBudget, send_within

__all__ = [
    "ContextLengthExceeded",
    "OpenAIPolicy",
    "OpenAIPolicyFactory",
    "PolicyRequestRejected",
    "PolicyServerError",
    "Retry",
    "Sampling",
    "make_openai_policy_factory",
    "message_dict",
    "sdk_only_reason",
]


class OpenAIPolicyFactory(ServerFactory):
    """Makes :class:`OpenAIPolicy` objects that share one client and one weight version
    (see :class:`~gymforge.rollout.server.ServerFactory` for the shared options, the
    request path among them: the lean, fast or typed path, ``"auto"`` the lean one where it
    does what the SDK would; module docstring);
    ``text_tool_calls=False`` never reads ``<tool_call>`` blocks from content."""

    PATHS = ("auto", "fast", "typed", "lean")

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        sampling: Sampling | None = None,
        retry: Retry | None = None,
        transport: Transport | None = None,
        request_path: RequestPath = "auto",
        max_connections: int = 4096,
        checkpoint: str | None = None,
        weight_version: WeightVersion = None,
        text_tool_calls: bool = True,
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
        self.text_tool_calls = text_tool_calls

    def __call__(self) -> OpenAIPolicy:
        return OpenAIPolicy(self)


class OpenAIPolicy(WatchedTurns):
    """One episode's conversation with the model. Made by :class:`OpenAIPolicyFactory`."""

    def __init__(self, factory: OpenAIPolicyFactory) -> None:
        self.factory = factory
        self.name = f"openai:{factory.model}"
        self.checkpoint = factory.checkpoint
        self.messages: list[dict[str, Any]] = []
        self.tools: list[dict[str, Any]] = []
        self.turns = 0
        self._seed = 0
        self._backoff_key: tuple[str, int, int] | None = None
        self._rng: random.Random | None = None
        self.budget = TurnBudget(factory.sampling.max_tokens)
        self.watch = TurnWatch(factory)

    @property
    def weight_version(self) -> str | None:
        return self.factory.current_weight_version()

    async def start(self, ctx: EpisodeContext) -> None:
        self.messages, self.tools, self.turns = [], [], 0
        self._seed = ctx.sampling_seed
        self._backoff_key, self._rng = (ctx.task_id, ctx.seed, ctx.sampling_seed), None
        self.budget.start(ctx)
        self.watch.start()

    def _backoff(self) -> random.Random:
        """The episode's seeded jitter for retry delays, seeded when a retry first waits
        (the same draws as seeding it at the start: nothing else draws from it)."""
        if self._rng is None:
            key = self._backoff_key
            seed = 0 if key is None else derive_seed("openai-policy-backoff", *key)
            self._rng = random.Random(seed)
        return self._rng

    async def act(self, observation: Observation) -> PolicyTurn:
        """The turn's request, with ``observation``'s messages added to the transcript;
        when it fails the transcript and the token account are left as they were, so the
        turn asked again is sent as it would have been."""
        mark, tools = len(self.messages), self.tools
        try:
            if observation.tools:
                self.tools = [dict(t) for t in observation.tools]
            self.messages.extend(message_dict(m) for m in observation.messages)
            sender, max_tokens = self._sender(), self.budget.max_tokens(observing=observation)

            def turn_request() -> Awaitable[tuple[ChatReply, str | None]]:
                return send_within(self.watch, self._backoff, sender, max_tokens, _hint)

            # a refusal or failure once the agent acted is judged (rollout.transcript_refusal)
            reply, version = await judged(self.watch, self._backoff, turn_request)
            turn, assistant = turn_from_reply(
                reply, version, f"call_{self.turns + 1}", self.factory.text_tool_calls
            )
        except BaseException as err:
            del self.messages[mark:]
            bad = self.tools if isinstance(err, (TypeError, ValueError)) else None
            self.tools = tools
            if bad and (mistake := tools_not_json(bad)) is not None:
                raise mistake from err
            raise
        self.budget.observe(observation)
        self.turns += 1
        self.messages.append(assistant)
        self.budget.acted(turn.action)
        return turn

    def _sender(self) -> Callable[[int | None], Awaitable[ChatReply]]:
        """The turn's request as the transcript stands now, asking for so many tokens: the
        same request however the transcript grows after (the episode's first one is asked
        again when a later one is refused, :mod:`gymforge.rollout.transcript_refusal`)."""
        upto, tools = len(self.messages), self.tools
        return lambda n: self._send(self.request_body(n, upto, tools))

    def request_body(
        self,
        max_tokens: int | None = None,
        upto: int | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        """The JSON body of the next request: the transcript so far (its first ``upto``
        messages, when given; with ``tools``, when given) plus sampling, asking for at most
        ``max_tokens`` (the turn's bound, :mod:`gymforge.rollout.turn_budget`)."""
        s = self.factory.sampling
        messages = self.messages
        if upto is not None and upto != len(messages):
            messages = messages[:upto]
        tools = self.tools if tools is None else tools
        body: dict[str, Any] = {"model": self.factory.model, "messages": messages}
        if tools:
            body["tools"] = tools
            if s.parallel_tool_calls is not None:
                body["parallel_tool_calls"] = s.parallel_tool_calls
        body["seed"] = self._seed
        optional = {
            "temperature": s.temperature,
            "top_p": s.top_p,
            "max_tokens": max_tokens,
            "stop": list(s.stop) if s.stop else None,
            "top_logprobs": s.top_logprobs if s.logprobs else None,
        }
        body.update((k, v) for k, v in optional.items() if v is not None)
        if s.logprobs:
            body["logprobs"] = True
        if s.return_token_ids:
            body["return_token_ids"] = True
        body.update(s.extra_body)
        return body

    async def _send(self, body: dict[str, Any]) -> ChatReply:
        if self.factory.path() != "typed":  # the lean client, else the SDK's generic post
            return await self.factory.post("/chat/completions", body, read_chat)
        params = {k: v for k, v in body.items() if k in _TYPED_PARAMS}
        extra = {k: v for k, v in body.items() if k not in _TYPED_PARAMS}
        completion = await self.factory.client().chat.completions.create(
            **params, extra_body=extra or None, timeout=self.factory.retry.call_timeout
        )
        data = completion.model_dump(mode="json", exclude_unset=True)
        return reply_from_json(first_choice(data))


_TYPED_PARAMS = frozenset(
    inspect.signature(openai.resources.chat.AsyncCompletions.create).parameters
) - {"self", "extra_body", "extra_headers", "extra_query", "timeout"}


def _hint(status: int, message: str) -> str:
    if "return_token_ids" in message or "logprobs" in message:
        return " (a server without vLLM's fields: set return_token_ids=False)"
    return ""


def make_openai_policy_factory(
    spec: str, base_url: str | None = None, **settings: Any
) -> OpenAIPolicyFactory:
    """The factory for a CLI spec ``openai:MODEL`` (``MODEL`` may contain ``:`` and ``/``).

    ``settings`` are :class:`Sampling` fields (``temperature``, ``max_tokens``, ``stop``,
    ``return_token_ids``, ``extra_body``, ...) plus factory options (``transport``,
    ``request_path``, ``checkpoint``, ``weight_version``, ``api_key``, ``max_connections``,
    ``text_tool_calls``) and :class:`Retry` fields (``max_attempts``, ``call_timeout``...).
    ``None`` values are ignored, so unset CLI flags can be passed through. UserError for a
    bad spec or an unknown setting.
    """
    kind, _, model = spec.partition(":")
    if kind != "openai" or not model:
        raise UserError(f"policy spec must look like openai:MODEL, got {spec!r}")
    sampling, retry, options = split_settings(settings, OpenAIPolicyFactory, "openai policy")
    return OpenAIPolicyFactory(model, base_url=base_url, sampling=sampling, retry=retry, **options)
