"""Attack: end a failing ``code-agent`` episode, and the whole run, with a file name that is
not valid UTF-8.

``run_code`` kept every file its program left in the workspace, names as the sandbox handed
them back. A program that writes ``b'\\xff\\xfe.txt'`` put an undecodable name into the
episode's state; the episode loop's state fingerprint then raised ``UnicodeEncodeError``, and
``gymforge eval`` stopped with a traceback (exit 1) before the failure was recorded; every
later C run of that episode crashed the tool too. Success of the attack would be an exception
from the episode or the state, an exit other than 0, or a success rate above the honest half.
Names are checked where the workspace takes them in: the undecodable one is left out, and
the run report says so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from code_agent_attack import TASK, add_dataset, agent_env, call, play, ran
from half_eval import eval_half_policy

from gymforge.verify.code import CodeJudge

POLICY = Path(__file__).with_name("code_agent_half_sabotage.py")
TRICK = call("run_code", code="open(b'\\xff\\xfe.txt', 'wb').write(b'x')\nprint('made')")


def test_an_undecodable_name_is_left_out_where_it_is_taken_in(code_judge: CodeJudge) -> None:
    env = agent_env(code_judge)
    listing = call("run_code", code="import os\nprint(sorted(os.listdir('.')))")
    c_run = call("run_code", code="int main(void){return 0;}", language="c")
    steps = play(env, TASK, [TRICK, listing, c_run])  # fingerprints every state
    made = ran(steps[0])
    assert made["stdout"] == "made\n" and made["files"] == [], made
    assert "UTF-8" in (made["note"] or ""), made
    assert ran(steps[1])["stdout"] == "['.gf-entry.py']\n"
    assert ran(steps[2])["status"] == "ok"
    assert steps[-1].terminated and "verifier_error" not in steps[-1].info
    assert steps[-1].info["verdict"]["reason"] != "verifier_error"


def test_the_sabotage_is_a_failure_in_eval(gymforge_cli: Any, tmp_path: Path) -> None:
    tasks = add_dataset(tmp_path, rows=4)
    verdicts, metrics = eval_half_policy(
        gymforge_cli, "code-agent", tasks, POLICY, tmp_path / "out"
    )
    assert sorted(verdicts) == ["add-0", "add-1", "add-2", "add-3"], sorted(verdicts)
    assert all(v["reason"] != "verifier_error" for v in verdicts.values()), verdicts
    assert [v["passed"] for _, v in sorted(verdicts.items())] == [True, False, True, False]
    assert metrics["verifier_errors"] == 0, metrics
    assert metrics["success"]["rate"] == 0.5 and metrics["success"]["n"] == 4, metrics
