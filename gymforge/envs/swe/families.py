"""The ``swe`` task families: a seeded repository and an issue to resolve in it.

- ``swe.bugfix``: a seeded bug (off-by-one, wrong operator, swapped arguments, missing edge
  case) in one function; the issue shows a failing call, not the diff. The bugs are the
  template's hand-written mutations and every mutant the syntax tree offers (``mutate``),
  kept only where behaviour differs on seeded inputs.
- ``swe.cross_module``: the symptom shows in a function of one module, the bug is in a
  function of another that it reaches through ``distance`` calls.
- ``swe.feature``: the issue specifies a new function; hidden tests check it.
- ``swe.refactor``: rename (and maybe move) a function as the issue says, update its callers
  and tests; behaviour must stay the same and the old name must be gone.

Knobs: ``size`` (filler modules), ``distractors`` (other issues in the tracker), and for
``swe.cross_module`` ``distance``. Held out whole: ``swe.bugfix_wrong_default`` (the
``wrong_default`` bug class) and ``swe.gridlib`` (bug fixes in the ``gridlib`` project
template); no training family uses either.
"""

from __future__ import annotations

import random
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from gymforge.core.types import Task
from gymforge.envs.swe.edits import edits_between
from gymforge.envs.swe.issues import bug_issue, distractors, feature_issue, refactor_issue
from gymforge.envs.swe.mutate import bugs_of
from gymforge.envs.swe.projects import BUG_CLASSES, Mutation, Project
from gymforge.envs.swe.repogen import (
    MAX_LINES,
    PROTECTED,
    UNBOUNDED,
    Unit,
    add_fillers,
    callers,
    load,
    outcome,
    rename,
    render,
    units_of,
)
from gymforge.envs.swe.templates import HELD_OUT_PROJECT, PROJECTS, TRAIN_PROJECTS
from gymforge.envs.swe.truth import ABSENT, Check, Issue, SweTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split, TaskFamily
from gymforge.tasks.family import Knob

HELD_OUT_CLASS = "wrong_default"
TRAIN_CLASSES = tuple(c for c in BUG_CLASSES if c != HELD_OUT_CLASS)
N_SYMPTOM, N_CAUSE, N_REGRESSION, N_VISIBLE, DRAWS = 4, 2, 4, 2, 80


@dataclass
class Draft:
    """What a family decided: the starting and the fixed repository, checks, the issue."""

    start: list[Unit]
    solution: list[Unit]
    checks: list[Check]
    title: str
    body: str
    labels: list[str]
    protected: tuple[str, ...] = PROTECTED
    renamed: tuple[str, str] | None = None  # refactor: (old key, new key)


def _target(project: Project, u: Unit) -> str:
    return f"{project.package}.{u.module}:{u.name}"


def _inputs(gen: Any, r: random.Random, n: int = DRAWS) -> list[list[Any]]:
    seen: list[list[Any]] = []
    for _ in range(n):
        args = gen(r)
        if args not in seen:
            seen.append(args)
    return seen


def _regression(
    project: Project, units: list[Unit], gens: dict[str, Any], skip: set[str], r: random.Random
) -> list[Check]:
    fns = load(units)
    pool = [u for u in units if u.key not in skip]
    out = []
    for u in r.sample(pool, min(N_REGRESSION, len(pool))):
        for args in _inputs(gens[u.key], r, 5):
            want = outcome(fns[u.key], args)
            if not (isinstance(want, tuple) and want[:1] == ("raises",)):
                out.append(
                    Check(
                        name=f"regression_{u.key}",
                        target=_target(project, u),
                        args=args,
                        expected=want,
                    )
                )
                break
    return out


def _mutated(units: list[Unit], key: str, m: Mutation) -> list[Unit] | None:
    u = next(x for x in units if x.key == key)
    if u.source.count(m.old) != 1:
        return None
    bad = Unit(u.module, u.name, u.source.replace(m.old, m.new), u.uses)
    return [bad if x.key == key else x for x in units]


def _differing(good: Any, bad: Any, gen: Any, r: random.Random) -> list[tuple[list[Any], Any, Any]]:
    out = []
    for args in _inputs(gen, r):
        want, got = outcome(good, args), outcome(bad, args, MAX_LINES)
        if got == UNBOUNDED:
            return []  # a mutant that can hang is not a bug to train on
        if isinstance(want, tuple) and want[:1] == ("raises",):
            continue
        if got != want or type(got) is not type(want):
            out.append((args, want, got))
    return out


def _bug(
    project: Project,
    units: list[Unit],
    gens: dict[str, Any],
    params: dict[str, Any],
    r: random.Random,
    classes: tuple[str, ...],
    cross: bool,
    derived: bool,
) -> Draft:
    good = load(units)
    options: list[tuple[int, str, Mutation, str]] = []
    for f in project.fns:
        for m in bugs_of(f, derived):
            if m.bug not in classes:
                continue
            if not cross:
                options.append((0, f.key, m, f.key))
                continue
            for s, d in callers(units, f.key).items():
                if s.split(".")[0] != f.module and d <= params["distance"]:
                    options.append((d, f.key, m, s))
    r.shuffle(options)
    options.sort(key=lambda o: -o[0])  # the farthest symptom the knob allows first
    for _, key, m, symptom in options:
        start = _mutated(units, key, m)
        if start is None:
            continue
        bad = load(start)
        seen = _differing(good[symptom], bad[symptom], gens[symptom], r)
        if len(seen) < 2:
            continue
        su = next(u for u in units if u.key == symptom)
        checks = [
            Check(name=f"symptom_{i}", target=_target(project, su), args=a, expected=w)
            for i, (a, w, _) in enumerate(seen[: N_SYMPTOM + 1])
        ]
        checks[0] = checks[0].model_copy(update={"name": "issue_example"})
        if symptom != key:
            cu = next(u for u in units if u.key == key)
            cause = _differing(good[key], bad[key], gens[key], r)[:N_CAUSE]
            checks += [
                Check(name=f"cause_{i}", target=_target(project, cu), args=a, expected=w)
                for i, (a, w, _) in enumerate(cause)
            ]
        checks += _regression(project, units, gens, {key, symptom}, r)
        args, want, got = seen[0]
        title, body = bug_issue(project, su, args, want, got, r)
        return Draft(start, units, checks, title, body, ["bug"])
    raise ValueError(f"no viable bug in {project.package} for {params}")


def _feature(project: Project, units: list[Unit], gens: dict[str, Any], r: random.Random) -> Draft:
    feat = r.choice(project.features)
    opt = r.choice(feat.options)
    source = feat.source.format(**opt)
    new = Unit(feat.module, feat.name, source, feat.uses)
    # before the module's last function: the reference edit then spans the insertion point,
    # so it cannot apply twice (a repeated insertion would duplicate the function)
    last = max(i for i, u in enumerate(units) if u.module == feat.module)
    solution = [*units[:last], new, *units[last:]]
    fn = load(solution)[new.key]
    cases = []
    for args in _inputs(feat.gen, r):
        want = outcome(fn, args)
        if not (isinstance(want, tuple) and want[:1] == ("raises",)):
            cases.append((args, want))
    checks = [
        Check(name=f"feature_{i}", target=_target(project, new), args=a, expected=w)
        for i, (a, w) in enumerate(cases[:6])
    ]
    checks += _regression(project, units, gens, set(), r)
    title, body = feature_issue(project, feat, opt, cases[0])
    return Draft(units, solution, checks, title, body, ["enhancement"])


def _refactor(project: Project, units: list[Unit], gens: dict[str, Any], r: random.Random) -> Draft:
    f = r.choice([f for f in project.fns if f.aliases])
    new_name = r.choice(f.aliases)
    taken = {u.module for u in units}
    move = r.random() < 0.5
    new_module = (
        r.choice([m for m in ("core", "common", "helpers") if m not in taken]) if move else None
    )
    solution = rename(units, f.key, new_name, new_module)
    fns = load(solution)
    moved = next(u for u in solution if u.name == new_name)
    checks = []
    for i, args in enumerate(_inputs(f.gen, r)[:4]):
        want = outcome(fns[moved.key], args)
        if not (isinstance(want, tuple) and want[:1] == ("raises",)):
            checks.append(
                Check(name=f"new_api_{i}", target=_target(project, moved), args=args, expected=want)
            )
    for key in sorted(callers(solution, moved.key)):
        cu = next(u for u in solution if u.key == key)
        for i, args in enumerate(_inputs(gens[key], r)[:2]):
            want = outcome(fns[key], args)
            checks.append(
                Check(
                    name=f"caller_{key}_{i}", target=_target(project, cu), args=args, expected=want
                )
            )
    checks.append(
        Check(
            name="old_name_removed",
            target=f"{ABSENT}{project.package}.{f.module}:{f.name}",
            expected=True,
        )
    )
    title, body = refactor_issue(project, f.module, f.name, new_name, new_module)
    return Draft(units, solution, checks, title, body, ["refactor"], renamed=(f.key, moved.key))


def _visible(
    units: list[Unit], gens: dict[str, Any], other: list[Unit], r: random.Random
) -> dict[str, list[tuple[list[Any], Any]]]:
    """Up to ``N_VISIBLE`` cases per function on which the start and fixed code agree."""
    a, b = load(units), load(other)
    shared = {u.key for u in other}
    tests: dict[str, list[tuple[list[Any], Any]]] = {}
    for u in units:
        if u.key not in shared:
            continue
        cases = []
        for args in _inputs(gens[u.key], r, 12):
            got, want = outcome(a[u.key], args, MAX_LINES), outcome(b[u.key], args)
            if got == want and type(got) is type(want) and not isinstance(got, tuple):
                cases.append((args, got))
            if len(cases) == N_VISIBLE:
                break
        if cases:
            tests[u.key] = cases
    return tests


def build_task(
    kind: str,
    project: Project,
    params: dict[str, Any],
    r: random.Random,
    classes: tuple[str, ...] = TRAIN_CLASSES,
    derived_bugs: bool = True,
) -> tuple[str, SweTruth]:
    units = units_of(project)
    gens: dict[str, Any] = {f.key: f.gen for f in project.fns}
    gens.update(add_fillers(units, params["size"], r))
    if kind in ("bugfix", "cross_module"):
        d = _bug(project, units, gens, params, r, classes, kind == "cross_module", derived_bugs)
    elif kind == "feature":
        d = _feature(project, units, gens, r)
    else:
        d = _refactor(project, units, gens, r)
    # a refactor's visible tests cover the renamed function through its callers only, so
    # the tests stay protected and pin the behaviour while the name changes
    tests = _visible(d.start, gens, d.solution, r)
    if d.renamed:
        tests.pop(d.renamed[0], None)
    start_files = render(project, d.start, tests)
    fixed_files = render(project, d.solution, tests)
    issues, number = distractors(project, d.start, params["distractors"], r)
    issues.append(_issue(number, d))
    issues.sort(key=lambda i: i.number)
    truth = SweTruth(
        files=start_files,
        issues=issues,
        target_issue=number,
        protected=list(d.protected),
        fix=edits_between(start_files, fixed_files),
        checks=d.checks,
    )
    return _prompt(project, number, d), truth


def _issue(number: int, d: Draft) -> Issue:
    return Issue(number=number, title=d.title, body=d.body, labels=d.labels)


def _prompt(project: Project, number: int, d: Draft) -> str:
    tests_rule = (
        "Do not change the tests, the test configuration (conftest.py, pyproject.toml) or "
        "the CI files."
    )
    return (
        f"You are working in a checkout of `{project.package}`, {project.summary}. Resolve "
        f"issue #{number} of its tracker: read it with `read_issue`, explore and change the "
        "code with the editor tools, check your work with `run_tests` and `run_command`, then "
        f"call `submit`. {tests_rule} Hidden tests judge the final repository."
    )


LEVELS: dict[int, dict[str, Knob]] = {
    1: {"size": IntKnob(0, 1), "distractors": IntKnob(0, 1)},
    2: {"size": IntKnob(2, 4), "distractors": IntKnob(2, 3)},
    3: {"size": IntKnob(5, 8), "distractors": IntKnob(4, 6)},
}
DISTANCE = {1: ChoiceKnob((1,)), 2: ChoiceKnob((1, 2)), 3: ChoiceKnob((2, 3))}


CACHED_TASKS = 512


@dataclass
class SweFamily(TaskFamily[SweTruth]):
    """A family builds a repository per task (a few ms); ``resolve`` keeps the last
    ``CACHED_TASKS`` tasks, so a reset of a task seen before only copies its template."""

    kind: str = "bugfix"
    projects: tuple[str, ...] = TRAIN_PROJECTS
    classes: tuple[str, ...] = TRAIN_CLASSES
    derived_bugs: bool = True  # version 1 had the hand-written bugs only
    _cache: OrderedDict[str, Task] = field(
        default_factory=OrderedDict, init=False, repr=False, compare=False
    )

    def resolve(self, task_id: str) -> Task:
        task = self._cache.get(task_id)
        if task is None:
            task = self._cache[task_id] = super().resolve(task_id)
            if len(self._cache) > CACHED_TASKS:
                self._cache.popitem(last=False)
        return task

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, SweTruth]:
        project = PROJECTS[r.choice(self.projects)]
        return build_task(self.kind, project, params, r, self.classes, self.derived_bugs)


def _levels(cross: bool = False) -> dict[int, ParamSpace]:
    return {
        d: ParamSpace({**k, **({"distance": DISTANCE[d]} if cross else {})})
        for d, k in LEVELS.items()
    }


def _bug_family(name: str, kind: str = "bugfix", **kw: Any) -> SweFamily:
    """Version 2 draws from the syntax tree's mutants too; version 1 (hand-written bugs only)
    still resolves its ids to the very tasks it made, so recorded runs replay."""
    levels = _levels(cross=kind == "cross_module")
    v1 = SweFamily(name, 1, levels, kind, derived_bugs=False, **kw)
    return SweFamily(name, 2, levels, kind, older={1: v1}, **kw)


FAMILIES = [
    _bug_family("swe.bugfix"),
    _bug_family("swe.cross_module", "cross_module"),
    SweFamily("swe.feature", 1, _levels(), "feature"),
    SweFamily("swe.refactor", 1, _levels(), "refactor"),
    _bug_family("swe.bugfix_wrong_default", classes=(HELD_OUT_CLASS,)),
    _bug_family("swe.gridlib", projects=(HELD_OUT_PROJECT,)),
]
HELD_OUT = frozenset({"swe.bugfix_wrong_default", "swe.gridlib"})
SPLIT = Split(families=HELD_OUT)
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name not in HELD_OUT)
