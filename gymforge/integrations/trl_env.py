"""``environment_class``: a gymforge environment as a TRL ``environment_factory`` class.

TRL 1.16's ``GRPOTrainer(environment_factory=Cls)`` creates instances with ``Cls()``, calls
``reset(**row)`` with every dataset column before each rollout (a returned string is
appended to the last user message), turns every public method of the class into a tool
(from its signature, type hints and Google-style docstring), runs those tools in its own
tool-calling loop, and calls ``get_reward()`` once per finished rollout.

The generated class has exactly that surface:

- ``reset(**row) -> str | None``: ``reset(row["task_id"], row["seed"])`` on the wrapped
  environment; returns None when the row has a prompt (the dataset already holds what the
  environment renders), else the rendered observation text;
- one method per gymforge tool, with the tool's parameters as typed arguments and a
  Google-style docstring; each call is one ``step(ToolCall(...))`` of the environment, so
  budgets, seeded faults and reward components apply as in any other rollout; the method
  returns the tool message the environment rendered;
- ``get_reward() -> float``: the episode's total reward. An episode still open is ended
  with a final ``Reply``: the text handed over by :func:`submit_final_replies` if that
  reward function ran first, else an empty reply (right for environments judged on world
  state; answer-checked environments need :func:`submit_final_replies`).

Everything else is private (leading underscore), so TRL sees no other tools.
"""

from __future__ import annotations

import enum
import inspect
import re
import types
import typing
from collections.abc import Callable, Sequence
from typing import Any, Literal, Union

from gymforge.core.capabilities import TOOLSET, supported
from gymforge.core.env import Environment, StepResult, SyncEnvironment
from gymforge.core.errors import UserError
from gymforge.core.types import Reply, ToolCall
from gymforge.integrations.trl_common import completion_text, env_factory
from gymforge.tools.tool import Tool, parse_docstring, tools_of
from gymforge.tools.toolset import Toolset

RESERVED = frozenset({"reset", "get_reward"})
_BASIC = (str, int, float, bool, list, dict, tuple, type(None), Any)
_IDENT = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")


class _GymforgeEnvironment:
    """The base of every generated class; see the module docstring."""

    _factory: Callable[[], Environment]

    def __init__(self) -> None:
        self._env = SyncEnvironment(type(self)._factory())
        self._open = False
        self._calls = 0
        self._rewards: list[StepResult] = []
        self._final_reply: str | None = None

    def reset(self, **row: Any) -> str | None:
        """Start the episode of a dataset row: ``task_id`` and ``seed`` columns are used."""
        if "task_id" not in row or "seed" not in row:
            raise UserError("environment reset needs the dataset columns task_id and seed")
        obs = self._env.reset(str(row["task_id"]), int(row["seed"]))
        self._open, self._calls, self._rewards, self._final_reply = True, 0, [], None
        return None if row.get("prompt") else obs.text()

    def get_reward(self) -> float:
        """The total reward of the episode, ending it with the final reply if still open."""
        if self._open:
            self._step(Reply(text=self._final_reply or ""))
        return sum(r.reward for r in self._rewards)

    # ---- private helpers ----------------------------------------------------------------
    def _components(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for r in self._rewards:
            for name, value in r.reward_components.items():
                totals[name] = totals.get(name, 0.0) + value
        return totals

    def _success(self) -> bool:
        return bool(self._rewards and self._rewards[-1].info.get("success"))

    def _submit(self, text: str) -> None:
        """Record the final assistant text; it becomes the episode's last ``Reply``."""
        self._final_reply = text

    def _step(self, action: Any) -> StepResult:
        result = self._env.step(action)
        self._rewards.append(result)
        if result.done:
            self._open = False
        return result

    def _call_tool(self, name: str, arguments: dict[str, Any]) -> str:
        if not self._open:
            return "The episode has ended; no more tool calls are accepted."
        self._calls += 1
        result = self._step(ToolCall(name=name, arguments=arguments, call_id=f"call_{self._calls}"))
        text = result.observation.text()
        if result.done:
            text += "\n(The episode has ended.)"
        return text

    def _close(self) -> None:
        self._env.close()


def environment_class(env: str | Callable[[], Environment]) -> type:
    """A class for ``GRPOTrainer(environment_factory=...)`` wrapping ``env`` (an id such as
    ``"ledger"`` or a zero-argument factory). One method per gymforge tool of the
    environment; ``UserError`` if a tool name clashes with ``reset``/``get_reward``, is not
    a plain identifier, or starts with an underscore."""
    factory = env_factory(env)
    probe = factory()
    try:
        found = supported(probe, TOOLSET)
        toolset = found.toolset if found is not None else None
        tools: list[Tool] = (
            list(toolset.tools.values()) if isinstance(toolset, Toolset) else tools_of(probe)
        )
        env_id = probe.spec.id
    finally:
        SyncEnvironment(probe).close()
    namespace: dict[str, Any] = {
        "_factory": staticmethod(factory),
        "__doc__": f"The gymforge environment {env_id!r} as a TRL environment_factory class.",
        "__module__": __name__,
    }
    for t in tools:
        if t.name in RESERVED or not _IDENT.match(t.name):
            raise UserError(
                f"{env_id}: tool {t.name!r} cannot be a TRL environment method "
                "(reserved, private or not an identifier)"
            )
        namespace[t.name] = _tool_method(t)
    name = "Gymforge_" + re.sub(r"\W", "_", env_id).title().replace("_", "") + "Environment"
    return types.new_class(name, (_GymforgeEnvironment,), exec_body=lambda ns: ns.update(namespace))


def _tool_method(t: Tool) -> Callable[..., str]:
    """A typed, Google-docstringed method that runs tool ``t`` as one environment step."""
    fields = t.args_model.model_fields
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    for arg, info in fields.items():
        annotation = json_safe_annotation(info.annotation)
        default = inspect.Parameter.empty if info.is_required() else info.default
        params.append(
            inspect.Parameter(
                arg, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default, annotation=annotation
            )
        )
        annotations[arg] = annotation
    annotations["return"] = str
    signature = inspect.Signature(params, return_annotation=str)
    tool_name = t.name

    def method(self: _GymforgeEnvironment, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        arguments = {k: v for k, v in bound.arguments.items() if k != "self"}
        return self._call_tool(tool_name, arguments)

    method.__name__ = method.__qualname__ = tool_name
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__doc__ = google_docstring(t)
    return method


def google_docstring(t: Tool) -> str:
    """The tool's description, an ``Args:`` line per parameter and a ``Returns:`` section."""
    description, arg_docs = parse_docstring(t.fn.__doc__)
    lines = [description or t.description or t.name, ""]
    fields = t.args_model.model_fields
    if fields:
        lines.append("Args:")
        for arg, info in fields.items():
            text = info.description or arg_docs.get(arg) or f"The {arg.replace('_', ' ')}."
            lines.append(f"    {arg}: {' '.join(text.split())}")
        lines.append("")
    lines += ["Returns:", "    The tool result as JSON text, or an error the agent can act on."]
    return "\n".join(lines)


def json_safe_annotation(annotation: Any) -> Any:
    """``annotation`` if transformers can turn it into a JSON schema (basic types, Literal,
    Enum, list/tuple/dict and unions of those), else ``dict`` for models and other classes
    (the environment validates the arguments either way)."""
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is None:
        if annotation in _BASIC or (
            isinstance(annotation, type) and issubclass(annotation, enum.Enum)
        ):
            return annotation
        return dict
    if origin is Literal:
        return annotation
    if origin in (Union, types.UnionType):
        safe = tuple(json_safe_annotation(a) for a in args)
        return Union[safe]  # noqa: UP007 - built from a runtime tuple
    if origin is typing.Annotated:
        return json_safe_annotation(args[0])
    if origin in (list, tuple, dict, set, frozenset, Sequence):
        if origin is list and args:
            return list[json_safe_annotation(args[0])]  # type: ignore[misc]
        if origin is dict and len(args) == 2:
            return dict[json_safe_annotation(args[0]), json_safe_annotation(args[1])]  # type: ignore[misc]
        return {dict: dict, tuple: list}.get(origin, list)
    return dict


def submit_final_replies(
    prompts: Sequence[Any],
    completions: Sequence[Any],
    completion_ids: Sequence[Any] | None = None,
    **kwargs: Any,
) -> list[float]:
    """A TRL reward function that hands each rollout's final assistant text to its
    environment (so ``get_reward`` judges the real answer) and logs the episode's reward
    components through ``log_metric``. It contributes 0.0 itself: list it in
    ``reward_funcs`` *before* any async reward function, and keep it synchronous, so that it
    runs before TRL calls ``get_reward``."""
    environments = kwargs.get("environments") or []
    log_metric = kwargs.get("log_metric")
    totals: dict[str, float] = {}
    successes = 0
    for env, completion in zip(environments, completions, strict=False):
        if not isinstance(env, _GymforgeEnvironment):
            continue
        env._submit(completion_text(completion))
        env.get_reward()  # ends the episode with that reply
        for name, value in env._components().items():
            totals[name] = totals.get(name, 0.0) + value
        successes += env._success()
    if log_metric is not None and environments:
        n = len(environments)
        for name, value in sorted(totals.items()):
            log_metric(f"gymforge/{name}", value / n)
        log_metric("gymforge/success", successes / n)
    return [0.0] * len(completions)
