"""Harness policies: an outside agent program plays the episode through its own loop.

- ``harness:pkg.module:func``: ``func(ctx)`` (sync or async) is called once per episode
  with a :class:`HarnessContext`; its return value is the final message;
- ``harness-cmd:COMMAND``: ``COMMAND`` runs once per episode (through ``/bin/sh``),
  confined (:mod:`~gymforge.serve.harness.confine`: its own user, pid namespace and
  filesystem view, a network namespace holding only its two endpoints
  (:mod:`~gymforge.serve.harness.netrelay`), an allow-listed environment, killed with
  everything it started when the episode ends), with ``OPENAI_BASE_URL``,
  ``OPENAI_API_KEY``, ``GYMFORGE_MODEL``, ``GYMFORGE_MCP_URL``, ``GYMFORGE_EPISODE`` and
  ``GYMFORGE_PROMPT_FILE`` (a JSON file: prompt, messages, tools) set; its standard
  output, stripped, is the final message, and a non-zero exit is a crash. Where it cannot
  be confined (no bubblewrap, no namespaces), the policy refuses to start, in one line that
  names what is missing.

``mode="workspace"`` (``--harness-mode workspace``) gives the harness a shell instead of the
MCP tools (:mod:`~gymforge.serve.harness.shell`): ``GYMFORGE_SHELL_URL`` and ``gymforge-sh``
on its ``PATH`` in place of ``GYMFORGE_MCP_URL``, each command one ``ToolCall`` of the
environment's shell tool (:mod:`gymforge.tools.shell`). Before it starts, the tool calls
of the shell tool's briefing (if any) are played as steps, and their results complete its
instruction (``prompt``, ``GYMFORGE_INSTRUCTION_FILE``).

Each episode has a token of its own (``HarnessContext.api_key``), which opens its proxy URL
and its MCP URL and nothing else: not another episode's, not the proxy's control routes
(the weight version is the runner's alone). A harness learns its episode by an opaque
handle (``episode_id``), never the task id or the environment seed.

The harness talks to the model through the episode's own base URL on a
:class:`~gymforge.serve.proxy.server.ProxyServer` (every request recorded with exact token
ids) and to the environment through the episode's MCP endpoint
(:mod:`~gymforge.serve.harness.bridge`), where each tool call becomes one ``ToolCall``
step: the step's policy record carries the proxy turns that led to it (``model_turns``).
When the harness returns or exits, its final message is the ``Reply`` action. The episode
ends when the environment ends it (the harness's pending call is answered, and it gets
``grace_s`` to exit before it is cancelled or killed) or when the harness has run for
``wall_clock_s`` without a final message (truncated, ``harness_timeout``); if the
environment wants more after the final message, the episode ends truncated
(``harness_exited``). A harness that raises or exits non-zero after it acted (a model turn
through its proxy, or a step) is the policy's counted failure, truncated
(``harness_crashed``); before that, or after its inference server failed it (unreachable,
429, 5xx), it is an infrastructure error: retried, never scored, unless the failure was
the model's doing (:mod:`~gymforge.serve.proxy.crash`: a server that fails on the model's
text but answers the episode's first request, a first answer too long for the harness to
wait for), which is counted as ``harness_crashed`` too.

What a run shares (the spec, the proxy, the bridge) is :mod:`~gymforge.serve.harness.run`;
one episode is :mod:`~gymforge.serve.harness.episode`.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import UserError
from gymforge.serve.harness.context import HarnessContext
from gymforge.serve.harness.episode import RESULT_LIMIT, HarnessPolicy
from gymforge.serve.harness.run import MODES, HarnessRun, Target

__all__ = [
    "MODES",
    "RESULT_LIMIT",
    "HarnessContext",
    "HarnessPolicy",
    "HarnessPolicyFactory",
    "Target",
    "harness_policy_factory",
]


class HarnessPolicyFactory(HarnessRun):
    """Makes one :class:`HarnessPolicy` per episode; owns the run's proxy and bridge,
    started on first use and stopped by :meth:`aclose` (:class:`HarnessRun`)."""

    def __call__(self) -> HarnessPolicy:
        return HarnessPolicy(self)


def harness_policy_factory(
    spec: str, base_url: str | None = None, **options: Any
) -> HarnessPolicyFactory:
    """The factory for a CLI spec ``harness:...`` or ``harness-cmd:...`` (``base_url``: the
    inference server the proxy fronts)."""
    if not base_url:
        raise UserError(f"{spec}: a harness policy needs --base-url (the inference server)")
    known = {"model", "api_key", "grace_s", "wall_clock_s", "checkpoint", "paths", "hidden"}
    known |= {"mode", "shell"}
    unknown = sorted(set(options) - known - {"max_tokens", "temperature", "top_p"})
    if unknown:
        raise UserError(f"harness policies do not take {', '.join(unknown)}")
    return HarnessPolicyFactory(
        spec, upstream=base_url, **{k: v for k, v in options.items() if k in known}
    )
