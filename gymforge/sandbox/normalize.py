"""Wall-clock figures out of test-runner output, before it enters an observation.

An observation must be a function of the task, the seed and the actions, so that ``gymforge
replay`` reproduces every step and ``reproduce`` finds no difference. Test runners print how
long they took; ``normalize_output`` replaces each such figure with ``<time>`` and leaves
everything else as it was:

- unittest: ``Ran 3 tests in 0.004s`` -> ``Ran 3 tests in <time>``; the ``--durations``
  table (``0.001s test_x (tests.T.test_x)``) and its ``Slowest test durations`` lines;
- pytest: the summary ``=== 2 passed, 1 warning in 0.12s ===`` (and ``in 75.50s (0:01:15)``),
  the ``--durations`` lines (``0.50s call tests/test_x.py::test_a``), ``[gw0]``-style
  ``PASSED ... (0.01s)`` suffixes;
- generic runners: ``Finished in 0.2 seconds``, ``took 12ms``, ``Elapsed: 1.5s``,
  ``Time: 00:00.012``;
- object addresses in reprs (``<function f at 0x7f3a9c2b1d30>`` -> ``at 0x?``), which move
  from run to run as memory is laid out differently.

Figures that are data (``assert wait(5) == 5``, ``expected 0.5s, got 1s`` in a test's own
message) are left alone: only the runners' own phrasing is matched. Every pattern is linear
in its input (no unbounded lazy scan), since the output is the agent's to shape; callers
normalise what they have already cut to size.
"""

from __future__ import annotations

import re

TIME = "<time>"

_NUM = r"\d+(?:\.\d+)?"
_UNIT = r"(?:s|ms|us|µs|ns|sec|secs|seconds?|milliseconds?|minutes?|min)"
_RULES: tuple[tuple[re.Pattern[str], str], ...] = (
    # unittest: "Ran 3 tests in 0.004s"
    (re.compile(rf"(\bRan \d+ tests? in ){_NUM}s\b"), rf"\g<1>{TIME}"),
    # pytest summary: "=== 2 passed, 1 warning in 0.12s (0:00:00) ==="
    (
        re.compile(
            rf"(\b(?:passed|failed|errors?|skipped|xfailed|xpassed|warnings?|deselected|"
            rf"selected|no tests ran)\b[^\n]{{0,200}}? in ){_NUM}s(?: \(\d+:\d\d:\d\d(?:\.\d+)?\))?"
        ),
        rf"\g<1>{TIME}",
    ),
    # pytest --durations: "0.50s call     tests/test_x.py::test_a"; unittest --durations:
    # "0.001s test_x (tests.T.test_x)"
    (
        re.compile(rf"(?m)^(\s*){_NUM}s(\s+(?:call|setup|teardown)\b|\s+test)"),
        rf"\g<1>{TIME}\g<2>",
    ),
    # per-test suffixes: "PASSED tests/test_x.py::test_a (0.01s)", "ok (0.003s)"
    (re.compile(rf"\((?:{_NUM}){_UNIT}\)"), f"({TIME})"),
    # generic runners: "Finished in 0.2 seconds", "took 12ms", "Elapsed: 1.5s", "Duration 3s"
    (
        re.compile(
            rf"(?i)(\b(?:finished in|completed in|took|elapsed:?|duration:?|"
            rf"time elapsed:?|total time:?) ){_NUM} ?{_UNIT}\b"
        ),
        rf"\g<1>{TIME}",
    ),
    # "Time: 00:00.012" (phpunit/mocha-style clocks)
    (re.compile(r"(?i)(\btime: )\d+:\d\d(?::\d\d)?(?:\.\d+)?"), rf"\g<1>{TIME}"),
    # object addresses in reprs
    (re.compile(r"( at 0x)[0-9a-fA-F]{4,16}\b"), r"\g<1>?"),
)


def normalize_output(text: str) -> str:
    """``text`` with the test runners' wall-clock figures (and object addresses) replaced by
    placeholders; nothing else changes. Idempotent."""
    if not text:
        return text
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text
