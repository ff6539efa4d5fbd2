"""Attack (a bug an agent trips over): any ``run_command`` replaced a repository's own
``main.py`` with the sandbox's entry program, since the job's main file had the same name,
and the kept files then lacked it: the repository lost its entry point, and the oracle
failed such a task. Success would be a ``main.py`` changed or gone after a command, or the
oracle failing. The sandbox's entry file has a reserved name no repository file can take.
"""

from __future__ import annotations

from pathlib import Path

from swe_attack import calc_task_file, call, oracle, play, swe_env, tool_result, verdict

from gymforge.verify.code import CodeJudge

MAIN = "from calc.ops import mean\n\nif __name__ == '__main__':\n    print(mean([1, 2, 3]))\n"
HIDDEN_MAIN = (
    "import unittest\nimport main\nfrom calc.ops import mean\n\n\nclass H(unittest.TestCase):\n"
    "    def test_main_kept(self):\n        self.assertIs(main.mean, mean)\n"
    "        self.assertEqual(mean([1, 2, 3]), 2)\n"
)


def test_a_command_keeps_the_repositorys_main_py(code_judge: CodeJudge, tmp_path: Path) -> None:
    env = swe_env(code_judge, calc_task_file(tmp_path, extra={"main.py": MAIN}, hidden=HIDDEN_MAIN))
    run = call("run_command", command="python main.py")
    steps = play(env, "calc-0", [run, call("read_file", path="main.py")])
    ran = tool_result(steps[0])["result"]
    assert ran["exit_code"] == 0 and ran["stdout"].strip() == "3.0", ran
    assert ran["files_changed"] == []
    assert "__main__" in tool_result(steps[1])["result"]
    plan = oracle(env, "calc-0")
    fixed = play(env, "calc-0", [run, *plan])
    assert fixed[-1].info["success"], verdict(fixed)
