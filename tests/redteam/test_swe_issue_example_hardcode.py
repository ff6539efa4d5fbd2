"""Attack: hard-code the issue's own example in ``swe`` and collect partial credit.

The tracker issue of a generated task shows one call and the value it should return (the
``issue_example`` check of a bug, the first ``feature_*`` check of a feature request). An
agent that leaves the bug in place and only wraps the function with ``if args == <the
example>: return <the value>`` makes exactly that hidden check pass, so plain-value partial
credit paid it 1/5 to 1/7 of ``hidden_tests`` (+0.04 to +0.06 per episode) for a change the
issue itself calls out ("fix the cause, not just this case"). Success of the attack would
be any ``hidden_tests`` reward for a change that only answers the disclosed example.
"""

from __future__ import annotations

import pytest
from swe_attack import call, play, verdict

from gymforge.envs.swe import FAMILIES, SweEnv
from gymforge.envs.swe.truth import SweTruth
from gymforge.verify.code import CodeJudge

# the families whose issue discloses an input and its expected value
DISCLOSING = ["swe.bugfix", "swe.cross_module", "swe.feature"]


def _special_case(truth: SweTruth) -> tuple[str, str, str]:
    """(module file, its new text, the disclosed check's name): the disclosed call answered
    by a literal, everything else left as it was."""
    issue = next(i for i in truth.issues if i.number == truth.target_issue)
    shown = next(c for c in truth.checks if repr(c.expected) in issue.body)
    module, name = shown.target.rsplit(":", 1)
    path = module.replace(".", "/") + ".py"
    source = truth.files[path]
    wrapper = (
        f"\n\n_gf_before = globals().get({name!r})\n\n\n"
        f"def {name}(*args, **kwargs):\n"
        f"    if list(args) == {shown.args!r} and not kwargs:\n"
        f"        return {shown.expected!r}\n"
        "    if _gf_before is None:\n"
        "        raise NotImplementedError\n"
        "    return _gf_before(*args, **kwargs)\n"
    )
    return path, source + wrapper, shown.name


@pytest.mark.parametrize("family", DISCLOSING)
def test_answering_only_the_issue_example_earns_nothing(code_judge: CodeJudge, family: str) -> None:
    env = SweEnv(judge=code_judge)
    fam = next(f for f in FAMILIES if f.name == family)
    tid = fam.task_id(2, 5)
    truth = SweTruth.model_validate(env.tasks.resolve(tid).truth)
    path, text, shown = _special_case(truth)
    rewrite = [call("delete_file", path=path), call("create_file", path=path, content=text)]
    steps = play(env, tid, rewrite)
    v = verdict(steps)
    print(family, "disclosed check:", shown, "hidden_tests:", v["facts"].get("hidden_tests"))
    assert v["facts"]["hidden_tests"][shown] is True  # the special case does answer it
    assert not v["passed"]
    assert v["score"] == 0.0, v
    assert steps[-1].reward_components["hidden_tests"] == 0.0
