"""swe hidden runs are built: the original repository with only the agent's changes to
source files; tests, runner files, start-up hooks and shadows of stdlib or runner modules
are dropped, each with its reason."""

from __future__ import annotations

import pytest

from gymforge.envs.swe import FAMILIES
from gymforge.envs.swe.build import built_tree, drop_reason

ORIGINAL = {
    "calc/__init__.py": "",
    "calc/ops.py": "old\n",
    "calc/sub/__init__.py": "",
    "tests/test_ops.py": "t\n",
    "README.md": "r\n",
}
HIDDEN = {"hidden/test_hidden.py": "h\n"}
PROTECTED = ["tests/**", "setup.cfg"]


@pytest.mark.parametrize(
    ("path", "new", "reason"),
    [
        ("calc/ops.py", False, None),
        ("calc/new_module.py", True, None),
        ("calc/json.py", True, None),  # inside a package: calc.json, never found first
        ("calc/sub/types.py", True, None),
        ("src/calc/io.py", True, None),
        ("README.md", False, None),
        ("tests/test_ops.py", False, "protected"),
        ("setup.cfg", True, "protected"),
        ("hidden/test_extra.py", True, "test"),
        ("hidden/__init__.py", True, "test"),
        ("pkg/tests/helper.py", True, "test"),
        ("calc/test_more.py", True, "test"),
        ("calc/more_test.py", True, "test"),
        ("conftest.py", True, "runner"),
        ("calc/conftest.py", True, "runner"),
        ("sitecustomize.py", True, "runner"),
        ("usercustomize.py", True, "runner"),
        ("calc/x.pth", True, "runner"),
        ("pytest.ini", True, "runner"),
        ("pyproject.toml", True, "runner"),
        ("unittest/__init__.py", True, "shadow"),
        ("unittest/__main__.py", True, "shadow"),
        ("argparse.py", True, "shadow"),
        ("pytest.py", True, "shadow"),
        ("_pytest/config.py", True, "shadow"),
        ("scripts/json.py", True, "shadow"),  # not a package: a runner may put it on sys.path
        ("src/unittest/__init__.py", True, "shadow"),
    ],
)
def test_drop_reasons(path: str, new: bool, reason: str | None) -> None:
    packages = {"calc", "calc/sub", "src/calc"}
    assert drop_reason(path, new, PROTECTED, {"hidden"}, packages) == reason


def test_the_built_tree_is_the_original_plus_source_changes() -> None:
    agent = dict(ORIGINAL)
    agent["calc/ops.py"] = "new\n"
    agent["calc/extra.py"] = "e\n"
    del agent["README.md"]
    agent["tests/test_ops.py"] = "weakened\n"
    agent["hidden/test_hidden.py"] = "mine\n"
    agent["unittest/__main__.py"] = "raise SystemExit(0)\n"
    built = built_tree(ORIGINAL, agent, PROTECTED, HIDDEN)
    assert built.files == {
        **{k: v for k, v in ORIGINAL.items() if k != "README.md"},
        "calc/ops.py": "new\n",
        "calc/extra.py": "e\n",
    }
    assert built.applied == ["README.md", "calc/extra.py", "calc/ops.py"]
    assert built.dropped == {
        "tests/test_ops.py": "protected",
        "hidden/test_hidden.py": "test",
        "unittest/__main__.py": "shadow",
    }
    assert built.changed


def test_only_dropped_changes_are_no_change() -> None:
    agent = {**ORIGINAL, "sitecustomize.py": "x\n", "hidden/test_x.py": "x\n"}
    built = built_tree(ORIGINAL, agent, PROTECTED, HIDDEN)
    assert built.files == ORIGINAL and not built.changed
    assert built.dropped == {"hidden/test_x.py": "test", "sitecustomize.py": "runner"}


def test_partial_credit_counts_only_what_the_change_earned() -> None:
    from gymforge.envs.swe.judging import earned_score

    base = {"issue": False, "edge": False, "reg1": True, "reg2": True}
    assert earned_score(dict(base), base) == 0.0  # what the untouched repository passes
    assert earned_score({**base, "issue": True}, base) == 0.5
    assert earned_score({**base, "issue": True, "reg1": False}, base) == 0.0  # one broken
    assert earned_score({k: True for k in base}, base) == 1.0
    assert earned_score({"a": True}, {"a": True}) == 1.0  # nothing was failing: all pass
    alone = frozenset({"issue"})  # a check a literal or a deletion passes earns nothing alone
    assert earned_score({**base, "issue": True}, base, alone) == 0.0
    assert earned_score({**base, "issue": True, "reg1": False}, base, alone) == 0.0
    assert earned_score({**base, "edge": True}, base, alone) == 0.5
    assert earned_score({k: True for k in base}, base, alone) == 1.0


def test_disclosed_and_removal_checks_are_not_credited() -> None:
    from gymforge.envs.swe.judging import not_credited
    from gymforge.envs.swe.truth import SweTruth

    for fam in FAMILIES:
        truth = SweTruth.model_validate(fam.resolve(fam.task_id(2, 5)).truth)
        alone = not_credited(truth)
        shown = {"issue_example", "feature_0", "old_name_removed"} & {c.name for c in truth.checks}
        assert shown <= alone, fam.name
        assert len(alone) < len(truth.checks), fam.name  # the rest still earn
