"""Grading a research answer against the planted truth: the answer, then its citations.

The answer text:

- ``number``: every number in the text (``$1,234.5 million``, ``1.2 billion``, ``3,169``)
  is read in the question's unit, numbers the question itself states (its fiscal year) are
  set aside, and exactly one must remain and lie within the relative tolerance. Two
  numbers (a hedge, a list of candidates) fail.
- ``entity``: names are compared normalised (case, punctuation, spacing); the text must
  name the answer and no other candidate, and must not negate or hedge (``not``, ``or``).
- ``none``: the text must say the question is not answerable from the corpus, with no
  figure beside it (``$100 million, or not answerable`` is a hedge), and cite nothing.
  Saying so on an answerable question fails.

A citation ``{doc_id, quote}`` is valid when the document exists, the quote (at most
``MAX_QUOTE`` characters, at least ``MIN_QUOTE``) appears in its body or title verbatim, and
it supports an evidence item when its document is one of that item's alternatives and the
quote contains the alternative's phrase. Every evidence item must be supported, and every
citation must be valid: one fabricated citation sinks the answer.

The verdict's partial ``score`` (:func:`partial_score`) pays no answer without evidence:
half for the answer and half for the evidence share, only where some evidence is cited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from gymforge.envs.research.truth import ResearchTruth

MAX_QUOTE = 160
"""About two sentences: a quote points at the passage that states the fact, not at a whole
report (which holds every figure of its year)."""
MIN_QUOTE = 8
MAX_CITATIONS = 8
ABSTAIN = (
    "not answerable",
    "cannot be answered",
    "can't be answered",
    "not in the corpus",
    "no information",
)
_NUMBER = re.compile(
    r"(?<![\w.-])\$?(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?:\s*(million|billion|thousand|bn|m|k)\b)?",
    re.I,
)
_SCALE = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9}
_UNIT_BASE = {"usd_million": 1e6, "count": 1.0, "usd": 1.0, "": 1.0}
_HEDGES = re.compile(r"\b(not|no|never|neither|nor|or|either|maybe|possibly|perhaps)\b|n't\b")
_NON_WORD = re.compile(r"[^\w]+")


def norm(text: str) -> str:
    """Lower case, punctuation to spaces, single spaces, padded for whole-word ``in``."""
    return " " + " ".join(_NON_WORD.sub(" ", text.lower()).split()) + " "


def numbers(text: str, unit: str) -> list[float]:
    """Every number of ``text`` in ``unit`` (a bare number is taken to be in it already)."""
    out = []
    for whole, frac, scale in _NUMBER.findall(text):
        v = float(whole.replace(",", "") + (frac or ""))
        if scale:
            v *= _SCALE[scale.lower()] / _UNIT_BASE[unit]
        out.append(v)
    return out


def abstains(text: str) -> bool:
    t = norm(text)
    return any(norm(p) in t for p in ABSTAIN)


def check_answer(t: ResearchTruth, text: str, prompt: str) -> tuple[bool, str]:
    """Whether ``text`` is the right answer, and why not."""
    stated = set(numbers(prompt, t.unit))
    if t.kind == "none":
        if not abstains(text):
            return False, "the question is not answerable"
        if any(v not in stated for v in numbers(text, t.unit)):
            return False, "a figure next to the abstention: a hedge"
        return True, ""
    if abstains(text):
        return False, "abstained on an answerable question"
    if t.kind == "number":
        assert t.value is not None
        got = [v for v in numbers(text, t.unit) if v not in stated]
        if len(got) != 1:
            return False, f"expected one number, found {len(got)}"
        if abs(got[0] - t.value) > t.tolerance * max(abs(t.value), 1.0):
            return False, f"{got[0]:g} is not {t.value:g}"
        return True, ""
    named = [c for c in t.candidates if norm(c) in norm(text)]
    if [norm(c) for c in named] != [norm(t.entity or "")]:
        return False, f"names {len(named)} candidates, expected exactly the answer"
    if _HEDGES.search(text.lower()):
        return False, "the answer negates or hedges"
    return True, ""


@dataclass
class CitationReport:
    """Per citation: ``valid`` and the evidence indexes it supports; ``covered`` per item."""

    checked: list[dict[str, Any]] = field(default_factory=list)
    covered: list[bool] = field(default_factory=list)

    @property
    def all_valid(self) -> bool:
        return all(c["valid"] for c in self.checked)


def check_citations(
    t: ResearchTruth, citations: Sequence[Mapping[str, Any]], docs: Mapping[str, Mapping[str, Any]]
) -> CitationReport:
    """Check each citation against the documents (``docs``: id -> row) and the evidence."""
    rep = CitationReport(covered=[False] * len(t.evidence))
    for cite in citations:
        doc_id, quote = str(cite.get("doc_id", "")), str(cite.get("quote", ""))
        doc = docs.get(doc_id)
        problem = ""
        if doc is None:
            problem = "no such document"
        elif not MIN_QUOTE <= len(quote) <= MAX_QUOTE:
            problem = f"a quote must be {MIN_QUOTE} to {MAX_QUOTE} characters"
        elif quote not in doc["body"] and quote not in doc["title"]:
            problem = "the quote is not in the document"
        supports = [
            i
            for i, ev in enumerate(t.evidence)
            if not problem and any(d == doc_id and needle in quote for d, needle in ev.alternatives)
        ]
        for i in supports:
            rep.covered[i] = True
        rep.checked.append(
            {"doc_id": doc_id[:40], "valid": not problem, "problem": problem, "supports": supports}
        )
    return rep


def partial_score(t: ResearchTruth, right: bool, rep: CitationReport) -> float:
    """The verdict's partial credit, for citations that are all valid and were read before
    the answer (the caller gives 0 otherwise): half for the right answer and half for the
    share of evidence items cited, and nothing without evidence, as the answer must rest on
    it; a question the corpus cannot answer has nothing to cite, so its answer is all of it.
    No citation: no credit, however right the answer."""
    if not rep.all_valid:
        return 0.0
    if t.kind == "none":
        return float(right)
    share = sum(rep.covered) / len(rep.covered)
    return 0.5 * right + 0.5 * share if share else 0.0
