"""A budget of executed lines of the dataset's test code (``line_budget``).

A HumanEval or MBPP check runs in the judge's process, and its loops may run as long as a
value the candidate returned says (``for _ in range(candidate(10**12))``: 13 turns for a
right answer). Both the real check (``session``) and each of the chance level's stand-ins
(``chance``) run under a budget of lines executed in the dataset's own code (the check, the
task's module and set-up code, MBPP asserts); past it :class:`OverBudget` is raised in that
code. Only those lines count: the judge's own work (compiling the check, encoding and
decoding values, the stand-ins' copies) is bounded by itself, and counting it made the
budget of a long check run out before its asserts (``test_code_chance_large_check_red18``).

**Not bounded:** a loop in C over an answer's value (``sum(range(candidate(n)))``) executes
no line of test code.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import FrameType
from typing import Any

# The file names the dataset's code is compiled under (``checks``).
DATASET_FILES = frozenset({"<humaneval test>", "<mbpp test>", "<task module>", "<task set-up>"})
MAX_CHECK_LINES = 1_000_000  # the real check (the published checks: hundreds of lines)


class OverBudget(BaseException):
    """The dataset's code ran past its budget of lines (a ``BaseException``: the check's own
    ``except Exception`` cannot swallow it)."""


@contextlib.contextmanager
def line_budget(lines: int) -> Iterator[None]:
    """Raise :class:`OverBudget` in the dataset's code run inside once it has executed
    ``lines`` lines (a trace on this thread; the one before is restored after)."""
    left = lines

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal left
        if event == "line":
            left -= 1
            if left < 0:
                raise OverBudget
        return local

    def on_call(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename in DATASET_FILES else None

    before = sys.gettrace()
    sys.settrace(on_call)
    try:
        yield
    finally:
        sys.settrace(before)
