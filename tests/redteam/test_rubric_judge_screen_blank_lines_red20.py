"""Attack: stall the rubric judge's screens, on the event loop, with a run of blank lines.

Three screens look for a header at a line start after any marks (``(?:^|\\n)[\\W_]*``: a
``Reference answer:`` line, grading instructions, a ``Score: N/M`` line). A newline is a
mark too, so on an answer of blank lines each newline starts a scan over every newline
after it: quadratic. One answer of 20,000 newlines between two letters (under the judge's
20,000-character cap, and a few hundred tokens) took about 90 s of CPU in ``screen_answer``,
which ``RubricJudge.ajudge`` runs on the event loop served sessions share, before any model
call; ``-`` and a newline repeated took about 45 s. Success would mean a policy choosing a
minute of judge time per reply. The bombs run in a child under a CPU limit far above what a
linear pass needs.
"""

from __future__ import annotations

import pytest
from cpu_capped import run_capped

CPU_LIMIT_S = 8  # a linear pass takes well under a second; the quadratic one about 90 s

BOMBS = {
    "newlines": "'x' + '\\n' * 19_990 + 'x'",
    "dash_lines": "'x' + '-\\n' * 9_990 + 'x'",
    "indented_blank_lines": "'x' + '\\n ' * 9_990 + 'x'",
    "underscore_lines": "'x' + '_\\n' * 9_990 + 'x'",
    # sentence starts (the prose-score screen reads sentences; a first draft of it rescanned
    # every '. ' after each one: about 28 s)
    "dotted_spaces": "'x' + ' .' * 9_990 + 'x'",
    "dotted_lines": "'x' + '.\\n' * 9_990 + 'x'",
}


@pytest.mark.parametrize("shape", sorted(BOMBS))
def test_blank_lines_are_screened_in_linear_time(shape: str) -> None:
    done = run_capped(
        f"""
        import sys
        sys.path.insert(0, ".")
        from gymforge.verify.llm_judge.screens import screen_answer

        answer = {BOMBS[shape]}
        assert len(answer) <= 20_000, len(answer)
        print(screen_answer(answer, 20_000, ("correctness", "completeness"))[1])
        """,
        CPU_LIMIT_S,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "None"
