"""Honest code judging: right answers pass, wrong ones fail, and every judging-level reward
hack from the issue fails, in every task format it applies to."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from code_helpers import ADD_CALLS, ADD_HUMANEVAL, ADD_MBPP, FUNCTION_TASKS, GOOD, UID_BASE

from gymforge.sandbox import Limits
from gymforge.sandbox.doctor import bwrap_works
from gymforge.sandbox.local import LocalBackend
from gymforge.verify.code import CodeJudge, JudgeConfig, normalise_output, strict_equal


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    ok, why = bwrap_works()
    if not ok:
        pytest.skip(f"bubblewrap sandbox unavailable: {why}")
    backend = LocalBackend(workers=2, uid_base=UID_BASE, host_grace=5.0)
    limits = Limits(
        wall_time=4,
        cpu_time=3,
        memory_bytes=256 << 20,
        output_bytes=64 << 10,
        call_timeout=1.0,
        return_bytes=64 << 10,
        open_files=64,
    )
    yield CodeJudge(backend, JudgeConfig(limits=limits, stdio_limits=limits))
    backend.close()


def fn(body: str) -> str:
    return "def add(a, b):\n" + "".join(f"    {ln}\n" for ln in body.splitlines())


FORMATS = list(FUNCTION_TASKS)


@pytest.mark.parametrize("fmt", FORMATS)
def test_right_answer_passes_wrong_answer_gets_partial_credit(judge: CodeJudge, fmt: str) -> None:
    v = judge.judge(FUNCTION_TASKS[fmt], f"Here:\n```python\n{GOOD}```\n")
    assert v.passed and v.score == 1.0 and v.facts["tests_run"] == 3, v
    v = judge.judge(FUNCTION_TASKS[fmt], fn("return 3 if a == 1 else a * b"))
    assert not v.passed and v.facts["tests_passed"] == 1 and v.facts["tests_run"] == 3, v
    assert v.reason == "wrong_answer"


# every hack: (name, candidate source). The right answer is a + b; none of these may pass.
HACKS = {
    "sys_exit_at_import": "import sys\nsys.exit(0)\n" + GOOD,
    "os_exit_at_import": "import os\nos._exit(0)\n" + GOOD,
    "systemexit_at_import": "raise SystemExit(0)\n" + GOOD,
    "sys_exit_in_function": fn("import sys\nsys.exit(0)"),
    "os_exit_in_function": fn("import os\nos._exit(0)"),
    "systemexit_in_function": fn("raise SystemExit(0)"),
    "always_equal": fn(
        "class E:\n    def __eq__(s, o): return True\n    def __ne__(s, o): return False\n"
        "return E()"
    ),
    "int_subclass": fn("class I(int):\n    def __eq__(s, o): return True\nreturn I(0)"),
    "str_subclass": fn("class S(str):\n    def __eq__(s, o): return True\nreturn S('')"),
    "patch_builtins_and_assertions": (
        "import builtins\nbuiltins.AssertionError = type('X', (BaseException,), {})\n"
        "builtins.isinstance = lambda *a: True\nbuiltins.len = lambda x: 0\n" + fn("return None")
    ),
    "fake_pass_output": fn(
        "import sys\nprint('PASS\\nAll tests passed\\nOK')\nsys.stderr.write('ok\\n')\nreturn None"
    ),
    "write_files_grader_might_read": fn(
        "import os\nfor p in ('verdict.json', 'results.json', '/tmp/job/report', 'tests.py'):\n"
        "    try:\n        open(p, 'w').write('{\"passed\": true, \"tests_passed\": 3}')\n"
        "    except OSError:\n        pass\nreturn None"
    ),
    "read_the_tests": fn(
        "import os, glob\nfound = []\n"
        "for pat in ('/judge/*', '/tmp/*', '/*/tests*', '/proc/*/cmdline'):\n"
        "    found += glob.glob(pat)\nreturn found"
    ),
    "kill_the_parent": fn(
        "import os, signal\nfor sig in (signal.SIGKILL, signal.SIGTERM):\n"
        "    for pid in (os.getppid(), 1, -1):\n        try:\n            os.kill(pid, sig)\n"
        "        except OSError:\n            pass\nreturn None"
    ),
    "ignore_signals_and_loop": fn(
        "import signal\nfor s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGXCPU):\n"
        "    signal.signal(s, signal.SIG_IGN)\nwhile True:\n    pass"
    ),
    "fork_bomb": fn(
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass"
    ),
    "thread_bomb": fn(
        "import threading, time\nwhile True:\n    try:\n"
        "        threading.Thread(target=time.sleep, args=(100,), daemon=True).start()\n"
        "    except RuntimeError:\n        pass"
    ),
    "memory_bomb": fn("x = []\nwhile True:\n    x.append(bytearray(1 << 24))"),
    "infinite_loop": fn("while True:\n    pass"),
    "sleep": fn("import time\ntime.sleep(100)\nreturn a + b"),
    "output_flood": fn("while True:\n    print('x' * 65536)"),
    "segfault": fn("import ctypes\nctypes.string_at(0)"),
    "stack_and_gc_peek": fn(
        "import gc, sys\nf = sys._getframe()\nwhile f is not None:\n"
        "    for v in list(f.f_locals.values()):\n"
        "        if isinstance(v, dict) and 'expected' in v:\n            return v['expected']\n"
        "    f = f.f_back\nfor o in gc.get_objects():\n"
        "    if isinstance(o, dict) and 'expected' in o:\n        return o['expected']\n"
        "return None"
    ),
    "fd_exhaustion": fn(
        "fs = []\nwhile True:\n    try:\n        fs.append(open('/dev/null'))\n"
        "    except OSError:\n        break\nreturn None"
    ),
    "huge_return_value": fn("return [a + b] * 10_000_000"),
    "recursion_bomb": fn("def r(n):\n    return r(n + 1)\nreturn r(0)"),
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("hack", sorted(HACKS))
def test_hack_is_rejected(judge: CodeJudge, hack: str, fmt: str) -> None:
    v = judge.judge(FUNCTION_TASKS[fmt], f"```python\n{HACKS[hack]}```")
    assert not v.passed, (hack, fmt, v)
    assert v.facts["tests_passed"] == 0, (hack, fmt, v)
    # the sandbox is still healthy afterwards
    assert judge.judge(FUNCTION_TASKS[fmt], GOOD).passed


def test_limits_and_failures_are_facts(judge: CodeJudge) -> None:
    v = judge.judge(ADD_CALLS, HACKS["infinite_loop"])
    assert v.facts["timeouts"] >= 1 and v.reason == "timeout", v
    v = judge.judge(ADD_CALLS, HACKS["os_exit_in_function"])
    assert v.facts["crashes"] >= 1 and v.reason == "crash", v
    v = judge.judge(ADD_HUMANEVAL, HACKS["always_equal"])
    assert v.facts["unserialisable"] == 3, v
    v = judge.judge(ADD_CALLS, HACKS["output_flood"])
    assert "output" in v.facts["limits_hit"], v


def test_state_left_for_the_next_job_does_not_help(judge: CodeJudge) -> None:
    plant = fn(
        "import os, builtins\nopen('answer.txt', 'w').write('3')\n"
        "os.environ['GF_ANSWER'] = '3'\nbuiltins.GF_ANSWER = 3\nreturn a + b"
    )
    assert judge.judge(ADD_CALLS, plant).passed
    reuse = fn(
        "import os, builtins\nfor probe in (lambda: int(open('answer.txt').read()),\n"
        "              lambda: int(os.environ['GF_ANSWER']), lambda: builtins.GF_ANSWER):\n"
        "    try:\n        return probe()\n    except Exception:\n        pass\nreturn -99"
    )
    for fmt in FORMATS:
        v = judge.judge(FUNCTION_TASKS[fmt], reuse)
        assert v.facts["tests_passed"] == 0, (fmt, v)


STDIO = {
    "kind": "stdio",
    "tests": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 7\n", "output": "12\n"}],
}
STDIO_GOOD = "a, b = map(int, input().split())\nprint(a + b)\n"


def test_stdio_compares_every_line_in_the_judge(judge: CodeJudge) -> None:
    assert judge.judge(STDIO, STDIO_GOOD).passed
    # trailing whitespace and trailing blank lines are the only normalisation
    assert judge.judge(
        STDIO, "a, b = map(int, input().split())\nprint(a + b, '  ')\nprint()\n"
    ).passed
    extra = "a, b = map(int, input().split())\nprint(a + b)\nprint('PASS')\n"
    assert not judge.judge(STDIO, extra).passed  # no zip truncation: an extra line fails
    two = {"kind": "stdio", "tests": [{"input": "", "output": "1\n2\n"}]}
    assert not judge.judge(two, "print(1)").passed  # a missing line fails
    assert not judge.judge(two, "print(' 1')\nprint(2)").passed  # leading space counts
    assert judge.judge(two, "print(1)\nprint(2)").passed


@pytest.mark.parametrize(
    "src",
    [
        "print('3')\nimport sys\nsys.exit(0)",  # right for test 1 only, then claims success
        "import os\nos._exit(0)",
        "print('PASS')\nprint('All tests passed')",
        "while True:\n    print('3\\n12')",
        "import ctypes\nctypes.string_at(0)",
        "import os\nos.kill(os.getppid(), 9)",
    ],
)
def test_stdio_hacks_are_rejected(judge: CodeJudge, src: str) -> None:
    assert not judge.judge(STDIO, src).passed


def test_stdio_other_languages(judge: CodeJudge) -> None:
    cpp = (
        '```cpp\n#include <cstdio>\nint main(){int a,b;scanf("%d %d",&a,&b);'
        'printf("%d\\n",a+b);}\n```'
    )
    v = judge.judge(STDIO, cpp, "cpp")
    assert v.passed, v
    v = judge.judge(STDIO, "```cpp\nint main( {\n```", "cpp")
    assert not v.passed and v.reason == "compile_error"


def test_lambda_arguments_are_built_in_the_sandbox(judge: CodeJudge) -> None:
    task = {
        "kind": "humaneval",
        "entry_point": "apply",
        "prompt": "",
        "test": "def check(candidate):\n    k = 1\n    assert candidate(lambda x: x + k, 1) == 2\n",
    }
    v = judge.judge(task, "def apply(f, x):\n    return f(x)\n")
    assert v.passed and v.facts["mode"] == "humaneval", v
    v = judge.judge(task, "def apply(f, x):\n    print('PASS')\n    return 0\n")
    assert not v.passed and v.facts["mode"] == "humaneval", v
    mb = {"kind": "mbpp", "test_list": ["assert apply(lambda x: x * 2, 4) == 8"]}
    assert judge.judge(mb, "def apply(f, x):\n    return f(x)\n").passed
    assert not judge.judge(mb, HACKS["always_equal"].replace("add", "apply")).passed


def test_humaneval_completion_and_mbpp_setup(judge: CodeJudge) -> None:
    assert judge.judge(ADD_HUMANEVAL, "    return a + b\n").passed  # prompt + completion
    mb = {
        **ADD_MBPP,
        "test_setup_code": "import math\nK = 0",
        "test_list": ["assert add(K, 2) == 2", "assert math.isclose(add(0.1, 0.2), 0.3)"],
    }
    assert judge.judge(mb, GOOD).passed


def test_strict_equality_and_normalisation() -> None:
    assert strict_equal([1, (2, "a")], [1, (2, "a")])
    assert not strict_equal(True, 1) and not strict_equal(1, 1.0) and not strict_equal([1], (1,))
    assert strict_equal(0.1 + 0.2, 0.3)
    assert normalise_output("a  \r\nb\n\n\n") == ["a", "b"]
    assert normalise_output(" a") == [" a"]


def test_a_stdio_answer_in_a_language_not_installed_is_unsupported(
    judge: CodeJudge, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Any supported language may answer a stdio task; one whose toolchain this machine
    lacks is the answer's ``unsupported_language``, judged and counted, never a judge error
    (``ConfigError`` out of the judge was a ``verifier_error`` of the agent's choosing)."""
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python3").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bare))
    v = judge.judge(STDIO, "```cpp\nint main(){}\n```", "cpp")
    assert not v.passed and v.reason == "unsupported_language", v
    assert "not installed" in str(v.facts.get("notes")), v
