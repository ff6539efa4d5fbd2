"""Standard-library values as tagged plain data: the part of the wire format (``wire``) for
values that are not builtin containers but that tests compare all the time. Standard library
only: copied into every sandbox next to ``wire.py``.

Tags (one-key objects, like ``wire``'s own):

- ``{"$counter": [[k, v], ...]}``, ``{"$odict": [[k, v], ...]}``: ``collections.Counter``,
  ``collections.OrderedDict``;
- ``{"$defaultdict": [FACTORY, [[k, v], ...]]}``: a ``defaultdict`` whose factory is ``None``
  or a builtin type (``BUILTIN_TYPES``; a factory of the candidate's own stays in the sandbox);
- ``{"$deque": [[items], maxlen]}``;
- ``{"$ntuple": [name, [fields], [values]]}``: a named tuple;
- ``{"$type": name}``: one of ``BUILTIN_TYPES`` passed as a value (``int``);
- ``{"$enum": [base, name, [[member, value], ...], member]}``: an enum member, ``base`` one of
  ``Enum``, ``IntEnum``, ``StrEnum``, ``Flag``, ``IntFlag``;
- ``{"$dataclass": [name, [eq, order, frozen], [[field, value], ...]]}``: a dataclass instance.

Only exact types, and only classes that leave comparison to the standard library, are
tagged: a ``Counter`` subclass, a named tuple or enum class that defines ``__eq__``, a
dataclass whose ``__eq__`` is not the generated one, cannot cross (they stay in the sandbox,
as every other object does). **Decoding never builds an object of the sender's classes.**
Whoever decodes builds the standard container itself, or a class of its own made from the
tag's names (a named tuple, an enum or a dataclass with the same fields, made once per shape
and cached): equality, hashing and ordering are then the standard library's (``Counter({'a':
1}) == {'a': 1}``, ``Point(1, 2) == (1, 2)``, ``IntEnum`` members equal to their ints), and
never code the sender wrote. Names are checked to be identifiers (no ``_``-prefixed member
or field names), so building those classes interprets no text of the sender's.
"""

from __future__ import annotations

import _thread
import enum
import functools
import json
import keyword
from collections import Counter, OrderedDict, defaultdict, deque, namedtuple
from collections.abc import Callable
from typing import Any

BUILTIN_TYPES: dict[str, type] = {
    t.__name__: t
    for t in (int, float, complex, str, bytes, bool, list, tuple, dict, set, frozenset, object)
}
_TYPE_NAMES = {id(t): n for n, t in BUILTIN_TYPES.items()}
_ENUM_BASES: dict[str, type[enum.Enum]] = {
    "IntFlag": enum.IntFlag,
    "Flag": enum.Flag,
    "IntEnum": enum.IntEnum,
    "StrEnum": getattr(enum, "StrEnum", enum.Enum),
    "Enum": enum.Enum,
}
MAX_NAMES = 256  # fields of a named tuple or dataclass, members of an enum
_COMPARE = ("__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__")


class NotStd(Exception):
    """The value is not one of the tagged standard-library values."""


Enc = Callable[[Any], Any]


def encode(v: Any, t: type, enc: Enc) -> Any:
    """The tagged form of ``v`` (of exact type ``t``), its parts encoded by ``enc``; raises
    ``NotStd`` when ``v`` is none of the tagged values."""
    if t is Counter or t is OrderedDict:
        pairs = [[enc(k), enc(x)] for k, x in dict.items(v)]
        return {"$counter" if t is Counter else "$odict": pairs}
    if t is defaultdict:
        factory = v.default_factory
        name = None if factory is None else _TYPE_NAMES.get(id(factory))
        if factory is not None and (name is None or BUILTIN_TYPES[name] is not factory):
            raise NotStd("a defaultdict whose factory is not a builtin type")
        return {"$defaultdict": [name, [[enc(k), enc(x)] for k, x in dict.items(v)]]}
    if t is deque:
        return {"$deque": [[enc(x) for x in v], v.maxlen]}
    if t is type:
        name = _TYPE_NAMES.get(id(v))
        if name is None or BUILTIN_TYPES[name] is not v:
            raise NotStd(f"the type {_qualname(v)} is not a builtin type")
        return {"$type": name}
    if issubclass(t, tuple):
        fields = _names(t.__dict__.get("_fields") or getattr(t, "_fields", None))
        if len(fields) != tuple.__len__(v) or _overrides(t, tuple):
            raise NotStd("a tuple subclass that is not a plain named tuple")
        return {"$ntuple": [_ident(t.__name__), fields, [enc(x) for x in tuple.__iter__(v)]]}
    if isinstance(v, enum.Enum):
        return _encode_enum(v, t, enc)
    if getattr(t, "__dataclass_fields__", None) is not None:  # as ``dataclasses`` tells
        return _encode_dataclass(v, t, enc)
    raise NotStd(f"type {t.__module__}.{t.__qualname__} is not plain data")


def _encode_enum(v: Any, t: Any, enc: Enc) -> Any:
    base = next(n for n, b in _ENUM_BASES.items() if issubclass(t, b))
    if _overrides(t, _ENUM_BASES[base]):
        raise NotStd("an enum that defines its own comparison")
    members = list(t.__members__.items())
    if len(members) > MAX_NAMES:
        raise NotStd("an enum with too many members")
    name = v._name_
    if not isinstance(name, str) or t.__members__.get(name) is not v:
        raise NotStd("an enum value that is not one of its class's members")
    pairs = [[_ident(n), enc(m._value_)] for n, m in members]
    return {"$enum": [base, _ident(t.__name__), pairs, name]}


def _encode_dataclass(v: Any, t: type, enc: Enc) -> Any:
    import dataclasses  # here: the sandbox's start-up (and every fork of it) stays small

    p = t.__dataclass_params__  # type: ignore[attr-defined]
    eq, order, frozen = bool(p.eq), bool(p.order), bool(p.frozen)
    fields = [f.name for f in dataclasses.fields(t)]
    _names(tuple(fields))
    if eq and not _generated(t.__dict__.get("__eq__"), tuple(fields)):
        raise NotStd("a dataclass that defines its own __eq__")
    values = [[f, enc(object.__getattribute__(v, f))] for f in fields]
    return {"$dataclass": [_ident(t.__name__), [eq, order, frozen], values]}


def _generated(fn: Any, fields: tuple[str, ...]) -> bool:
    """Is ``fn`` the ``__eq__`` that ``dataclasses`` generates for these fields (the same
    code as the one it generates for a class of ours)?"""
    code = getattr(fn, "__code__", None)
    ref = _dataclass_class("Ref", fields, True, False, False).__eq__.__code__
    return type(code) is type(ref) and all(
        getattr(code, k) == getattr(ref, k) for k in ("co_code", "co_names", "co_consts")
    )


def _overrides(t: type, base: type) -> bool:
    """Does a class between ``t`` and ``base`` define a comparison of its own?"""
    for c in t.__mro__:
        if c is base:
            return False
        if any(k in c.__dict__ for k in _COMPARE):
            return True
    return True


def _qualname(v: Any) -> str:
    try:
        return str(v.__qualname__)[:100]
    except BaseException:
        return "?"


def _ident(name: Any) -> str:
    if (
        type(name) is not str
        or not name.isidentifier()
        or keyword.iskeyword(name)
        or name.startswith("_")
        or len(name) > 200
    ):
        raise NotStd(f"{str(name)[:50]!r} is not a plain identifier")
    return name


def _names(fields: Any) -> list[str]:
    if type(fields) not in (tuple, list) or len(fields) > MAX_NAMES:
        raise NotStd("not a plain list of names")
    out = [_ident(f) for f in fields]
    if len(set(out)) != len(out):
        raise NotStd("repeated names")
    return out


# ---------------------------------------------------------------------------- decoding

TAGS = frozenset(
    {"$counter", "$odict", "$defaultdict", "$deque", "$ntuple", "$type", "$enum", "$dataclass"}
)
Dec = Callable[[Any], Any]
Pairs = Callable[[Any], tuple[list[Any], list[Any]]]


def decode(key: str, val: Any, dec: Dec, pairs: Pairs) -> Any:
    """The value of tag ``key``: ``dec`` decodes one part, ``pairs`` a ``[[k, v], ...]`` list
    into ``(keys, values)`` (refusing hash-flooded keys). Raises ``NotStd`` when malformed."""
    try:
        return _decode(key, val, dec, pairs)
    except (TypeError, ValueError, KeyError, IndexError, AttributeError) as e:
        raise NotStd(f"malformed {key}: {e}"[:300]) from None


def _decode(key: str, val: Any, dec: Dec, pairs: Pairs) -> Any:
    if key == "$type":
        return BUILTIN_TYPES[val] if type(val) is str else BUILTIN_TYPES[""]
    if type(val) is not list:
        raise NotStd(f"{key} wants a list")
    if key in ("$counter", "$odict"):
        keys, values = pairs(val)
        made: dict[Any, Any] = Counter() if key == "$counter" else OrderedDict()
        dict.update(made, zip(keys, values, strict=True))  # Counter.update would add counts
        return made
    if key == "$defaultdict":
        factory, items = val
        keys, values = pairs(items)
        dd: defaultdict[Any, Any] = defaultdict(None if factory is None else BUILTIN_TYPES[factory])
        dd.update(zip(keys, values, strict=True))
        return dd
    if key == "$deque":
        items, maxlen = val
        if maxlen is not None and (type(maxlen) is not int or maxlen < 0):
            raise NotStd("a deque's maxlen is a natural number")
        return deque([dec(x) for x in _list(items)], maxlen)
    if key == "$ntuple":
        name, fields, items = val
        cls = _ntuple_class(_ident(name), tuple(_names(fields)))
        values = [dec(x) for x in _list(items)]
        return cls(*values)
    if key == "$enum":
        base, name, members, member = val
        names = _names([m[0] for m in _list(members)])
        values = [dec(m[1]) for m in members]
        spec = json.dumps([base, name, members], sort_keys=True)
        cls = _enum_class(spec, base, _ident(name), list(zip(names, values, strict=True)))
        return cls[member]
    if key == "$dataclass":
        name, (eq, order, frozen), fields = val
        names = _names([f[0] for f in _list(fields)])
        flags = (eq is True, order is True, frozen is True)
        cls = _dataclass_class(_ident(name), tuple(names), *flags)
        obj = object.__new__(cls)
        for f, (_, x) in zip(names, fields, strict=True):
            object.__setattr__(obj, f, dec(x))
        return obj
    raise NotStd(f"unknown tag {key!r}")


def _list(v: Any) -> list[Any]:
    if type(v) is not list:
        raise NotStd("a tag's part must be a list")
    return v


@functools.lru_cache(maxsize=256)
def _ntuple_class(name: str, fields: tuple[str, ...]) -> Any:
    return namedtuple(name, fields)


_ENUMS: dict[str, Any] = {}  # one class per enum shape (its tag's JSON), at most 256
_ENUMS_LOCK = _thread.allocate_lock()  # not ``threading``: the sandbox never imports it


def _enum_class(spec: str, base: str, name: str, members: list[tuple[str, Any]]) -> Any:
    """The one class of this shape: members of two decodes of it are the same objects."""
    with _ENUMS_LOCK:
        cls = _ENUMS.get(spec)
        if cls is None:
            if len(_ENUMS) >= 256:
                _ENUMS.clear()
            make: Any = _ENUM_BASES[base]
            cls = _ENUMS[spec] = make(name, members)
        return cls


_DATACLASSES: dict[tuple[Any, ...], Any] = {}  # one class per dataclass shape, at most 256
_DATACLASSES_LOCK = _thread.allocate_lock()


def _dataclass_class(
    name: str, fields: tuple[str, ...], eq: bool, order: bool, frozen: bool
) -> Any:
    """The one class of this shape: a generated ``__eq__`` is False for an instance of
    another class, so two decodes of equal values must share it. Made under a lock (two
    judge threads decoding a new shape at once each made one under ``lru_cache``)."""
    key = (name, fields, eq, order, frozen)
    with _DATACLASSES_LOCK:
        cls = _DATACLASSES.get(key)
        if cls is None:
            import dataclasses

            if len(_DATACLASSES) >= 256:
                _DATACLASSES.clear()
            cls = _DATACLASSES[key] = dataclasses.make_dataclass(
                name, list(fields), eq=eq, order=order and eq, frozen=frozen, namespace={}
            )
        return cls
