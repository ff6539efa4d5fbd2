"""Attack (a bug an agent trips over): a workspace file named ``prog``, the name the sandbox
gave a compiled program in the job directory.

A C or C++ ``run_code`` laid its compiled program over the workspace's ``prog`` (the program
won), so the program read its own binary where it asked for the agent's file, and the run
handed the workspace back without ``prog``: the file was silently gone. Success would be a
program that sees anything but the workspace's ``prog``, or ``prog`` changed or gone after
the run. Every name the sandbox itself puts in a job directory starts with its reserved
``.gf-`` prefix, which no workspace file can take.
"""

from __future__ import annotations

from code_agent_attack import TASK, agent_env, call, play, ran

from gymforge.verify.code import CodeJudge

READ = (
    '#include <stdio.h>\nint main(void){char b[64]={0};FILE*f=fopen("prog","r");'
    'if(!f){puts("no prog");return 1;}fgets(b,sizeof b,f);fputs(b,stdout);return 0;}\n'
)


def test_a_workspace_prog_survives_a_compiled_run(code_judge: CodeJudge) -> None:
    env = agent_env(code_judge)
    steps = play(
        env,
        TASK,
        [
            call("run_code", code="open('prog', 'w').write('the agent data\\n')"),
            call("run_code", code=READ, language="c"),
            call("run_code", code=READ, language="cpp"),
            call("run_code", code="print(open('prog').read(), end='')"),
        ],
    )
    made, c, cpp, after = (ran(s) for s in steps[:4])
    assert made["files"] == ["prog"], made
    for report in (c, cpp):
        assert report["stdout"] == "the agent data\n", report
        assert report["files"] == ["prog"], report
    assert after["stdout"] == "the agent data\n", after
