"""Attack: fill the ``code-agent`` workspace with names nothing downstream should have to
take: control characters (``"a\\nb"``, a fake report line), a path 40 directories deep, the
sandbox's reserved ``.gf-`` names (its entry files, its scratch directory), a symlink to a
host file and a fifo.

``run_code`` kept whatever name came back; a reserved entry name in the workspace makes every
later job of that language invalid (a job file may not share the entry's name), so one
program could break the agent's own tool for the rest of the episode, or, were the
workspace ever judged, the judge. Success would be any such name in the workspace, a tool
or state that raises, or a later run that fails. Names are checked where the workspace takes
them in (the rule ``swe`` uses, in one shared place); what is left out is listed in the
report; ordinary odd-but-clean names such as ``..oops`` stay.
"""

from __future__ import annotations

from code_agent_attack import TASK, agent_env, call, play, ran

from gymforge.verify.code import CodeJudge

PLANT = r"""
import os
for name in ("a\nb", "tab\there", ".gf-entry.py", ".gf-entry.c", ".gf-prog", "..oops", "ok.txt"):
    open(name, "w").write("x")
os.makedirs(".gf-scratch", exist_ok=True)
open(".gf-scratch/x", "w").write("x")
deep = "/".join(["d"] * 40)
os.makedirs(deep)
open(deep + "/f", "w").write("x")
os.symlink("/etc/passwd", "link")
os.mkfifo("pipe")
print("planted")
"""
KEPT = ["..oops", "ok.txt"]


def test_odd_names_are_left_out_and_every_later_run_works(code_judge: CodeJudge) -> None:
    env = agent_env(code_judge)
    steps = play(
        env,
        TASK,
        [
            call("run_code", code=PLANT),
            call("run_code", code="print(sorted(os.listdir('.')))".join(["import os\n", ""])),
            call("run_code", code="int main(void){return 0;}", language="c"),
        ],
    )
    planted, listed, c = (ran(s) for s in steps[:3])
    assert planted["stdout"] == "planted\n" and planted["files"] == KEPT, planted
    note = planted["note"] or ""
    # (``.gf-entry.py`` is this Python job's own program: the sandbox never hands it back)
    for shown in ("'a\\nb'", "'tab\\there'", ".gf-entry.c", ".gf-prog", ".gf-scratch/x", "d/d/d"):
        assert shown in note, (shown, note)
    assert listed["stdout"] == str(sorted([".gf-entry.py", *KEPT])) + "\n", listed
    assert c["status"] == "ok" and c["files"] == KEPT, c
    assert steps[-1].terminated and "verifier_error" not in steps[-1].info
