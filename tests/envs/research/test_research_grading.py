"""research grading: numbers in the question's unit, names normalised, hedges and lists
refused, abstention only where the corpus cannot answer; citations verbatim and on point."""

from __future__ import annotations

from typing import Any

import pytest

from gymforge.envs.research.corpus import corpus
from gymforge.envs.research.grading import (
    MAX_QUOTE,
    abstains,
    check_answer,
    check_citations,
    numbers,
)
from gymforge.envs.research.truth import Evidence, ResearchTruth

PROMPT = "What revenue did Borel Labs report for fiscal 2022, in USD million?"


def truth(**kw: Any) -> ResearchTruth:
    base: dict[str, Any] = {"world": {}, "now": "2025-01-15T09:00:00Z", "corpus": "8x0"}
    return ResearchTruth(**{**base, **kw})


REVENUE = truth(kind="number", value=540.3, unit="usd_million", answer="$540.3 million")
CEO = truth(
    kind="entity",
    entity="Ines Haddad",
    candidates=["Ines Haddad", "Ines Novak", "Omar Reyes"],
    answer="Ines Haddad",
)
NONE = truth(kind="none", answer="not answerable")


def test_numbers_are_read_in_the_question_unit() -> None:
    assert numbers("$540.3 million", "usd_million") == [540.3]
    assert numbers("0.5403 billion dollars", "usd_million") == pytest.approx([540.3])
    assert numbers("540,300 thousand", "usd_million") == pytest.approx([540.3])
    assert numbers("1,317 employees", "count") == [1317.0]
    assert numbers("$1,558.37", "usd") == [1558.37]
    assert numbers("see D-1234 and v2.0", "count") == []  # ids and versions are no numbers


@pytest.mark.parametrize(
    ("text", "right"),
    [
        ("$540.3 million", True),
        ("Borel Labs reported $540.3 million for fiscal 2022.", True),  # the year is the prompt's
        ("540.3", True),
        ("$0.5403 billion", True),
        ("$541.0 million", True),  # within 0.5%
        ("$545.0 million", False),
        ("$540.3 billion", False),  # the wrong unit
        ("$540.3 million or $612.0 million", False),  # a hedge: two numbers
        ("about 540 or 541", False),
        ("not answerable", False),
        ("", False),
    ],
)
def test_number_answers(text: str, right: bool) -> None:
    assert check_answer(REVENUE, text, PROMPT)[0] is right


@pytest.mark.parametrize(
    ("text", "right"),
    [
        ("Ines Haddad", True),
        ("ines  haddad.", True),
        ("The chief executive is Ines Haddad", True),
        ("Ines Haddad, Ines Novak, Omar Reyes", False),  # every candidate
        ("Ines Haddad or Ines Novak", False),
        ("It is not Ines Novak; Ines Haddad", False),
        ("Not Ines Haddad", False),
        ("Ines", False),
        ("Haddad Ines", False),
    ],
)
def test_entity_answers(text: str, right: bool) -> None:
    assert check_answer(CEO, text, "Who is the current chief executive officer?")[0] is right


def test_abstention() -> None:
    for text in ("Not answerable.", "This cannot be answered from the corpus", "NO INFORMATION"):
        assert abstains(text) and check_answer(NONE, text, PROMPT)[0]
    assert not check_answer(NONE, "$540.3 million", PROMPT)[0]
    assert not check_answer(NONE, "$540.3 million, or else not answerable", PROMPT)[0]
    assert check_answer(NONE, "Not answerable: nothing for fiscal 2022.", PROMPT)[0]
    assert not check_answer(NONE, "I don't know", PROMPT)[0]


DOCS = {
    "D-1": {
        "title": "Borel Labs annual report 2022",
        "body": "Borel Labs is based in Graz. For fiscal 2022, Borel Labs reported revenue of "
        "$540.3 million. This report was approved by the board.",
    },
    "D-2": {"title": "Blog", "body": "We estimate Borel Labs at about $612.0 million."},
}
EV = truth(
    kind="number",
    value=540.3,
    unit="usd_million",
    answer="$540.3 million",
    evidence=[
        Evidence(
            alternatives=[("D-1", "$540.3 million")],
            doc="D-1",
            quote="For fiscal 2022, Borel Labs reported revenue of $540.3 million.",
            query="Borel Labs revenue 2022",
        )
    ],
)


@pytest.mark.parametrize(
    ("doc_id", "quote", "valid", "covered"),
    [
        ("D-1", "reported revenue of $540.3 million", True, True),
        ("D-1", "Borel Labs annual report 2022", True, False),  # the title: no evidence
        ("D-1", "This report was approved by the board.", True, False),
        ("D-1", "reported revenue of $540.30 million", False, False),  # not verbatim
        ("D-1", "Reported revenue of $540.3 million", False, False),  # case matters
        ("D-2", "$612.0 million", True, False),  # verbatim, but the blog is no evidence
        ("D-9", "reported revenue of $540.3 million", False, False),  # no such document
        ("D-1", "$540.3", False, False),  # too short to be a quote
        ("D-1", DOCS["D-1"]["body"] * 3, False, False),  # too long
    ],
)
def test_citations(doc_id: str, quote: str, valid: bool, covered: bool) -> None:
    rep = check_citations(EV, [{"doc_id": doc_id, "quote": quote}], DOCS)
    assert rep.checked[0]["valid"] is valid, rep.checked
    assert rep.covered == [covered]


def test_whole_report_quotes_are_refused() -> None:
    """A report holds every figure of its year, so quoting it whole points at nothing; its
    sentence does."""
    report = next(d for d in corpus(8, 0).docs.values() if d.kind == "report")
    docs = {report.id: report.row()}
    figure = report.sentences[1].rsplit("of ", 1)[1][:-1]  # "$540.3 million"
    t = EV.model_copy(
        update={
            "evidence": [EV.evidence[0].model_copy(update={"alternatives": [(report.id, figure)]})]
        }
    )
    whole = check_citations(t, [{"doc_id": report.id, "quote": report.body}], docs)
    assert len(report.body) > MAX_QUOTE and not whole.all_valid and whole.covered == [False]
    one = check_citations(t, [{"doc_id": report.id, "quote": report.sentences[1]}], docs)
    assert one.all_valid and one.covered == [True]
