"""Seeded bugs found in a function's source by its syntax tree, not written by hand.

``mutants(source)`` walks the function's AST and proposes, per bug class, every one-site
change it supports, each as a ``Mutation``: the whole source line(s) holding the site (so the
snippet is unique in the function, or the family skips it) and the line with the site
rewritten. Whether a mutant is a *bug* is decided by behaviour, not here: the family keeps
only mutants whose output differs from the correct function on at least two seeded inputs,
which also drops equivalent mutants.

- ``off_by_one``: ``<`` and ``<=``, ``>`` and ``>=`` exchanged; an integer literal moved by 1;
- ``wrong_operator``: ``+``/``-``, ``*``/``//``, ``==``/``!=``, ``in``/``not in``,
  ``is``/``is not``, ``and``/``or`` exchanged; a ``not`` dropped;
- ``swapped_arguments``: the first two positional arguments of a call exchanged; the
  operands of ``-``, ``//``, ``/``, ``%`` or ``+`` exchanged;
- ``missing_edge_case``: an ``if`` guard without ``else`` whose body returns, raises,
  continues or breaks, deleted;
- ``wrong_default``: a literal default of a parameter changed (int by 1, a string cut or
  extended, a bool flipped).
"""

from __future__ import annotations

import ast
import copy
import functools
from collections.abc import Iterator

from gymforge.envs.swe.projects import Fn, Mutation

_SAME_PRECEDENCE: dict[type, type] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.FloorDiv,
    ast.FloorDiv: ast.Mult,
}
_OFF_BY_ONE: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}
_WRONG_COMPARE: dict[type, type] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_NON_COMMUTATIVE = (ast.Sub, ast.FloorDiv, ast.Div, ast.Mod, ast.Add)
_GUARD_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def bugs_of(f: Fn, derived: bool = True) -> tuple[Mutation, ...]:
    """The bugs a function can carry: its template's hand-written mutations, then (with
    ``derived``) every mutant of its source that is not one of them."""
    if not derived:
        return f.mutations
    written = {(m.old, m.new) for m in f.mutations}
    return f.mutations + tuple(m for m in mutants(f.source) if (m.old, m.new) not in written)


@functools.lru_cache(maxsize=256)
def mutants(source: str) -> tuple[Mutation, ...]:
    """Every one-site mutant of the function in ``source``, in source order, without
    duplicates: each rewrites exactly its site (the mutated source parses to the tree with
    that one node replaced; parentheses are added only where precedence needs them)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    parents = {id(c): p for p in ast.walk(tree) for c in ast.iter_child_nodes(p)}
    seen: set[tuple[str, str]] = set()
    out: list[Mutation] = []
    for bug, node, new in _sites(tree):
        want = _dump_with(tree, parents, node, new)
        for m in _line_mutations(bug, lines, node, new):
            if (m.old, m.new) in seen or source.count(m.old) != 1:
                continue
            try:
                got = ast.dump(ast.parse(source.replace(m.old, m.new)))
            except SyntaxError:
                continue
            if got == want:
                seen.add((m.old, m.new))
                out.append(m)
                break
    return tuple(out)


def _dump_with(
    tree: ast.Module, parents: dict[int, ast.AST], node: ast.AST, new: ast.AST | None
) -> str:
    """The tree's dump with ``node`` replaced by ``new`` (removed when None)."""
    parent = parents[id(node)]
    for name, value in ast.iter_fields(parent):
        if value is node:
            setattr(parent, name, new)
            try:
                return ast.dump(tree)
            finally:
                setattr(parent, name, node)
        if isinstance(value, list) and any(v is node for v in value):
            i = next(i for i, v in enumerate(value) if v is node)
            changed = value[:i] + ([] if new is None else [new]) + value[i + 1 :]
            setattr(parent, name, changed)
            try:
                return ast.dump(tree)
            finally:
                setattr(parent, name, value)
    raise ValueError("node not found under its parent")


def _sites(tree: ast.Module) -> Iterator[tuple[str, ast.AST, ast.AST | None]]:
    """(bug class, the node, its replacement; None deletes the statement)."""
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    defaults = {id(d) for d in [*fn.args.defaults, *fn.args.kw_defaults] if d is not None}
    for d in [*fn.args.defaults, *fn.args.kw_defaults]:
        if isinstance(d, ast.Constant):
            for v in _other_values(d.value):
                yield "wrong_default", d, ast.Constant(v)
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            op = type(node.ops[0])
            for table, bug in ((_OFF_BY_ONE, "off_by_one"), (_WRONG_COMPARE, "wrong_operator")):
                if op in table:
                    yield bug, node, _replace(node, ops=[table[op]()])
        elif isinstance(node, ast.BinOp):
            if type(node.op) in _SAME_PRECEDENCE:
                yield "wrong_operator", node, _replace(node, op=_SAME_PRECEDENCE[type(node.op)]())
            if isinstance(node.op, _NON_COMMUTATIVE) and ast.dump(node.left) != ast.dump(
                node.right
            ):
                yield "swapped_arguments", node, _replace(node, left=node.right, right=node.left)
        elif isinstance(node, ast.BoolOp):
            other = ast.Or() if isinstance(node.op, ast.And) else ast.And()
            yield "wrong_operator", node, _replace(node, op=other)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield "wrong_operator", node, node.operand
        elif isinstance(node, ast.Call):
            pos = [a for a in node.args if not isinstance(a, ast.Starred)]
            distinct = len(pos) >= 2 and ast.dump(pos[0]) != ast.dump(pos[1])
            if distinct and len(pos) == len(node.args):
                args = [pos[1], pos[0], *pos[2:]]
                yield "swapped_arguments", node, _replace(node, args=args)
        elif (
            isinstance(node, ast.Constant)
            and type(node.value) is int
            and id(node) not in defaults
            and abs(node.value) <= 1000
        ):
            for v in (node.value + 1, node.value - 1):
                yield "off_by_one", node, ast.Constant(v)
        elif isinstance(node, ast.If) and _is_guard(node):
            yield "missing_edge_case", node, None


def _is_guard(node: ast.If) -> bool:
    return not node.orelse and isinstance(node.body[-1], _GUARD_ENDS)


def _other_values(v: object) -> list[str | int | bool]:
    if type(v) is bool:
        return [not v]
    if type(v) is int:
        return [v + 1, v - 1]
    if type(v) is str:
        return [v[:-1], v + v[-1:]] if v else [" "]
    return []


def _replace(node: ast.AST, **fields: object) -> ast.AST:
    new = copy.copy(node)
    for k, v in fields.items():
        setattr(new, k, v)
    return new


def _line_mutations(
    bug: str, lines: list[str], node: ast.AST, new: ast.AST | None
) -> Iterator[Mutation]:
    """The node's whole lines, and those lines with the node rewritten (bare, then in
    parentheses) or removed."""
    start, end = getattr(node, "lineno", None), getattr(node, "end_lineno", None)
    if start is None or end is None:
        return
    if new is None:  # a deleted statement: its lines go
        yield Mutation(bug, "".join(lines[start - 1 : end]), "")
        return
    if start != end:
        return  # one-line sites only: the rewrite stays exact
    line = lines[start - 1]
    col, end_col = node.col_offset, node.end_col_offset  # type: ignore[attr-defined]
    text = ast.unparse(new)
    for t in (text, f"({text})"):
        rewritten = line[:col] + t + line[end_col:]
        if rewritten != line:
            yield Mutation(bug, line, rewritten)
