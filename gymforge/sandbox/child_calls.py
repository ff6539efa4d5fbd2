"""The job child's answer to one call of the function-call service (``child.run_calls``):
the arguments decoded (plain JSON, or argument trees: ``_build``), the named global or a kept
object called, and the return value encoded as plain JSON, kept for the judge to pass back
(``keep``: a handle), or reported as an exception; and how the harness names what untrusted
code raised (``_name``, ``_msg``: never trusting its ``__str__`` or type name to behave).
Standard library only (copied into the sandbox next to ``child.py``, which imports it).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

# The sandbox runs these files with their own directory on sys.path (sibling imports by
# bare name); the type checker sees the same files as modules of this package.
if TYPE_CHECKING:
    from gymforge.sandbox import wire
else:
    import wire

_MSG_CAP = 2000


def _name(e: BaseException) -> str:
    try:
        n = type(e).__name__
        return n if type(n) is str else "?"
    except BaseException:
        return "?"


def _msg(e: BaseException) -> str:
    try:
        s = str(e)
        return s[:_MSG_CAP] if type(s) is str else "?"
    except BaseException:
        return "?"


MAX_KEPT = 10_000  # objects a session keeps for the judge to pass back (``keep``)


def _call(
    mod: types.ModuleType,
    hdr: dict[str, Any],
    blobs: list[bytes],
    max_bytes: int,
    kept: dict[int, Any],
) -> tuple[dict[str, Any], tuple[bytes, ...]]:
    """One call. Plain form: ``[args, kwargs]`` of plain data, calling the global ``name``.
    ``form == "tree"``: the arguments are argument trees (``_build``) and ``target``, if
    set, names a kept object to call. With ``keep``, a return value that is not plain data
    stays here and the answer is a handle to it (status ``ref``)."""
    out: dict[str, Any] = {"ev": "result", "id": hdr.get("id")}
    try:
        args, kwargs = wire.loads_plain(blobs[0])
        if hdr.get("form") == "tree":
            args = [_build(a, mod, kept) for a in args]
            kwargs = {str(k): _build(v, mod, kept) for k, v in kwargs.items()}
        target = hdr.get("target")
        if target is not None:
            fn = kept[target]
        else:
            name = hdr["name"]
            if name not in mod.__dict__:
                raise NameError(f"name {name!r} is not defined")
            fn = mod.__dict__[name]
        value = fn(*args, **kwargs)
    except BaseException as e:
        out.update(status="exception", etype=_name(e), msg=_msg(e))
        return out, ()
    try:
        data = wire.dumps_plain(value, max_bytes)
    except BaseException as e:
        if hdr.get("keep") and len(kept) < MAX_KEPT:
            kept[len(kept)] = value
            out.update(status="ref", handle=len(kept) - 1, type=_type_name(value))
            return out, ()
        msg = _msg(e) if isinstance(e, wire.Unserialisable) else f"{_name(e)}: {_msg(e)}"
        out.update(status="unserialisable", msg=msg)
        return out, ()
    out["status"] = "ok"
    return out, (data,)


def _type_name(v: Any) -> str:
    try:
        n = type(v).__name__
        return n[:100] if type(n) is str else "?"
    except BaseException:
        return "?"


def _build(t: Any, mod: types.ModuleType, kept: dict[int, Any]) -> Any:
    """An argument from the judge's tree: ``["v", plain]``, ``["h", handle]`` (a kept
    object), ``["g", name]`` (a global of the module), ``["m", name]`` (a module),
    ``["l"|"t", [trees]]``, ``["d", [[key, value] trees]]``, or ``["x", source, {name:
    tree}]``: an expression (a test's lambda) evaluated here over the module's globals."""
    tag, v = t[0], t[1]
    if tag == "v":
        return v
    if tag == "h":
        return kept[v]
    if tag == "g":
        return mod.__dict__[v]
    if tag == "m":
        import importlib

        return importlib.import_module(v)
    if tag in ("l", "t"):
        items = [_build(x, mod, kept) for x in v]
        return items if tag == "l" else tuple(items)
    if tag == "d":
        return {_build(k, mod, kept): _build(x, mod, kept) for k, x in v}
    if tag == "x":
        ns = dict(mod.__dict__)
        ns.update({k: _build(x, mod, kept) for k, x in t[2].items()})
        return eval(compile(v, "<judge argument>", "eval"), ns)
    raise ValueError(f"bad argument tree tag {tag!r}")


# Before any candidate runs (see ``pinned_builtins.pin_builtins``): this module keeps the real
# builtins, as ``child`` does.
wire.pin_builtins(globals())
