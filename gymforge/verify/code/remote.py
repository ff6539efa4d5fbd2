"""The judge's side of a candidate process: what a test may hand the candidate, and what it
gets back, when that is not plain data.

A HumanEval or MBPP test runs in the judge's process; the candidate runs in the sandbox. Plain
data crosses as plain data. Everything else is one of:

- ``Remote``: an object the candidate returned that is not plain data (an instance of its
  own class, a generator, ...). It stays in the sandbox (the session keeps it under a handle);
  the judge holds a ``Remote`` that can be passed back to the candidate or called, and
  nothing else: comparing, hashing, printing, iterating or reading an attribute of it raises
  ``RemoteValueUsed``, so a test can only ever decide on plain data it decoded itself.
- a name of the task's own module (the HumanEval prompt's helpers, MBPP set-up objects such
  as a tree built by ``test_setup_code``): the sandbox ran the same source before the
  candidate loaded (``SandboxJob.prelude``), so the argument is sent as that name.
- ``Shipped``: a ``lambda`` written in the test. The test code is rewritten so that each
  lambda keeps its source; passed to the candidate, it is rebuilt in the sandbox from that
  source, with the values of the names it uses (each encoded by these same rules).
- a module: sent by name and imported in the sandbox.

Anything else (an object the test built itself from a class the judge holds) cannot be sent
without running test code next to the candidate: the check raises ``Unjudgeable``, and the
verdict says the task cannot be judged honestly (``facts["trainable"] is False``).

**The candidate can never make a task unjudgeable.** An unjudgeable verdict is excluded from
training, so a candidate able to cause one would choose exclusion over failure. What it
returns is either plain builtin data or a ``Remote``, and both can always be sent back by
type; what can stop one being sent is its size or nesting (a list 98 deep crosses out, but
not back inside ``[args, kwargs]``). That is never a property of the task, so it raises
``ArgumentRefused``: the test that needed the argument fails. ``Unjudgeable`` is raised only
for the *type* of a value the test itself made.
"""

from __future__ import annotations

import ast
import dis
import types
from collections.abc import Callable, Iterator
from typing import Any

from gymforge.sandbox.jobs import encode_args
from gymforge.sandbox.wire import Unserialisable, dumps_plain

MAX_TREE_DEPTH = 50


class Unjudgeable(BaseException):
    """The test passes the candidate something that can neither cross as plain data nor be
    built in the sandbox from the task's own source. A ``BaseException`` so that the test
    code's own ``except Exception`` cannot turn it into a pass or a fail."""


class RemoteValueUsed(Exception):
    """The test inspected a value that lives in the sandbox: it counts as a failed test."""


class ArgumentRefused(Exception):
    """An argument is too deep or too large to send to the sandbox. Only a value the
    candidate returned can be (tests' own literals are small), so it is a failed test, never
    an unjudgeable task."""


class Remote:
    """An object kept in the candidate's process. Callable (the call runs there); passing it
    back to the candidate sends its handle; every other use raises ``RemoteValueUsed``."""

    __slots__ = ("_caller", "_gen", "_handle", "_type")
    _caller: Callable[..., Any]
    _gen: int
    _handle: int
    _type: str

    def __init__(self, handle: int, gen: int, type_name: str, caller: Callable[..., Any]) -> None:
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_gen", gen)
        object.__setattr__(self, "_type", type_name)
        object.__setattr__(self, "_caller", caller)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._caller(self, args, kwargs)

    def describe(self) -> str:
        return f"<{self._type} in the sandbox>"


def _refuse(op: str) -> Callable[..., Any]:
    def refuse(self: Remote, *_: Any) -> Any:
        raise RemoteValueUsed(
            f"the test uses {op} on a {object.__getattribute__(self, '_type')} that lives in "
            "the sandbox; a test can only decide on plain data"
        )

    return refuse


_REFUSED = (
    "eq ne lt le gt ge hash bool len iter contains getitem str repr format add radd sub rsub "
    "mul rmul truediv floordiv mod neg abs int float index round reversed getattr setattr"
)
for _op in _REFUSED.split():
    setattr(Remote, f"__{_op}__", _refuse(_op))


class Shipped:
    """A lambda from the test code, with its source: called here it runs here; passed to the
    candidate it is rebuilt in the sandbox from ``src``."""

    __slots__ = ("fn", "src")

    def __init__(self, fn: Callable[..., Any], src: str) -> None:
        self.fn, self.src = fn, src

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


class ShipLambdas(ast.NodeTransformer):
    """``lambda ...: ...`` -> ``__gf_ship__(lambda ...: ..., "lambda ...: ...")`` (names
    ending in two underscores are never mangled in a class body)."""

    def visit_Lambda(self, node: ast.Lambda) -> Any:
        src = ast.unparse(_named_defaults(node))  # before the children change
        self.generic_visit(node)
        call = ast.Call(
            func=ast.Name(id="__gf_ship__", ctx=ast.Load()),
            args=[node, ast.Constant(value=src)],
            keywords=[],
        )
        return ast.copy_location(call, node)


def _named_defaults(node: ast.Lambda) -> ast.Lambda:
    """A copy whose default values are names (``__gf_d0__``...) bound to the defaults the
    judge's lambda was built with: ``lambda x, k=k: ...`` needs no ``k`` in the sandbox."""
    copy = ast.parse(ast.unparse(node), mode="eval").body
    assert isinstance(copy, ast.Lambda)
    a, i = copy.args, 0
    for seq in (a.defaults, a.kw_defaults):
        for j, d in enumerate(seq):
            if d is not None:
                seq[j] = ast.Name(id=f"__gf_d{i}__", ctx=ast.Load())
                i += 1
    return copy


def _plain(v: Any) -> bool:
    try:
        dumps_plain(v, 1 << 28)
    except Unserialisable:
        return False
    return True


class ArgEncoder:
    """Arguments for one call: plain JSON when they are plain data (the common case, and the
    same bytes as before), else argument trees (see ``gymforge.sandbox.child_calls._build``)."""

    def __init__(self, context: dict[str, Any], gen: Callable[[], int]) -> None:
        self._context = context  # holding the values keeps their ids valid
        self._by_id: dict[int, str] | None = None
        self._gen = gen

    @property
    def _names(self) -> dict[int, str]:
        """The context's values that are not plain data, by identity (built on first use)."""
        if self._by_id is None:
            self._by_id = {id(v): k for k, v in self._context.items() if not _plain(v)}
        return self._by_id

    def encode(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[bytes, bool]:
        """``(payload, is_tree)``. Raises ``Unjudgeable`` (a test's value of a type that
        cannot cross), ``ArgumentRefused`` (too deep or large) or ``RemoteValueUsed``."""
        try:
            return encode_args(args, kwargs), False
        except Unserialisable:
            pass
        tree = [[self.tree(a, 0) for a in args], {k: self.tree(v, 0) for k, v in kwargs.items()}]
        try:
            return dumps_plain(tree, 1 << 28), True
        except Unserialisable as e:  # every leaf is plain: only a limit can be hit
            raise ArgumentRefused(f"an argument cannot be sent to the sandbox: {e}") from None

    def tree(self, v: Any, depth: int) -> Any:
        if depth > MAX_TREE_DEPTH:
            raise ArgumentRefused(f"an argument nests deeper than {MAX_TREE_DEPTH} levels")
        t = type(v)
        if t is Remote:
            if object.__getattribute__(v, "_gen") != self._gen():
                raise RemoteValueUsed("the value died with the candidate process that made it")
            return ["h", object.__getattribute__(v, "_handle")]
        if t is Shipped:
            return ["x", v.src, self._bindings(v.fn, depth)]
        if isinstance(v, types.ModuleType):
            return ["m", v.__name__]
        name = getattr(v, "__gf_remote_name__", None) if callable(v) else None
        if isinstance(name, str):
            return ["g", name]
        if id(v) in self._names:
            return ["g", self._names[id(v)]]
        if t in (list, tuple):
            return ["l" if t is list else "t", [self.tree(x, depth + 1) for x in v]]
        if t is dict:
            return ["d", [[self.tree(k, depth + 1), self.tree(x, depth + 1)] for k, x in v.items()]]
        if _plain(v):
            return ["v", v]
        if _builtin_only(v):  # plain data, past a limit (a forged answer can be deeper)
            raise ArgumentRefused(f"a {t.__name__} argument is too deep or large to send")
        raise Unjudgeable(
            f"the test passes a {t.__name__} that is neither plain data nor built from the "
            "task's own source"
        )

    def _bindings(self, fn: Callable[..., Any], depth: int) -> dict[str, Any]:
        """The values a shipped lambda uses: its closure, and the globals it loads."""
        code = getattr(fn, "__code__", None)
        if code is None:
            return {}
        out: dict[str, Any] = {}
        cells = getattr(fn, "__closure__", None) or ()
        for name, cell in zip(code.co_freevars, cells, strict=False):
            try:
                out[name] = self.tree(cell.cell_contents, depth + 1)
            except ValueError:  # an empty cell
                continue
        kwd = getattr(fn, "__kwdefaults__", None) or {}
        defaults = [*(getattr(fn, "__defaults__", None) or ())]
        defaults += [kwd[n] for n in code.co_varnames[code.co_argcount :] if n in kwd]
        for i, value in enumerate(defaults):
            out[f"__gf_d{i}__"] = self.tree(value, depth + 1)
        glb = getattr(fn, "__globals__", {})
        for name in _global_loads(code):
            if name in glb and name not in out and not name.startswith("__gf_"):
                out[name] = self.tree(glb[name], depth + 1)
        return out


_BUILTIN_SCALARS = frozenset({int, float, complex, str, bytes, bool, type(None)})


def _builtin_only(v: Any) -> bool:
    """Is ``v`` made of builtin data only (what the candidate's answers decode to)?"""
    stack, seen = [v], 0
    while stack:
        x = stack.pop()
        seen += 1
        t = type(x)
        if t in _BUILTIN_SCALARS:
            continue
        if t in (list, tuple, set, frozenset) and seen + len(x) < 1 << 22:
            stack.extend(x)
        elif t is dict and seen + 2 * len(x) < 1 << 22:
            stack.extend(x.keys())
            stack.extend(x.values())
        else:
            return False
    return True


def _global_loads(code: types.CodeType) -> Iterator[str]:
    for ins in dis.get_instructions(code):
        if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME") and isinstance(ins.argval, str):
            yield ins.argval
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _global_loads(c)
