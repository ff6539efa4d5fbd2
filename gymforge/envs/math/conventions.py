"""Answer conventions of existing model outputs, for grading them (``grade --answer-convention``).

Training prompts always ask for ``\\boxed{}`` and the environment reads only that by default
(``boxed``). Outputs produced elsewhere often follow another convention; grading them with
the convention they were asked for is an explicit choice:

- ``boxed``: the last ``\\boxed{}`` outside ``<think>`` (the default, as in training);
- ``hashes``: the last line ``#### N`` (GSM8K's own convention);
- ``answer-is``: the last "The answer is N" (few-shot chain-of-thought prompts);
- ``any``: the last of the three found in the reply, whichever it is.

Only the visible part of a reply is read (``<think>`` reasoning never is). The chosen
answer is handed to the verifier as one box, so the verifier's checks (size limits, hedges
inside the answer, equivalence) are the same whatever the convention; a reply without an
answer in the convention has no answer (``no_answer``).
"""

from __future__ import annotations

import re
from typing import Literal, get_args

from gymforge.verify.math.extract import split_reasoning

Convention = Literal["boxed", "hashes", "answer-is", "any"]
CONVENTIONS: tuple[str, ...] = get_args(Convention)

_BOX = re.compile(r"\\(?:boxed|fbox)(?![a-zA-Z])")
_HASHES = re.compile(r"^[ \t]*####(.+)$", re.M)
"""The rest of the line after ``####`` (``_clean`` strips it): a lazy answer before optional
trailing blanks retried a long run of blanks from every position, quadratic in the line."""
_ANSWER_IS = re.compile(
    r"the[ \t]+(?:final[ \t]+)?answer[ \t]+is[ \t]*:?[ \t]*(.+?)(?:\.[ \t]*$|\.[ \t]|$)",
    re.I | re.M,
)
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")


def as_boxed_reply(reply: str, convention: Convention) -> str:
    """The reply the verifier reads: unchanged for ``boxed`` (and for ``any`` when the
    reply's last answer is a box); else ``\\boxed{ANSWER}`` or ``""`` when there is none."""
    if convention == "boxed":
        return reply
    visible, _ = split_reasoning(reply)
    found: list[tuple[int, str | None]] = []  # (position, answer; None: a box, read as is)
    if convention == "any":
        found += [(m.start(), None) for m in _BOX.finditer(visible)]
    if convention in ("hashes", "any"):
        found += [(m.start(), _clean(m.group(1))) for m in _HASHES.finditer(visible)]
    if convention in ("answer-is", "any"):
        found += [(m.start(), _clean(m.group(1))) for m in _ANSWER_IS.finditer(visible)]
    if not found:
        return ""
    _, answer = max(found, key=lambda f: f[0])
    if answer is None:
        return reply
    return f"\\boxed{{{answer}}}" if answer else ""


def _clean(text: str) -> str:
    """``$1,234.`` -> ``1234``; a boxed answer inside the line stays a box's content."""
    s = text.strip().strip("*_").strip()
    if s.startswith("\\boxed") or s.startswith("\\fbox"):
        return s  # "The answer is \\boxed{5}": boxed_contents reads it
    s = s.strip("$").strip().rstrip(".").strip()
    return _THOUSANDS.sub("", s)
