"""Policies by spec string, for every command that takes ``--policy``.

- ``oracle``, ``random``, ``noop``: the scripted baselines;
- ``skilled:P`` / ``skilled:1=0.9,*=0.2``: ``SkilledPolicy``, a scripted agent of known skill;
- ``recorded:PATH``: play back the actions of a recorded trajectory file;
- ``openai:MODEL`` (with ``base_url``): a model behind an OpenAI-compatible chat server;
- ``vllm:MODEL`` (with ``base_url``): token-in/token-out against a vLLM server
  (:mod:`gymforge.rollout.vllm_policy`);
- ``harness:pkg.module:func`` / ``harness-cmd:COMMAND`` (with ``base_url``): an outside
  agent program behind ``gymforge proxy`` (:mod:`gymforge.serve.harness.policy`, loaded by
  name: the serve layer sits above this one);
- ``package.module:factory`` or ``path/to/file.py:factory``: any zero-argument callable
  returning a ``Policy``.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymforge.core.capabilities import env_name, supported
from gymforge.core.env import Environment
from gymforge.core.errors import UserError
from gymforge.core.policy import Policy
from gymforge.registry.resolve import load_module
from gymforge.rollout.recorded import recorded_policy
from gymforge.rollout.scripted import SCRIPTED, scripted_policy
from gymforge.rollout.skilled import SkilledPolicy, parse_skill
from gymforge.tools.shell import SHELL

HARNESS_POLICY = "gymforge.serve.harness.policy"
HARNESS_OPTIONS = {
    "wall_clock_s": "--harness-time-limit",
    "grace_s": "--harness-grace",
    "model": "--harness-model",
    "paths": "--harness-path",
    "mode": "--harness-mode",
}
"""Options only harness policies take, with the CLI flag that sets each."""


@dataclass
class PolicySource:
    """A per-episode policy factory plus what to await when the run is over."""

    spec: str
    factory: Callable[[], Policy]
    close: Callable[[], Awaitable[None]] | None = None


def resolve_policy(spec: str, base_url: str | None = None, **options: Any) -> PolicySource:
    """The policy factory named by ``spec`` (see the module docstring)."""
    kind, sep, rest = spec.partition(":")
    harness_only = sorted(k for k in HARNESS_OPTIONS if options.get(k) is not None)
    if harness_only and not (sep and kind in ("harness", "harness-cmd")):
        flags = ", ".join(HARNESS_OPTIONS[k] for k in harness_only)
        raise UserError(f"{flags}: for harness: and harness-cmd: policies only, not {spec!r}")
    if spec in SCRIPTED:
        return PolicySource(spec, scripted_policy(spec))
    if sep and kind == "skilled":
        skill = parse_skill(rest)
        SkilledPolicy(skill)  # validate now, not inside the first episode
        return PolicySource(spec, lambda: SkilledPolicy(skill))
    if sep and kind == "recorded" and rest:
        return PolicySource(spec, recorded_policy(rest))
    if sep and kind == "openai" and rest:
        try:
            from gymforge.rollout.openai_policy import make_openai_policy_factory
        except ImportError as err:
            raise UserError(f"openai policies are unavailable: {err}") from err
        token_in = sorted(k for k in ("tokenizer", "tool_format") if options.get(k) is not None)
        if token_in:
            raise UserError(f"{', '.join(token_in)} only apply to vllm:MODEL policies")
        made = make_openai_policy_factory(spec, base_url=base_url, **options)
        return PolicySource(spec, made, getattr(made, "aclose", None))
    if sep and kind == "vllm" and rest:
        from gymforge.rollout.vllm_policy import make_vllm_policy_factory

        vllm_factory = make_vllm_policy_factory(spec, base_url=base_url, **options)
        return PolicySource(spec, vllm_factory, vllm_factory.aclose)
    if sep and kind in ("harness", "harness-cmd") and rest:
        module = importlib.import_module(HARNESS_POLICY)
        harness = module.harness_policy_factory(spec, base_url=base_url, **options)
        return PolicySource(spec, harness, harness.aclose)
    if sep and rest:
        return PolicySource(spec, _import_factory(kind, rest))
    raise UserError(
        f"unknown policy {spec!r}; use {', '.join(SCRIPTED)}, skilled:P, recorded:PATH, "
        "openai:MODEL, vllm:MODEL, harness:pkg.module:func, harness-cmd:COMMAND or "
        "package.module:factory"
    )


def with_run_hidden(options: dict[str, Any], spec: str, out: Path | None) -> dict[str, Any]:
    """``options`` with the run's output directory ``out`` among the paths a ``harness-cmd:``
    program must not see (``hidden``), whoever resolves the policy: this process, or each
    worker of ``--backend redis``/``ray`` (the options travel to them). The run's records
    are there: a harness that could read them would read its siblings' answers."""
    if out is None or not spec.startswith("harness-cmd:"):
        return options
    hidden, run = [str(h) for h in options.get("hidden") or ()], os.path.abspath(out)
    if run in hidden:
        return options
    return {**options, "hidden": (*hidden, run)}


def with_harness_shell(
    options: dict[str, Any], env_factory: Callable[[], Environment]
) -> dict[str, Any]:
    """``options`` with ``shell``, the environment's shell tool, when they ask for
    ``--harness-mode workspace``; a ``UserError`` when the environment has none."""
    if options.get("mode") != "workspace" or options.get("shell") is not None:
        return options
    probe = env_factory()
    try:
        found = supported(probe, SHELL)
        if found is None:
            raise UserError(
                f"--harness-mode workspace: the {env_name(probe)} environment has no shell "
                "tool (capability 'shell_tool'); use --harness-mode tools"
            )
        return {**options, "shell": found.shell_tool}
    finally:
        asyncio.run(probe.close())


def _import_factory(module_name: str, attr: str) -> Callable[[], Policy]:
    try:
        module = load_module(module_name)
    except ImportError as err:
        raise UserError(f"cannot import policy module {module_name!r}: {err}") from err
    factory: Any = getattr(module, attr, None)
    if not callable(factory) or (not inspect.isclass(factory) and _required_params(factory) > 0):
        raise UserError(f"{module_name}:{attr} is not a zero-argument policy factory")
    return factory  # type: ignore[no-any-return]


def _required_params(fn: Callable[..., Any]) -> int:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return 0
    return sum(
        p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        for p in params
    )
