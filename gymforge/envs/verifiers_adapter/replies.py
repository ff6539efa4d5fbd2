"""Replies a Verifiers parser reads: where it looks for the answer, and how to put one there.

A Verifiers row's ``answer`` is the rubric's input, not a reply; a reference reply (the
oracle) has to be built in the form the environment's parser reads, for each parser
Verifiers 0.3.1 ships (``verifiers.legacy.parsers``):

- ``XMLParser(fields, answer_field="answer")``: each field a tag, a tuple field a set of
  alternative tags whose first is canonical. ``parse_answer`` returns the ``answer_field``
  tag's content, which may be any alternative of a tuple field, so the answer goes in that
  exact tag; every other field gets its canonical tag with filler, so the parser's format
  reward (every field present, the first field opening the reply, the last closing it) is
  met. Laid out as its own ``format()`` lays it out: ``<tag>\\nvalue\\n</tag>`` per field,
  one per line. (``format`` itself is not used: it needs a value for every field, and
  ``format(answer=...)`` raises on ``["think", "answer"]``.)
- ``ThinkParser`` / ``MaybeThinkParser``: the answer is what follows the last ``</think>``;
  the reply is ``<think>\\n...\\n</think>\\n`` then the answer (``ThinkParser``'s format
  reward wants exactly one think block opening the reply).
- ``Parser`` (the default) and any other parser: the reply is the answer as it is.

Each form is tried with the answer as it is and in ``\\boxed{}`` (for an ``extract_fn`` such
as Verifiers' ``extract_boxed_answer``). The filler is ``...``: no word or digit the random
baseline's scramble could change in place of the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import verifiers.legacy as vf

FILLER = "..."
"""What fills a field that is not the answer (a ``think`` block)."""


@dataclass(frozen=True)
class ReplyForm:
    """One way of writing a reply the parser reads: ``layout(answer, other)`` puts the answer
    where ``parse_answer`` finds it and ``other`` in every other slot (``slots`` > 0 when
    there are any: a reasoning block, other XML fields)."""

    label: str
    layout: Callable[[str, str], str]
    slots: int = 0

    def reply(self, answer: str, other: str = FILLER) -> str:
        return self.layout(answer, other)

    def boxed(self) -> ReplyForm:
        """The same form with the answer in ``\\boxed{}``."""
        return ReplyForm(
            f"{self.label} + \\boxed{{}}",
            lambda answer, other: self.layout(f"\\boxed{{{answer}}}", other),
            self.slots,
        )


def _tag(name: str, value: str) -> str:
    return f"<{name}>\n{value}\n</{name}>"


def _xml_form(parser: vf.XMLParser) -> ReplyForm | None:
    fields: list[tuple[str, list[str]]] = list(parser._fields)
    target = parser.answer_field
    if not any(target in alternatives for _, alternatives in fields):
        return None  # parse_answer can never return anything: no reply reaches the rubric

    def layout(answer: str, other: str) -> str:
        return "\n".join(
            _tag(target, answer) if target in alternatives else _tag(canonical, other)
            for canonical, alternatives in fields
        )

    names = ", ".join("|".join(alternatives) for _, alternatives in fields)
    return ReplyForm(f"XMLParser({names})", layout, len(fields) - 1)


def _think_form(parser: vf.Parser) -> ReplyForm:
    return ReplyForm(
        type(parser).__name__,
        lambda answer, other: f"<think>\n{other}\n</think>\n{answer}",
        1,
    )


def reply_forms(parser: vf.Parser) -> list[ReplyForm]:
    """The forms to probe for ``parser``, in order: its own form, then with ``\\boxed{}``.
    Empty when the parser can never return an answer."""
    base: ReplyForm | None
    if isinstance(parser, vf.XMLParser):
        base = _xml_form(parser)
    elif isinstance(parser, vf.ThinkParser | vf.MaybeThinkParser):
        base = _think_form(parser)
    else:
        base = ReplyForm(type(parser).__name__, lambda answer, other: answer)
    return [] if base is None else [base, base.boxed()]
