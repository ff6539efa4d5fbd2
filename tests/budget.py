"""How much a costly test draws in the default run, and the full amount under ``make
test-slow``: a property test's examples, a built-in QA report's episodes.

``@examples(3000)`` parametrizes a test with ``examples``: the ``default`` case (a tenth, at
least :data:`FLOOR`) and the ``full`` case, marked ``slow``. The test draws that many examples
of the same strategy for the same property (``settings(max_examples=examples)`` on an inner
``@given`` function), so the default run checks the same property on fewer examples.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from gymforge.qa import QAOptions, QAReport

FLOOR = 100

QUICK_QA = QAOptions(episodes=8, fuzz_examples=13)
"""The options of the default run's built-in QA reports (``builtin_qa_report``): a third of
``gymforge qa``'s episodes and fuzzed inputs; every check still runs, on every built-in.
``make test-slow`` runs each built-in under the defaults
(``tests/qa/test_qa_suite.py::test_builtin_env_passes_all_ten_checks_with_the_defaults``)."""


def examples(full: int) -> pytest.MarkDecorator:
    """``parametrize("examples", [default, full])``, the full count marked ``slow``."""
    return pytest.mark.parametrize(
        "examples",
        [
            pytest.param(max(FLOOR, full // 10), id="default"),
            pytest.param(full, id="full", marks=pytest.mark.slow),
        ],
    )


def without_speed_budget(report: QAReport) -> QAReport:
    """``report`` as the default suite judges it: it asserts no wall-clock budget, so a
    ``throughput`` check that ran and came in over budget is kept as passed, its figures
    and the reason in its details. Any other failure of the check still fails.
    ``tests/qa/test_qa_suite.py::test_builtin_throughput_budget`` judges the budgets, under
    ``make test-perf``; ``gymforge qa`` always does."""
    for i, check in enumerate(report.checks):
        if (
            check.name == "throughput"
            and not check.passed
            and check.details.startswith("over budget")
        ):
            note = "not judged outside `make test-perf` (a wall-clock budget): "
            report.checks[i] = replace(check, passed=True, details=note + check.details)
    return report
