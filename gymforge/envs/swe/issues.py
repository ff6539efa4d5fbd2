"""Issue text: the target issue written from behaviour (a failing call and what it should
return, never the diff), feature and refactor requests, and distractor issues."""

from __future__ import annotations

import random
from typing import Any

from gymforge.envs.swe.projects import Feature, Project
from gymforge.envs.swe.repogen import Unit
from gymforge.envs.swe.truth import Comment, Issue

REPORTERS = ("mhoffmann", "priya-k", "jl-dev", "tanaka", "ops-bot", "rcarvalho")


def call_text(name: str, args: list[Any]) -> str:
    """A call as an issue shows it (``name(arg, ...)``, each argument its ``repr``)."""
    return f"{name}({', '.join(repr(a) for a in args)})"


def _shown(value: Any) -> str:
    if isinstance(value, tuple) and value[:1] == ("raises",):
        return f"raises `{value[1]}: {value[2]}`" if value[2] else f"raises `{value[1]}`"
    return f"returns `{value!r}`"


def bug_issue(
    project: Project, u: Unit, args: list[Any], want: Any, got: Any, r: random.Random
) -> tuple[str, str]:
    where = f"{project.package}.{u.module}"
    title = r.choice(
        [
            f"`{u.name}` gives a wrong result",
            f"Unexpected output from `{where}.{u.name}`",
            f"Bug: `{u.name}` misbehaves for some inputs",
        ]
    )
    body = (
        f"Calling\n\n```python\nfrom {where} import {u.name}\n{call_text(u.name, args)}\n```\n\n"
        f"{_shown(got)}, but it should return `{want!r}`. "
        "Other inputs are probably affected too; please fix the cause, not just this case.\n"
    )
    return title, body


def feature_issue(
    project: Project, feat: Feature, opt: dict[str, str], example: tuple[list[Any], Any]
) -> tuple[str, str]:
    args, want = example
    body = (
        feat.spec.format(**opt)
        + f"\n\nFor example, `{call_text(feat.name, args)}` should return `{want!r}`.\n"
    )
    return f"Feature request: `{feat.name}`", body


def refactor_issue(
    project: Project, module: str, old: str, new: str, new_module: str | None
) -> tuple[str, str]:
    pkg = project.package
    where = f"`{pkg}/{new_module}.py` (a new module)" if new_module else f"`{pkg}/{module}.py`"
    body = (
        f"`{pkg}.{module}.{old}` has an unclear name. Please rename it to `{new}`, defined in "
        f"{where}. Update every caller in the package to the new name. "
        f"`{old}` must no longer exist in `{pkg}.{module}` (no alias), and the behaviour of "
        "every function must stay exactly the same.\n"
    )
    return f"Refactor: rename `{old}` to `{new}`", body


def distractors(
    project: Project, units: list[Unit], n: int, r: random.Random
) -> tuple[list[Issue], int]:
    """``n`` other issues (questions, docs, closed bugs, ideas) and the target's number."""
    numbers = r.sample(range(3, 60), n + 1)
    named = [u for u in units if not u.filler]
    out = []
    for num in numbers[1:]:
        u = r.choice(named)
        kind = r.randrange(4)
        if kind == 0:
            issue = Issue(
                number=num,
                title=f"Question: is `{u.name}` safe to call from several threads?",
                body=f"We call `{project.package}.{u.module}.{u.name}` from a worker pool.",
                labels=["question"],
            )
        elif kind == 1:
            issue = Issue(
                number=num,
                title=f"Docs: mention `{u.name}` in the README",
                body=f"The README lists the modules but not what `{u.name}` does.",
                labels=["docs"],
            )
        elif kind == 2:
            issue = Issue(
                number=num,
                title=f"`{u.name}` crashed on empty input",
                body=f"`{u.name}` raised on an empty argument in 0.2.x.",
                labels=["bug"],
                state="closed",
                comments=[Comment(author="maintainer", body="Fixed in 0.3.0, closing.")],
            )
        else:
            issue = Issue(
                number=num,
                title="Idea: a command-line interface",
                body=f"It would be nice to call `{u.name}` from the shell.",
                labels=["enhancement", "wontfix"],
            )
        out.append(issue.model_copy(update={"author": r.choice(REPORTERS)}))
    return out, numbers[0]
