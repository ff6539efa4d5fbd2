"""Attack: turn a failure into an infrastructure error, which is never scored.

An exception out of the judge (a dead worker, a broken session, an undecodable channel) makes
the episode a verifier error: kept, but never scored or trained on. A candidate that can
cause one chooses exclusion over failure. These candidates attack the session's machinery
from inside the call: close every inherited descriptor, write a frame claiming 2 GB, leave a
child behind that keeps writing forged frames, signal pid 1, fork until refused, forge the
"loaded" frame and exit, exit in the middle of a call, flood stdout. Each runs on the
planned batch path (HumanEval, literal calls) and the live session (MBPP, objects built in
the sandbox). Success would be any exception or unjudgeable verdict: each must be a scored
failure, and the worker must judge the next answer as usual.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

PLANNED = {
    "kind": "humaneval",
    "entry_point": "add",
    "prompt": "def add(a, b):\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    "    assert candidate(5, 7) == 12\n",
}
LIVE = {"kind": "mbpp", "test_list": ["assert add(Box(1), 2) == 3", "assert add(Box(5), 7) == 12"]}
BOX = "\nclass Box:\n    def __init__(self, v):\n        self.v = v\n"

HAVOC = {
    "close_descriptors": (
        "import os\ndef add(a, b):\n    for fd in range(3, 64):\n        try:\n"
        "            os.close(fd)\n        except OSError:\n            pass\n    return 0\n"
    ),
    "frame_of_2gb": (
        "import os, struct\ndef add(a, b):\n    for fd in range(3, 20):\n        try:\n"
        "            os.write(fd, struct.pack('>I', 0x7FFFFFFF) + b'x' * 100)\n"
        "        except OSError:\n            pass\n    return 0\n"
    ),
    "forging_survivor": (
        "import os, time\ndef add(a, b):\n    if os.fork() == 0:\n        os.setsid()\n"
        "        for _ in range(100):\n            for fd in range(3, 20):\n                try:\n"
        '                    os.write(fd, b\'\\x00\\x00\\x00\\x10{"ev":"result"}\')\n'
        "                except OSError:\n                    pass\n            time.sleep(0.01)\n"
        "        os._exit(0)\n    return 0\n"
    ),
    "signal_pid_1": (
        "import os\ndef add(a, b):\n    for s in (9, 15, 2, 19):\n        try:\n"
        "            os.kill(1, s)\n        except OSError:\n            pass\n    return 0\n"
    ),
    "fork_bomb": (
        "import os\ndef add(a, b):\n    for _ in range(200):\n        try:\n"
        "            os.fork()\n        except OSError:\n            break\n    return 0\n"
    ),
    "forged_loaded": (
        "import sys\nf = sys._getframe(1)\nwhile f and 'send' not in f.f_globals:\n"
        "    f = f.f_back\nf.f_globals['send']({'ev': 'loaded', 'ok': True})\n"
        "raise SystemExit(0)\n"
    ),
    "exit_in_call": "import os\ndef add(a, b):\n    os._exit(0)\n",
    "stdout_flood": (
        "import sys\ndef add(a, b):\n    sys.stdout.write('x' * (8 << 20))\n    return 0\n"
    ),
}


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


@pytest.mark.parametrize("path", ["planned", "live"])
@pytest.mark.parametrize("attack", sorted(HAVOC))
def test_havoc_in_the_candidate_is_a_scored_failure(
    judge: CodeJudge, attack: str, path: str
) -> None:
    task, code = (PLANNED, HAVOC[attack]) if path == "planned" else (LIVE, HAVOC[attack] + BOX)
    v = judge.judge(task, code)  # raises nothing
    assert not v.passed and v.reason not in ("unjudgeable", "verifier_error"), v
    assert v.facts.get("trainable", True) is True, v
    assert judge.judge(PLANNED, "def add(a, b):\n    return a + b\n").passed  # still healthy
