"""Whose names an MBPP test uses: the names a piece of code binds (``bound_names``), the
builtin names that are the task's own functions (``tested_builtins``), and the names the
asserts take from the candidate (``mbpp_names``). Read from the source, never run."""

from __future__ import annotations

import ast
import builtins
import copy
import functools
from typing import Any

BUILTIN_NAMES = frozenset(dir(builtins))


def reads_nothing(node: ast.AST) -> bool:
    """Does this test read no name at all (``assert True, "This prints if this assert fails"``,
    ``assert 1 == 1``: published HumanEval checks have them)?"""
    return not any(isinstance(n, ast.Name) for n in ast.walk(node))


_REFLEXIVE = (ast.Eq, ast.Is, ast.LtE, ast.GtE)


class _AsAnswer(ast.NodeTransformer):
    def __init__(self, aliases: frozenset[str]) -> None:
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name(id="__gf_answer__", ctx=ast.Load()) if node.id in self.aliases else node


def decides_nothing(test: ast.AST, aliases: frozenset[str] = frozenset()) -> bool:
    """Is an assert's ``test`` true of every answer, so not a test of the answer? It reads no
    name, or it compares a value with itself: the same expression on every side of ``==``,
    ``is``, ``<=`` or ``>=`` once ``aliases``, names of one same function, are one name
    (HumanEval/33's ``tuple(candidate(x)) == tuple(sort_third(x))``: the check's parameter
    and the entry point are both the answer). Such an assert is never counted, nor run
    (``DropUndecisive``)."""
    if reads_nothing(test):
        return True
    if not isinstance(test, ast.Compare) or not all(isinstance(o, _REFLEXIVE) for o in test.ops):
        return False
    sides = {
        ast.dump(_AsAnswer(aliases).visit(copy.deepcopy(o))) for o in [test.left, *test.comparators]
    }
    return len(sides) == 1


class DropUndecisive(ast.NodeTransformer):
    """Each ``assert`` that ``decides_nothing`` becomes ``pass``: uncounted, and unable to
    stop the check (an answer that made its self-comparison fail would cut the tests after
    it)."""

    def __init__(self, aliases: frozenset[str]) -> None:
        self.aliases = aliases

    def visit_Assert(self, node: ast.Assert) -> ast.AST:
        if decides_nothing(node.test, self.aliases):
            return ast.copy_location(ast.Pass(), node)
        return node


def humaneval_answer_names(test: str, entry: str) -> frozenset[str]:
    """The names a HumanEval check calls the answer by: ``check``'s parameter and the entry
    point's own name (HumanEval/33 uses both)."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return frozenset({entry})
    params = {
        a.arg
        for n in tree.body
        if isinstance(n, ast.FunctionDef) and n.name == "check"
        for a in n.args.args[:1]
    }
    return frozenset({entry, *params})


@functools.lru_cache(maxsize=8192)
def mbpp_test_decides_nothing(test: str) -> bool:
    """An MBPP test all of whose asserts ``decides_nothing`` (and that does nothing else);
    an MBPP test's names are all distinct."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False  # it fails when run, as a test
    if reads_nothing(tree):
        return True
    return bool(tree.body) and all(
        isinstance(n, ast.Assert) and decides_nothing(n.test) for n in tree.body
    )


def counted_tests(truth: dict[str, Any]) -> int:
    """How many of a HumanEval or MBPP task's tests can tell answers apart (not
    ``decides_nothing``); -1 when the test code does not parse. A task with none cannot be
    graded: its loader refuses it."""
    try:
        if truth.get("kind") == "humaneval":
            tree = ast.parse(str(truth.get("test") or ""))
            names = humaneval_answer_names(str(truth.get("test") or ""), truth["entry_point"])
            asserts = [n.test for n in ast.walk(tree) if isinstance(n, ast.Assert)]
            return sum(not decides_nothing(a, names) for a in asserts)
        tests = truth.get("test_list") or []
        for t in tests:
            ast.parse(t)
        return sum(not mbpp_test_decides_nothing(t) for t in tests)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return -1


def bound_names(src: str, top: bool = False) -> set[str]:
    """Names ``src`` binds (``top``: at module level only); empty when it does not parse."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return set()
    out: set[str] = set()
    for n in tree.body if top else ast.walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            out.update(x.id for t in targets for x in ast.walk(t) if isinstance(x, ast.Name))
        elif not top and isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            out.add(n.id)
        elif not top and isinstance(n, ast.alias):
            out.add((n.asname or n.name).split(".")[0])
    return out


def tested_builtins(truth: dict[str, Any], code: str) -> frozenset[str]:
    """Builtin names that are the task's own functions in an MBPP test (task 126 tests a
    function named ``sum``): the builtin names the task's reference defines, or, for a task
    without one, those the candidate defines that every assert calls, when the asserts take
    no other name from the candidate (a builtin the asserts check another function's result
    with, ``set(uniq(x)) == set(y)``, is never the candidate's: it would decide both sides).
    Only these are the candidate's in the test; any other builtin the candidate rebinds stays
    the builtin there, so redefining ``sorted`` or ``len`` cannot change how a test checks a
    result."""
    if truth.get("kind") != "mbpp":
        return frozenset()
    reference = truth.get("reference")
    if reference:
        return frozenset(bound_names(str(reference), top=True) & BUILTIN_NAMES)
    own = bound_names(code, top=True) & BUILTIN_NAMES
    for test in truth["test_list"]:
        try:
            tree = ast.parse(test)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            return frozenset()
        own &= {
            n.func.id
            for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)
        }
    if own and set(mbpp_names(truth, frozenset(own))) - own:
        return frozenset()  # the function tested is another name: the builtins check it
    return frozenset(own)


def mbpp_names(truth: dict[str, Any], tested: frozenset[str] = frozenset()) -> list[str]:
    """Names the asserts use that builtins (but the ``tested`` ones), the imports and the
    set-up code do not provide, in order: the candidate's."""
    defined: set[str] = set()
    for src in [truth.get("test_setup_code") or "", *(truth.get("test_imports") or [])]:
        defined |= bound_names(src)
    builtin_names = BUILTIN_NAMES - tested
    names: list[str] = []
    for test in truth["test_list"]:
        tree = ast.parse(test)
        bound = {
            n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        } | {n.arg for n in ast.walk(tree) if isinstance(n, ast.arg)}
        for n in ast.walk(tree):
            if (
                isinstance(n, ast.Name)
                and isinstance(n.ctx, ast.Load)
                and n.id not in builtin_names
                and n.id not in defined
                and n.id not in bound
                and n.id not in names
            ):
                names.append(n.id)
    return names


def reference_imports(reference: str, truth: dict[str, Any]) -> list[str]:
    """The module-level imports of an MBPP row's reference that bind a name its asserts read
    and nothing else provides (task 596: the asserts call ``sys.getsizeof``, the reference
    imports ``sys``). MBPP's harness runs the asserts in the solution's namespace, where such
    an import binds the name; read here, it joins the row's ``test_imports`` (the module,
    never the answer's)."""
    wanted = set(mbpp_names(truth, tested_builtins({**truth, "reference": reference}, "")))
    try:
        tree = ast.parse(reference)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return []
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    others = ast.Module(body=[n for n in tree.body if n not in imports], type_ignores=[])
    wanted -= bound_names(ast.unparse(others), top=True)  # the reference's own: the answer's
    out: list[str] = []
    for n in imports:
        if isinstance(n, ast.ImportFrom) and n.level:
            continue
        keep = [
            a for a in n.names if a.name != "*" and (a.asname or a.name).split(".")[0] in wanted
        ]
        if keep:
            n.names = keep
            out.append(ast.unparse(n))
    return out


def unreadable_uses(truth: dict[str, Any]) -> list[str]:
    """``name.attr`` in an MBPP assert where ``name`` is the answer's (``mbpp_names``): the
    answer's names reach the test as calls into the sandbox, so such a test fails whatever
    the answer (``sys.getsizeof`` with no import of ``sys`` to read). A row with one cannot
    be graded as published: its loader refuses it."""
    names = set(mbpp_names(truth, tested_builtins(truth, "")))
    found: list[str] = []
    for test in truth["test_list"]:
        for n in ast.walk(ast.parse(test)):
            if not (isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)):
                continue
            use = f"{n.value.id}.{n.attr}"
            if n.value.id in names and use not in found:
                found.append(use)
    return found
