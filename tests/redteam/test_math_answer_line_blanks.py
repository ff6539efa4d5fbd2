"""Attack: stall the math judge in its own process with one answer line full of blanks.

Where a reply's answer is read from a line (``#### N``, ``Answer: N``: the ``hashes`` and
``any`` conventions of ``MathEnv`` and ``gymforge grade``, and ``accept_answer_line``), the
line was matched by a regular expression with a lazy answer followed by optional trailing
blanks and the end of the line: on ``#### 1`` + 150,000 spaces + ``2`` (150 KB, under the
environment's default 40,960-token budget) it retried the blank run from every position,
quadratic: about a second for 20,000 blanks and a minute for 150,000, on the event loop of
the environment (this extraction runs before the killable worker is asked). Success would
mean a policy choosing minutes of judge CPU per reply. The defence: the rest of the line is
taken as it is and stripped (same answers; ``test_same_answers``), so the work is linear;
the bomb runs in a child under a CPU limit far above what a linear pass needs.
"""

from __future__ import annotations

import subprocess

import pytest
from cpu_capped import run_capped

from gymforge.envs.math.conventions import as_boxed_reply
from gymforge.verify.math.extract import extract_answer

BLANKS = 150_000
CPU_LIMIT_S = 20  # a linear pass takes milliseconds; the quadratic one took about a minute


def _run_capped(code: str) -> subprocess.CompletedProcess[str]:
    return run_capped(code, CPU_LIMIT_S)


@pytest.mark.parametrize(
    "call",
    [
        "as_boxed_reply(TEXT.replace('Answer:', '####'), 'hashes')",
        "as_boxed_reply(TEXT.replace('Answer:', '####'), 'any')",
        "extract_answer(TEXT, accept_answer_line=True).answer",
    ],
)
def test_a_line_of_blanks_is_read_in_linear_time(call: str) -> None:
    done = _run_capped(
        f"""
        import sys
        sys.path.insert(0, ".")
        from gymforge.envs.math.conventions import as_boxed_reply
        from gymforge.verify.math.extract import extract_answer
        TEXT = "Answer: 1" + " " * {BLANKS} + "2\\n"
        out = {call}
        print(len(out))
        """
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])


LINES = [
    "#### 5",
    "####5   ",
    "####",
    "####   ",
    "  ####  1,234.  \t",
    "#### $7$",
    "#### * _ 5",
    "####**8** ",
    "####\t_x_\t",
    "#### 3\n#### ",
    "#### 3\n####",
    "text\n#### \\boxed{4} \t\nmore",
]


@pytest.mark.parametrize("text", LINES)
def test_same_answers(text: str) -> None:
    assert as_boxed_reply(text, "hashes") == _reference_hashes(text), text
    line = text.replace("####", "Answer:")
    assert extract_answer(line, accept_answer_line=True) == _reference_line(line), line
    final = text.replace("####", "**Final answer**\uff1a")
    assert extract_answer(final, accept_answer_line=True) == _reference_line(final), final


def _reference_hashes(text: str) -> str:
    """The convention as it was (quadratic on long blank runs; fine on these lines)."""
    import re

    from gymforge.envs.math import conventions

    old = re.compile(r"^[ \t]*####[ \t]*(.+?)[ \t]*$", re.M)
    found = [(m.start(), conventions._clean(m.group(1))) for m in old.finditer(text)]
    if not found:
        return ""
    answer = max(found, key=lambda f: f[0])[1]
    return f"\\boxed{{{answer}}}" if answer else ""


def _reference_line(text: str) -> object:
    import re

    from gymforge.verify.math import extract

    old = re.compile(
        r"^[ \t>#*_-]*(?:final[ \t]+answer|answer)[ \t*_]*[:\uff1a][ \t*_]*(.+?)[ \t]*$",
        re.I | re.M,
    )
    saved = extract._ANSWER_LINE
    extract._ANSWER_LINE = old
    try:
        return extract.extract_answer(text, accept_answer_line=True)
    finally:
        extract._ANSWER_LINE = saved
