"""swe task families: deterministic, every family and level builds, knobs do what they say,
the issue is written from behaviour (never the diff), and held-out families stay out of
training."""

from __future__ import annotations

import pytest

from gymforge.envs import BUILTIN
from gymforge.envs.swe import FAMILIES, HELD_OUT, SweEnv
from gymforge.envs.swe.env import RUN_LIMITS
from gymforge.envs.swe.families import HELD_OUT_CLASS
from gymforge.envs.swe.repogen import callers, load, units_of
from gymforge.envs.swe.templates import HELD_OUT_PROJECT, PROJECTS
from gymforge.envs.swe.truth import SweTruth
from gymforge.sandbox.models import MAX_KEPT_FILES
from gymforge.tasks import TRAINING_PATHS, HeldOutError

SOURCE = SweEnv.tasks


def truth(tid: str) -> SweTruth:
    return SweTruth.model_validate(SOURCE.resolve(tid).truth)


def test_registered() -> None:
    assert BUILTIN["swe"] == "gymforge.envs.swe:SweEnv"


def test_same_id_same_task_and_seeds_differ() -> None:
    fam = FAMILIES[0]
    a, b = fam.generate(fam.params_for(2, 5), 5), fam.generate(fam.params_for(2, 5), 5)
    assert a.truth == b.truth and a.prompt == b.prompt
    others = {str(fam.generate(fam.params_for(2, s), s).truth["fix"]) for s in range(12)}
    assert len(others) >= 6


@pytest.mark.parametrize("family", [f.name for f in FAMILIES])
def test_every_family_and_level_builds_a_real_task(family: str) -> None:
    fam = next(f for f in FAMILIES if f.name == family)
    for level in (1, 2, 3):
        for seed in range(4):
            t = truth(fam.task_id(level, seed))
            assert t.fix and t.checks and len(t.checks) == len({c.name for c in t.checks})
            assert "tests/conftest.py" in t.files and "README.md" in t.files
            assert any(p.startswith("tests/test_") for p in t.files)
            target = next(i for i in t.issues if i.number == t.target_issue)
            assert target.state == "open" and target.body
            if "bug" in target.labels:  # written from the failing call, never the diff
                for s in t.fix:
                    changed = set(s.old.splitlines()) ^ set(s.new.splitlines())
                    assert not any(ln.strip() and ln.strip() in target.body for ln in changed)


def test_size_and_distractor_knobs() -> None:
    fam = FAMILIES[0]
    small = [truth(fam.task_id(1, s)) for s in range(6)]
    big = [truth(fam.task_id(3, s)) for s in range(6)]
    assert max(len(t.files) for t in small) < min(len(t.files) for t in big)
    assert max(len(t.issues) for t in small) <= 2 < min(len(t.issues) for t in big)


def test_cross_module_cause_is_in_another_module_at_the_knobs_distance() -> None:
    fam = next(f for f in FAMILIES if f.name == "swe.cross_module")
    far = 0
    for seed in range(10):
        task = SOURCE.resolve(fam.task_id(3, seed))
        t = SweTruth.model_validate(task.truth)
        symptom = next(c for c in t.checks if c.name == "issue_example").target
        [fix] = t.fix
        assert symptom.split(":")[0].replace(".", "/") + ".py" != fix.path
        cause = next(c for c in t.checks if c.name.startswith("cause_")).target
        project = PROJECTS[symptom.split(".")[0]]
        d = callers(units_of(project), _key(cause))[_key(symptom)]
        assert d <= task.params["distance"]
        far = max(far, d)
    assert far >= 2


def _key(target: str) -> str:
    """``pkg.mod:fn`` -> ``mod.fn``."""
    return target.split(".", 1)[1].replace(":", ".")


def test_held_out_families_are_refused_for_training() -> None:
    train = SOURCE.sample(200, 3, "train")
    assert not any(tid.split("/")[0] in HELD_OUT for tid in train)
    assert {tid.split("/")[0] for tid in train} == {
        "swe.bugfix",
        "swe.cross_module",
        "swe.feature",
        "swe.refactor",
    }
    held = SOURCE.sample(20, 3, "heldout")
    assert {tid.split("/")[0] for tid in held} == set(HELD_OUT)
    for tid in held:
        with pytest.raises(HeldOutError):
            SOURCE.split.check_train(SOURCE.resolve(tid))
    for path in TRAINING_PATHS.values():
        assert all(SOURCE.resolve(t).split == "train" for t in path(SOURCE, 40, 3))


def test_training_never_sees_the_held_out_bug_class_or_project() -> None:
    for tid in SOURCE.sample(60, 11, "train"):
        t = truth(tid)
        assert not t.files.get(f"{HELD_OUT_PROJECT}/__init__.py")
        for s in t.fix:  # a wrong default is a changed default in a def line
            if tid.startswith(("swe.bugfix/", "swe.cross_module/")):
                olds = [ln for ln in s.old.splitlines() if ln.startswith("def ")]
                news = [ln for ln in s.new.splitlines() if ln.startswith("def ")]
                assert olds == news, (tid, HELD_OUT_CLASS)


def test_generated_code_runs_in_the_judge() -> None:
    for p in PROJECTS.values():
        fns = load(units_of(p))
        assert set(fns) == {f.key for f in p.fns}


def test_the_largest_repositories_fit_the_sandbox_workspace() -> None:
    """The size knob's top level stays well inside what a run hands back (RUN_LIMITS)."""
    biggest = max(
        (truth(f.task_id(3, s)) for f in FAMILIES for s in range(5)),
        key=lambda t: sum(len(v) for v in t.files.values()),
    )
    size = sum(len(v.encode()) for v in biggest.files.values())
    assert size < RUN_LIMITS.workspace_bytes // 20
    assert len(biggest.files) < MAX_KEPT_FILES // 4


def test_each_load_makes_fresh_functions_from_one_compiled_code() -> None:
    """``load`` compiles a unit once and executes that code into fresh functions every
    time: a mutable default or module global of one load is never another load's."""
    from gymforge.envs.swe.repogen import Unit

    units = [
        Unit(
            "m",
            "seen",
            "SEEN = []\n\ndef seen(x, acc=[]):\n    acc.append(x)\n"
            "    SEEN.append(x)\n    return len(acc) + len(SEEN)\n",
        )
    ]
    a, b = load(units)["m.seen"], load(units)["m.seen"]
    assert a is not b and a.__code__ is b.__code__
    assert [a(1), a(2)] == [2, 4]
    assert b(1) == 2  # its own default and its own module global
