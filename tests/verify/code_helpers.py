"""Shared by the code-judging tests (imported as a plain module)."""

from __future__ import annotations

import os

UID_BASE = 100_000 + (os.getpid() % 5000) * 100 + 60

ADD_CALLS = {
    "kind": "calls",
    "entry_point": "add",
    "tests": [
        {"args": [1, 2], "expected": 3},
        {"args": [5, 7], "expected": 12},
        {"args": [-1, 1], "expected": 0},
    ],
}
ADD_HUMANEVAL = {
    "kind": "humaneval",
    "entry_point": "add",
    "prompt": "def add(a, b):\n",
    "test": "def check(candidate):\n    assert candidate(1, 2) == 3\n"
    "    assert candidate(5, 7) == 12\n    assert candidate(-1, 1) == 0\n",
}
ADD_MBPP = {
    "kind": "mbpp",
    "test_list": ["assert add(1, 2) == 3", "assert add(5, 7) == 12", "assert add(-1, 1) == 0"],
}
FUNCTION_TASKS = {"calls": ADD_CALLS, "humaneval": ADD_HUMANEVAL, "mbpp": ADD_MBPP}
GOOD = "def add(a, b):\n    return a + b\n"
