"""Attack: copy a GRPO sibling's answer out of the memory the job's process inherited.

Every job's process is forked from its worker's zygote, which received the previous job (its
source, its input) and relayed its output through its own heap. Freed is not
erased: a candidate that walks ``/proc/self/maps`` and reads its own pages with ``ctypes``
finds the previous job's bytes. On one worker the previous job is, in a GRPO group, a sibling
answering the same task: the candidate finds the sibling's source and runs it (a HumanEval
task, a stdio task). Success would mean
a candidate that solves nothing passes whenever a sibling did, and the judge's promise that
nothing of one job is visible to another is broken. The scanner never holds its needle whole
(it matches a head, then compares the rest xor-ed), so it cannot find itself.

The tests' own text is never in the sandbox: the same scan for it finds nothing (asserted).
The scan does read inherited memory: it finds the fork template's warm-up source, which every
job child inherits (asserted), so a miss below means the bytes are not there.

**Fixed** (``gymforge/sandbox/template.py``): every job child is forked from a fork template, a
fresh interpreter warmed on constant input that never receives job data; the zygote still
relays every job's bytes but is never a job's parent in memory.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from judge_fixture import judge_on_bwrap

from gymforge.verify.code import CodeJudge

SCAN = r'''
import ctypes

def _scan(needle):
    """Offsets of `needle` (given xor 1) in this process's readable memory, never whole."""
    head = bytes(c ^ 1 for c in needle[:6])
    for line in open("/proc/self/maps").read().splitlines():
        parts = line.split()
        if "r" not in parts[1] or (len(parts) > 5 and parts[5].startswith("[v")):
            continue
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        if hi - lo > 64 << 20:
            continue
        try:
            chunk = ctypes.string_at(lo, hi - lo)
        except Exception:
            continue
        i = chunk.find(head)
        while i >= 0:
            if bytes(c ^ 1 for c in chunk[i + 6 : i + len(needle)]) == needle[6:]:
                yield chunk[i : i + 400]
            i = chunk.find(head, i + 1)
'''


def xor(s: str) -> bytes:
    return bytes(c ^ 1 for c in s.encode())


TASK = {
    "kind": "humaneval",
    "entry_point": "add",
    "prompt": "def add(a, b):\n",
    "test": "def check(candidate):\n    # TESTS_ONLY_MARK_5123\n"
    "    assert candidate(1, 2) == 3\n    assert candidate(5, 7) == 12\n",
}
SIBLING = "def add(a, b):\n    # SIBLING_MARK_7731\n    return a + b\n"
COPIER = SCAN + (
    "def _find():\n"
    f"    for hit in _scan({xor('def add(a, b):' + chr(10) + '    # SIBLING_MARK_7731')!r}):\n"
    "        return hit.split(b'\\x00')[0].decode(errors='ignore')\n"
    "    return ''\n"
    "_ns = {}\n"
    "try:\n    exec(_find(), _ns)\nexcept Exception:\n    pass\n"
    "def add(a, b):\n    return _ns['add'](a, b) if 'add' in _ns else 0\n"
)
TEST_READER = SCAN + (
    f"FOUND = any(True for _ in _scan({xor('TESTS_ONLY_MARK_5123')!r}))\n"
    "def add(a, b):\n    return a + b if FOUND else 0\n"
)

# Text only the fork template's warm-up code holds (``warmup._WARM_SOURCE``): inherited.
INHERITED_READER = SCAN + (
    f"FOUND = any(True for _ in _scan({xor('if i != j and abs(a - b) < t:')!r}))\n"
    "def add(a, b):\n    return a + b if FOUND else 0\n"
)

ECHO = {  # a stdio task: print the answer for the input
    "kind": "stdio",
    "tests": [{"input": "41\n", "output": "ANSWER_MARK_3319 42\n"}],
}
ECHO_SIBLING = "print('ANSWER_MARK_3319', int(input()) + 1)\n"
ECHO_NEEDLE = xor("print('ANSWER_MARK_3319'")
ECHO_COPIER = SCAN + (
    f"for hit in _scan({ECHO_NEEDLE!r}):\n"
    "    exec(hit.split(b'\\n')[0].decode(errors='ignore'))\n"
    "    break\n"
)


@pytest.fixture(scope="module")
def judge() -> Iterator[CodeJudge]:
    yield from judge_on_bwrap()


def test_the_scan_works_and_the_tests_are_not_in_the_sandbox(judge: CodeJudge) -> None:
    assert judge.judge(TASK, SIBLING).passed
    v = judge.judge(TASK, TEST_READER)
    assert not v.passed and v.facts["tests_passed"] == 0, v
    assert judge.judge(TASK, INHERITED_READER).passed  # the scan reads inherited pages


def test_a_candidate_cannot_run_the_previous_jobs_source(judge: CodeJudge) -> None:
    assert judge.judge(TASK, SIBLING).passed  # the sibling, on the same (only) worker
    v = judge.judge(TASK, COPIER)
    assert not v.passed and v.facts["tests_passed"] == 0, v


def test_a_stdio_candidate_cannot_run_the_previous_jobs_source(judge: CodeJudge) -> None:
    assert judge.judge(ECHO, ECHO_SIBLING, "python").passed
    v = judge.judge(ECHO, ECHO_COPIER, "python")
    assert not v.passed, v
