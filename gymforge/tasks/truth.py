"""Typed hidden truth: environments and task families work with pydantic models, while a
``Task`` carries its truth as the plain JSON dict that ids, records and the wire need.

A family's ``build`` returns a model; ``dump_truth`` turns it into ``Task.truth`` once, and
``TruthCodec.parse`` turns ``Task.truth`` back into the model (memoised per task object, so a
world environment's large truth is validated once per task, not once per reset).

Validated once: the model a family built (and pydantic validated, as it was constructed) is
``vouch``ed for the very ``Task`` object ``generate`` made from it, and ``parse`` hands that
model back for that object instead of validating its dump again. Only that object: a task
whose truth came from anywhere else (a dataset file, a task list, the wire, a copy with
another truth) is validated by ``parse`` as ever.

``dump_truth`` and the field marker ``PASSTHROUGH`` live in ``gymforge.tasks.truth_dump``.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from typing import Any, Generic, TypeVar, cast, get_args, get_origin

from pydantic import BaseModel, ConfigDict, TypeAdapter

from gymforge.core.types import JSON, Task

TruthT = TypeVar("TruthT", bound=BaseModel)
_T = TypeVar("_T")


class UntypedTruth(BaseModel):
    """The truth of an environment that declares no truth model: every key of the dict
    becomes an extra attribute (``model_extra``). Declare a model instead where you can."""

    model_config = ConfigDict(extra="allow", frozen=True)


class AnswerTruth(BaseModel):
    """The hidden truth of a question with one gold answer."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answer: str


_ADAPTERS: dict[Any, TypeAdapter[Any]] = {}


def validate_bulk(shape: type[_T], raw: Any) -> _T:
    """``raw``, plain data a generator made, validated as ``shape`` (``list[CallTest]``,
    ``dict[str, Decision]``) in one pydantic call. Validation is the same as building each
    model in Python, at a fraction of the cost for many small models (one call into
    pydantic-core instead of one ``__init__`` per model): use it where a family builds
    tens of them per task. The adapter is built once per shape."""
    adapter = _ADAPTERS.get(shape)
    if adapter is None:
        adapter = _ADAPTERS[shape] = TypeAdapter(shape)
    return cast("_T", adapter.validate_python(raw))


def type_argument(cls: type, base: type, index: int) -> Any:
    """The type ``cls`` binds to ``base``'s type parameter ``index`` through its (generic)
    bases, e.g. ``LedgerTruth`` for ``class LedgerEnv(ToolEnv[LedgerTruth, World])``; None
    when ``cls`` leaves it unbound (a bare ``class MyEnv(ToolEnv)``)."""
    bound = _bindings(cls, base)
    if bound is None or index >= len(bound):
        return None
    found = bound[index]
    return None if isinstance(found, TypeVar) else found


def _bindings(cls: type, base: type) -> tuple[Any, ...] | None:
    if cls is base:
        return tuple(getattr(base, "__parameters__", ()))
    for orig in cls.__dict__.get("__orig_bases__", cls.__bases__):
        origin = get_origin(orig) or orig
        if not (isinstance(origin, type) and issubclass(origin, base)):
            continue
        inner = _bindings(origin, base)
        if inner is None:
            continue
        subst = dict(zip(getattr(origin, "__parameters__", ()), get_args(orig), strict=False))
        return tuple(subst.get(t, t) if isinstance(t, TypeVar) else t for t in inner)
    return None


class _TaskRef(weakref.ref):  # type: ignore[type-arg]
    """A weak reference to a vouched task that knows its key (one callback for all)."""

    __slots__ = ("key",)
    key: int


def _forget(ref: _TaskRef) -> None:
    found = _VOUCHED.get(ref.key)
    if found is not None and found[0] is ref:
        _VOUCHED.pop(ref.key, None)


_VOUCHED: dict[int, tuple[_TaskRef, dict[str, JSON], BaseModel]] = {}


def vouch(task: Task, truth: BaseModel) -> None:
    """Vouch that ``task.truth`` (that dict object) is ``dump_truth(truth)`` of ``truth``, a
    model built and validated in this process (a family's ``build``): ``TruthCodec.parse``
    then returns ``truth`` for ``task`` without validating the dict again, if ``truth`` is
    an instance of exactly the codec's model, and that model is frozen. The entry lives as
    long as ``task`` does and names only that object: another task with an equal truth, or
    a copy of ``task`` with its truth replaced, is parsed and validated as before."""
    ref = _TaskRef(task, _forget)
    ref.key = id(task)
    _VOUCHED[ref.key] = (ref, task.truth, truth)


def carry_vouch(task: Task, copy: Task) -> None:
    """``copy`` (``task.model_copy`` with other fields updated) has ``task``'s vouched truth
    if it still holds the very dict vouched for."""
    found = vouched(task)
    if found is not None and copy.truth is task.truth:
        vouch(copy, found)


def vouched(task: Task) -> BaseModel | None:
    """The model vouched for ``task``, if ``task`` still holds the dict it was vouched with."""
    found = _VOUCHED.get(id(task))
    if found is None or found[0]() is not task or found[1] is not task.truth:
        return None
    return found[2]


class TruthCodec(Generic[TruthT]):
    """Parses ``Task.truth`` into ``model``. A frozen model is the one ``vouch``ed for the
    task, if it is of exactly this model; otherwise its parses are memoised for the last
    ``size`` tasks (keyed on the task object itself, which the cache keeps alive, so an id
    is never reused). A mutable model is parsed afresh every time, so that an episode that
    edits its truth cannot leak into the next."""

    def __init__(self, model: type[TruthT], size: int = 512) -> None:
        self.model = model
        self.size = size if model.model_config.get("frozen") else 0
        self._parsed: OrderedDict[int, tuple[Task, TruthT]] = OrderedDict()

    def parse(self, task: Task) -> TruthT:
        if not self.size:
            return self.model.model_validate(task.truth)
        built = vouched(task)
        if type(built) is self.model:
            return built
        key = id(task)
        hit = self._parsed.get(key)
        if hit is not None and hit[0] is task:
            self._parsed.move_to_end(key)
            return hit[1]
        truth = self.model.model_validate(task.truth)
        self._parsed[key] = (task, truth)
        if len(self._parsed) > self.size:
            self._parsed.popitem(last=False)
        return truth


def declared_truth(cls: type, base: type) -> type[BaseModel]:
    """The truth model ``cls`` binds to its generic ``base``'s first parameter
    (``TaskFamily[T]``, ``ToolEnv[T, W]``); ``UntypedTruth`` if it names none."""
    found = type_argument(cls, base, 0)
    return found if isinstance(found, type) and issubclass(found, BaseModel) else UntypedTruth


_CODECS: dict[tuple[type, type], TruthCodec[Any]] = {}


def codec_for(cls: type, base: type) -> TruthCodec[Any]:
    """The one ``TruthCodec`` of ``cls``'s declared truth (see ``declared_truth``)."""
    codec = _CODECS.get((cls, base))
    if codec is None:
        codec = _CODECS[(cls, base)] = TruthCodec(declared_truth(cls, base))
    return codec
