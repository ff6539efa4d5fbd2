"""Bugs derived from the syntax tree (``swe.mutate``): every bug class is proposed, each
mutant rewrites exactly one site (parentheses only where precedence needs them), mutants
that can hang are never chosen, and version 1 task ids still resolve to their own tasks."""

from __future__ import annotations

import ast

from gymforge.core.seeding import rng
from gymforge.envs.swe.families import FAMILIES, _differing
from gymforge.envs.swe.mutate import bugs_of, mutants
from gymforge.envs.swe.repogen import MAX_LINES, UNBOUNDED, outcome
from gymforge.envs.swe.templates import PROJECTS

SOURCE = '''def f(xs, k=2, label="ab", strict=False):
    """A function with one site of every kind."""
    if not xs:
        return 0
    total = 0
    for i in range(1, len(xs)):
        if xs[i] >= k and not strict:
            total += xs[i] * (xs[i - 1] - k)
    return max(total, k) - len(label)
'''


def _by_class(source: str) -> dict[str, list[tuple[str, str]]]:
    out: dict[str, list[tuple[str, str]]] = {}
    for m in mutants(source):
        out.setdefault(m.bug, []).append((m.old, m.new))
    return out


def test_every_bug_class_is_proposed_and_each_mutant_is_one_site() -> None:
    found = _by_class(SOURCE)
    assert set(found) == {
        "off_by_one",
        "wrong_operator",
        "swapped_arguments",
        "missing_edge_case",
        "wrong_default",
    }
    base = ast.dump(ast.parse(SOURCE))
    for m in mutants(SOURCE):
        assert SOURCE.count(m.old) == 1
        mutated = SOURCE.replace(m.old, m.new)
        assert ast.dump(ast.parse(mutated)) != base, m
    pairs = [(m.old, m.new) for m in mutants(SOURCE)]
    assert len(pairs) == len(set(pairs))
    assert mutants(SOURCE) == mutants(SOURCE)  # source order, no set or hash order


def test_rewrites_are_exact_and_parenthesised_only_when_needed() -> None:
    found = _by_class(SOURCE)
    body = "            total += xs[i] * (xs[i - 1] - k)\n"
    assert (body, "            total += xs[i] * (xs[i - 1] + k)\n") in found["wrong_operator"]
    assert (body, "            total += xs[i] * (k - xs[i - 1])\n") in found["swapped_arguments"]
    assert (body, "            total += xs[i] // (xs[i - 1] - k)\n") in found["wrong_operator"]
    guard = "        if xs[i] >= k and not strict:\n"
    assert (guard, "        if xs[i] > k and not strict:\n") in found["off_by_one"]
    assert (guard, "        if xs[i] >= k or not strict:\n") in found["wrong_operator"]
    assert (guard, "        if xs[i] >= k and strict:\n") in found["wrong_operator"]
    ret = "    return max(total, k) - len(label)\n"
    assert (ret, "    return max(k, total) - len(label)\n") in found["swapped_arguments"]
    assert (ret, "    return len(label) - max(total, k)\n") in found["swapped_arguments"]
    assert ("    if not xs:\n        return 0\n", "") in found["missing_edge_case"]
    head = 'def f(xs, k=2, label="ab", strict=False):\n'
    assert (head, head.replace("k=2", "k=3")) in found["wrong_default"]
    assert (head, head.replace('"ab"', "'a'")) in found["wrong_default"]
    assert (head, head.replace("False", "True")) in found["wrong_default"]
    loop = "    for i in range(1, len(xs)):\n"
    assert (loop, "    for i in range(0, len(xs)):\n") in found["off_by_one"]


def test_a_mutant_that_hangs_is_measured_and_never_chosen() -> None:
    slug = PROJECTS["textkit"].fn("slug.unique_slug")
    hang = next(m for m in mutants(slug.source) if m.new.strip() == "n += 0")
    ns: dict[str, object] = {"slugify": lambda t: t.lower()}
    exec(slug.source.replace(hang.old, hang.new), ns)
    assert outcome(ns["unique_slug"], ["a", ["a", "a-2"]], MAX_LINES) == UNBOUNDED  # type: ignore[arg-type]
    good: dict[str, object] = {"slugify": lambda t: t.lower()}
    exec(slug.source, good)
    gen = lambda r: ["a", ["a", "a-2"]]  # noqa: E731
    r = rng("t", 0, "mutate")
    assert _differing(good["unique_slug"], ns["unique_slug"], gen, r) == []


def test_hand_written_bugs_come_first_and_version_1_keeps_them_only() -> None:
    f = PROJECTS["textkit"].fn("words.truncate")
    assert bugs_of(f)[: len(f.mutations)] == f.mutations
    assert len(bugs_of(f)) > len(f.mutations)
    assert bugs_of(f, derived=False) == f.mutations
    fam = next(x for x in FAMILIES if x.name == "swe.bugfix")
    assert fam.version == 2 and not fam.at_version(1).derived_bugs  # type: ignore[attr-defined]
    v1 = fam.resolve("swe.bugfix/v1/d2/s4")
    assert v1.task_id == "swe.bugfix/v1/d2/s4"
