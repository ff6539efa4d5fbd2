"""Final-answer extraction and size pre-checks. Pure functions, linear time, no sympy.

The contract:

- Reasoning is everything inside ``<think>...</think>`` (or ``<thinking>``), everything after
  an unclosed ``<think>``, and everything before a ``</think>`` that closes nothing (chat
  templates often put the opening tag in the prompt). Nothing inside reasoning is ever used.
- The final answer is the content of the last ``\\boxed{...}`` or ``\\fbox{...}`` in the rest
  (braces balanced, ``\\{`` and ``\\}`` escaped, nested boxes belong to the outer one;
  ``\\boxed 5`` is read too). With ``accept_answer_line=True`` and no box, the last line that
  starts with ``Answer:`` or ``Final answer:`` is used instead.
- Every other final answer (other boxes, or other answer lines) whose text differs from the
  chosen one is returned in ``others``. The verifier ignores them by default (the last one
  is the answer); in strict mode it fails the response as ``hedged`` unless each of them is
  equivalent to the chosen one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

MAX_ANSWER_CHARS = 10_000
MAX_NESTING = 50
MAX_DIGIT_RUN = 4000
MAX_OTHERS = 8

_TAG = re.compile(r"<(/?)think(?:ing)?\s*>", re.I)
_BOX = re.compile(r"\\(?:boxed|fbox)(?![a-zA-Z])")
_BRACES = re.compile(r"[{}]")
_BARE_TOKEN = re.compile(r"[^\s$]+")
_ANSWER_LINE = re.compile(
    r"^[ \t>#*_-]*(?:final[ \t]+answer|answer)[ \t*_]*[:\uff1a][ \t*_]*(.+)$", re.I | re.M
)
"""The rest of the line, which ``_clean_line`` strips (a lazy answer before optional trailing
blanks retried a long run of blanks from every position: quadratic in the line)."""
_DIGIT_RUN = re.compile(rf"\d{{{MAX_DIGIT_RUN + 1},}}")
_BRACKETS = re.compile(r"[()\[\]{}]")


@dataclass(frozen=True)
class ExtractionResult:
    """``answer`` is None when there is no final answer. ``others`` holds up to ``MAX_OTHERS``
    other final answers whose text differs from ``answer``; ``too_many_answers`` says there
    were more. ``reasoning_boxes`` counts boxes inside reasoning (ignored)."""

    answer: str | None
    others: tuple[str, ...] = ()
    source: Literal["boxed", "answer_line", "none"] = "none"
    too_many_answers: bool = False
    reasoning_boxes: int = 0


NO_ANSWER = ExtractionResult(None)
"""The result of a response without a final answer or a box in its reasoning (frozen, so
one is shared)."""


def split_reasoning(text: str) -> tuple[str, str]:
    """(the visible text, the reasoning text) of a response. A response without a ``<`` has
    no tag: all of it is visible."""
    if "<" not in text:
        return text, ""
    return walk_tags(text)


def walk_tags(text: str) -> tuple[str, str]:
    """:func:`split_reasoning` by walking every think tag of ``text`` (its reference, for a
    text without ``<`` too)."""
    visible: list[str] = []
    reasoning: list[str] = []
    depth, pos = 0, 0
    for m in _TAG.finditer(text):
        closing = m.group(1) == "/"
        chunk = text[pos : m.start()]
        if depth == 0 and not closing:
            visible.append(chunk)
            depth = 1
        elif depth == 0:  # a closing tag that closes nothing: all before it was reasoning
            reasoning.extend(visible)
            reasoning.append(chunk)
            visible = []
        else:
            reasoning.append(chunk)
            depth += -1 if closing else 1
        pos = m.end()
    (reasoning if depth else visible).append(text[pos:])
    return "\n".join(visible), "\n".join(reasoning)


def _brace_pairs(text: str) -> dict[int, int]:
    """Index of each ``{`` -> index of its matching ``}``; escapes (``\\\\``, ``\\{``, ``\\}``)
    are not braces. One pass over ``text``."""
    return _pairs(_unescaped(text))


def _unescaped(text: str) -> str:
    """``text`` with its escapes blanked out (same length, so indices hold): ``\\\\``
    first, then ``\\{`` and ``\\}``."""
    return text.replace("\\\\", "  ").replace("\\{", "  ").replace("\\}", "  ")


def _closing(plain: str, j: int) -> int | None:
    """The index of the ``}`` matching the ``{`` at ``j`` of ``plain`` (escapes blanked), or
    None: what ``_pairs(plain).get(j)`` gives, found by scanning forward from ``j`` only
    (the match of a brace depends on nothing before it: while it is open, every ``}`` closes
    the innermost open brace). Linear in the distance to the match, or to the end."""
    pos, open_ = j + 1, 1
    while True:
        close = plain.find("}", pos)
        if close < 0:
            return None
        open_ += plain.count("{", pos, close) - 1
        if not open_:
            return close
        pos = close + 1


def _pairs(plain: str) -> dict[int, int]:
    """``_brace_pairs`` of a text whose escapes are blanked out."""
    match: dict[int, int] = {}
    stack: list[int] = []
    for m in _BRACES.finditer(plain):
        if m.group(0) == "{":
            stack.append(m.start())
        elif stack:
            match[stack.pop()] = m.start()
    return match


def _skip_blanks(s: str, j: int, hi: int) -> int:
    """The first index at or after ``j`` (below ``hi``) that is not a space or a tab: a box
    keyword may be followed by blanks before its group."""
    while j < hi and s[j] in " \t":
        j += 1
    return j


def boxed_contents(text: str) -> list[str]:
    """The contents of the outermost ``\\boxed``/``\\fbox`` groups of ``text``, in order.

    Linear in ``len(text)``: braces are matched once, and a box nested in another is skipped
    by one comparison."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return []
    plain = _unescaped(text)
    match: dict[int, int] | None = None  # every brace's match, once a box is unbalanced
    out: list[str] = []
    end = -1
    for m in _BOX.finditer(text):
        if m.start() < end:
            continue  # nested inside the previous box
        j = _skip_blanks(text, m.end(), len(text))
        if j < len(text) and text[j] == "{":
            # each box's match scanned for (the boxes' spans do not overlap: linear), until
            # a box is unbalanced (a scan to the end): then all braces are matched at once,
            # so that many unbalanced boxes cost one pass, not one each
            close = _closing(plain, j) if match is None else match.get(j)
            if close is None:
                if match is None:
                    match = _pairs(plain)
                continue  # unbalanced: not an answer
            out.append(text[j + 1 : close].strip())
            end = close
        elif j > m.end():  # \boxed 5: one space-delimited token
            bare = _BARE_TOKEN.match(text, j)
            if bare:
                out.append(bare.group(0).strip())
                end = bare.end()
    return out


def _clean_line(s: str) -> str:
    s = s.strip().strip("*_").strip().rstrip(".").strip()
    if s.startswith("$") and s.endswith("$"):
        s = s.strip("$").strip()
    return s.rstrip(".").strip()


def extract_answer(text: str, accept_answer_line: bool = False) -> ExtractionResult:
    """The final answer of a model response (see the module docstring for the contract)."""
    visible, reasoning = split_reasoning(text)
    hidden = len(boxed_contents(reasoning)) if "box" in reasoning else 0
    found = boxed_contents(visible)
    source: Literal["boxed", "answer_line", "none"] = "boxed"
    if not found and accept_answer_line:
        found = [_clean_line(m.group(1)) for m in _ANSWER_LINE.finditer(visible)]
        found = [f for f in found if f]
        source = "answer_line"
    if not found:
        return ExtractionResult(None, reasoning_boxes=hidden) if hidden else NO_ANSWER
    inner = [_unbox(f) for f in found]
    answer = inner[-1]
    key = _squash(answer)
    others: list[str] = []
    seen = {key}
    for f in reversed(inner[:-1]):
        k = _squash(f)
        if k not in seen:
            seen.add(k)
            others.append(f)
    return ExtractionResult(
        answer=answer,
        others=tuple(others[:MAX_OTHERS]),
        source=source,
        too_many_answers=len(others) > MAX_OTHERS,
        reasoning_boxes=hidden,
    )


def _unbox(s: str) -> str:
    """``\\boxed{\\boxed{3}}`` is 3: peel boxes that span the whole text, in one pass (a
    5,000-deep nest of boxes costs one brace match, not 5,000)."""
    match = _brace_pairs(s)
    lo, hi = 0, len(s)
    while True:
        while lo < hi and s[lo].isspace():
            lo += 1
        while hi > lo and s[hi - 1].isspace():
            hi -= 1
        m = _BOX.match(s, lo, hi)
        if m is None:
            return s[lo:hi]
        j = _skip_blanks(s, m.end(), hi)
        if j >= hi or s[j] != "{" or match.get(j) != hi - 1:
            return s[lo:hi]
        lo, hi = j + 1, hi - 1


def _squash(s: str) -> str:
    return "".join(s.split())


def precheck(answer: str) -> str | None:
    """Why ``answer`` is too large to evaluate at all (length, digits, nesting), or None."""
    if len(answer) > MAX_ANSWER_CHARS:
        return f"answer longer than {MAX_ANSWER_CHARS} characters"
    if _DIGIT_RUN.search(answer):
        return f"a number with more than {MAX_DIGIT_RUN} digits"
    depth = peak = 0
    for m in _BRACKETS.finditer(answer):
        depth += 1 if m.group(0) in "([{" else -1
        peak = max(peak, depth)
    if peak > MAX_NESTING:
        return f"brackets nested deeper than {MAX_NESTING}"
    return None
