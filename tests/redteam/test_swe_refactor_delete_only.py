"""Attack: collect refactor credit in ``swe`` by deleting the function instead of renaming it.

A refactor task asks for a function to be renamed, its callers updated and the old name to
be gone (the hidden ``old_name_removed`` check, an ``@absent`` target). Appending ``del
<old name>`` to its module removes the function and implements nothing; where no hidden
check calls one of its callers, nothing the original repository passed breaks, so
plain-value partial credit paid 1/5 of ``hidden_tests`` (+0.06) for destroying the function.
Success of the attack would be any ``hidden_tests`` reward for a change that only deletes.
"""

from __future__ import annotations

import pytest
from swe_attack import call, play, swe_env, verdict

from gymforge.envs.swe import FAMILIES
from gymforge.envs.swe.truth import ABSENT, SweTruth
from gymforge.verify.code import CodeJudge


@pytest.mark.parametrize("seed", [2, 5])  # seeds whose renamed function has no caller checks
def test_deleting_the_old_name_earns_nothing(code_judge: CodeJudge, seed: int) -> None:
    env = swe_env(code_judge)
    tid = next(f for f in FAMILIES if f.name == "swe.refactor").task_id(2, seed)
    truth = SweTruth.model_validate(env.tasks.resolve(tid).truth)
    removal = next(c for c in truth.checks if c.target.startswith(ABSENT))
    module, name = removal.target[len(ABSENT) :].rsplit(":", 1)
    path = module.replace(".", "/") + ".py"
    deleted = truth.files[path] + f"\n\ndel {name}\n"
    steps = play(
        env, tid, [call("delete_file", path=path), call("create_file", path=path, content=deleted)]
    )
    v = verdict(steps)
    hidden = v["facts"]["hidden_tests"]
    print(tid, "hidden_tests:", hidden)
    assert hidden[removal.name] is True  # the deletion does satisfy the removal check
    assert not any(ok for k, ok in hidden.items() if k != removal.name)  # and nothing else
    assert v["score"] == 0.0, v
    assert steps[-1].reward_components["hidden_tests"] == 0.0
