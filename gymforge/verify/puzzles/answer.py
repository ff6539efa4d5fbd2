"""Answer extraction shared by every puzzle family, and the ``Outcome`` a checker returns.

The answer format is the same for every family: the reply ends with one line
``Answer: <solution>``. The rules, in order:

1. Reasoning is not an answer. Every ``<think>...</think>`` block is removed; text before a
   stray ``</think>`` (a chat template that opened the block in the prompt) and after an
   unclosed ``<think>`` is reasoning too. Nothing inside reasoning is ever used.
2. Answer lines are lines that start with ``Answer:`` (case-insensitive; ``Final answer:``
   and Markdown bold ``**Answer:**`` are tolerated). The answer is the rest of that line.
3. Several answer lines that differ (after collapsing whitespace) are a hedge and fail.
4. The last answer line must end the reply: text after it (``none of these``, a second
   candidate, a retraction) fails as ``text_after_answer``.
5. Families with grid answers (sudoku from version 2) take ``multiline``: the answer is then
   everything from ``Answer:`` to the end of the reply, so a grid may follow on its own
   lines; the family's checker refuses anything in it that is not part of a grid.

Only the text of the last answer is handed to the family's checker, which judges the
*validity* of the proposed solution (never a string match against one stored answer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

MAX_ANSWER_CHARS = 2_000
"""Longest answer line a checker is ever given; longer ones fail as ``too_long``."""

_THINK_TAG = re.compile(r"<(/?)think>", re.I)
_ANSWER_LINE = re.compile(
    r"^[ \t]*(?:\*\*)?(?:final[ \t]+)?answer(?:\*\*)?[ \t]*:(?:\*\*)?(.*)$", re.M | re.I
)
_SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Outcome:
    """A checker's finding: ``passed``, a short machine-readable ``reason`` when it did not,
    and JSON-safe ``facts`` (which cell, which edge, which number...)."""

    passed: bool
    reason: str | None = None
    facts: dict[str, Any] = field(default_factory=dict)


def ok(**facts: Any) -> Outcome:
    return Outcome(True, None, facts)


def fail(reason: str, **facts: Any) -> Outcome:
    return Outcome(False, reason, facts)


def visible_text(reply: str) -> str:
    """``reply`` without its reasoning: ``<think>`` blocks, text before a stray ``</think>``
    and text after an unclosed ``<think>`` are all dropped. One linear scan over the tags
    (a regex like ``<think>.*?</think>`` is quadratic on many unclosed tags)."""
    kept: list[str] = []
    pos, inside = 0, False
    for tag in _THINK_TAG.finditer(reply):
        if not tag[1]:  # <think>
            if not inside:
                kept.append(reply[pos : tag.start()])
                inside = True
        elif inside:  # the </think> that closes the block
            inside, pos = False, tag.end()
        else:  # a stray </think>: everything before it was reasoning
            kept, pos = [], tag.end()
    if not inside:
        kept.append(reply[pos:])
    return "\n".join(kept)


def extract_answer(reply: str, multiline: bool = False) -> tuple[str | None, Outcome | None]:
    """``(answer, None)`` for a well-formed reply, else ``(None, failing Outcome)``.

    Reasons: ``no_answer``, ``hedge`` (several different answers), ``text_after_answer``,
    ``too_long``. With ``multiline`` an answer runs to the next answer line or the end.
    """
    text = visible_text(reply)
    matches = list(_ANSWER_LINE.finditer(text))
    if not matches:
        return None, fail("no_answer")
    if multiline:
        ends = [m.start() for m in matches[1:]] + [len(text)]
        blocks = [text[m.start(1) : end] for m, end in zip(matches, ends, strict=True)]
        answers = [b.strip().removeprefix("**").strip() for b in blocks]
        if len({_SPACES.sub(" ", a) for a in answers}) > 1:
            return None, fail("hedge", answers=len(set(answers)))
        return _bounded(answers[-1])
    answers = [m.group(1).strip().rstrip("*").strip() for m in matches]
    distinct = sorted({_SPACES.sub(" ", a) for a in answers})
    if len(distinct) > 1:
        return None, fail("hedge", answers=len(distinct))
    if text[matches[-1].end() :].strip():
        return None, fail("text_after_answer")
    return _bounded(answers[-1])


def _bounded(answer: str) -> tuple[str | None, Outcome | None]:
    """The final answer, unless it is empty or over ``MAX_ANSWER_CHARS``."""
    if not answer:
        return None, fail("no_answer")
    if len(answer) > MAX_ANSWER_CHARS:
        return None, fail("too_long", chars=len(answer))
    return answer, None


def answer_instruction(form: str, example: str, multiline: bool = False) -> str:
    """The format paragraph every prompt ends with: one final line, nothing after it (or,
    ``multiline``, the answer from ``Answer:`` to the end, which may span lines)."""
    if multiline:
        return (
            "Think as long as you like, then end your reply with your answer after a line "
            f"starting 'Answer:', of the form\nAnswer: {form}\nfor example: Answer: {example}\n"
            "The grid may instead follow on its own lines after 'Answer:'. Nothing else may "
            "follow the answer, and a reply with two different answers is wrong."
        )
    return (
        "Think as long as you like, then end your reply with exactly one final line of the "
        f"form\nAnswer: {form}\nfor example: Answer: {example}\n"
        "Nothing may follow that line, and a reply with two different answers is wrong."
    )
