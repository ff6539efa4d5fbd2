"""Final-answer extraction and size pre-checks: pure functions, no pool."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.verify.math import extract_answer, split_reasoning
from gymforge.verify.math.extract import MAX_OTHERS, ExtractionResult, precheck, walk_tags


def test_last_box_outside_reasoning() -> None:
    r = extract_answer("<think>\\boxed{1}</think> so \\boxed{2} and finally \\boxed{3}")
    assert r.answer == "3" and r.others == ("2",) and r.source == "boxed" and r.reasoning_boxes == 1


def test_never_falls_back_to_reasoning() -> None:
    assert extract_answer("<think>\\boxed{1}</think>no box here").answer is None
    assert extract_answer("<think>\\boxed{1} unclosed").answer is None
    assert extract_answer("\\boxed{1} closing tag only </think> nothing after").answer is None
    assert extract_answer("<THINK>\\boxed{1}</THINK>\\boxed{2}").answer == "2"


def test_reasoning_split() -> None:
    visible, reasoning = split_reasoning("a<think>b<think>c</think>d</think>e")
    assert visible.split() == ["a", "e"] and "b" in reasoning and "d" in reasoning


def test_balanced_and_escaped_braces() -> None:
    r = extract_answer("\\boxed{\\frac{1}{\\sqrt{2}}} and \\boxed{\\{1, \\{2\\}\\}}")
    assert r.answer == "\\{1, \\{2\\}\\}" and r.others == ("\\frac{1}{\\sqrt{2}}",)
    assert extract_answer("\\boxed{3").answer is None
    assert extract_answer("\\boxed{\\boxed{4}}").answer == "4"
    assert extract_answer("$\\boxed 12$").answer == "12"


def test_identical_boxes_are_not_others() -> None:
    r = extract_answer("\\boxed{3} \\boxed{ 3 } \\boxed{3}")
    assert r.answer == "3" and r.others == ()


def test_too_many_answers() -> None:
    r = extract_answer(" ".join(f"\\boxed{{{i}}}" for i in range(MAX_OTHERS + 3)))
    assert r.too_many_answers and len(r.others) == MAX_OTHERS


def test_answer_line_only_when_enabled() -> None:
    text = "Some work.\n**Answer:** $42$.\n"
    assert extract_answer(text).answer is None
    r = extract_answer(text, accept_answer_line=True)
    assert r.answer == "42" and r.source == "answer_line"
    assert extract_answer("\\boxed{7}\nAnswer: 8", accept_answer_line=True).answer == "7"


def test_linear_on_huge_inputs() -> None:
    r = extract_answer("\\boxed{" * 100_000)
    assert r.answer is None
    assert extract_answer("x" * 2_000_000 + "\\boxed{1}").answer == "1"


def test_precheck() -> None:
    assert precheck("\\frac{1}{2}") is None
    assert precheck("7" * 5000) is not None
    assert precheck("(" * 60 + "1" + ")" * 60) is not None
    assert precheck("1+" * 6000) is not None


def test_nested_boxes_cost_one_brace_match(monkeypatch: pytest.MonkeyPatch) -> None:
    """5,000 nested boxes (40 KB) once took 10 s of CPU: each peeled box re-matched every
    brace. Now the braces of the text and of the answer are matched once each."""
    from gymforge.verify.math import extract as ex

    calls: list[int] = []
    real = ex._brace_pairs

    def counting(text: str) -> dict[int, int]:
        calls.append(len(text))
        return real(text)

    monkeypatch.setattr(ex, "_brace_pairs", counting)
    n = 5_000
    r = extract_answer("\\boxed{" * n + "3" + "}" * n)
    assert r.answer == "3"
    assert len(calls) <= 2, calls


def test_unbox_peels_only_a_box_spanning_the_whole_answer() -> None:
    assert extract_answer("\\boxed{ \\boxed{ \\fbox{7} } }").answer == "7"
    assert extract_answer("\\boxed{\\boxed{3} + \\boxed{4}}").answer == "\\boxed{3} + \\boxed{4}"
    assert extract_answer("\\boxed{\\boxed{3} + {4}}").answer == "\\boxed{3} + {4}"
    assert extract_answer("\\boxed{\\boxed 5}").answer == "\\boxed 5"


_PIECES = st.sampled_from(
    ["<think>", "</think>", "<THINKING >", "</thinking>", "<", ">", "think", "\\boxed{1}",
     "\\boxed{2}", "\\fbox 3", "{", "}", " ", "\n", "a", "é"]
)  # fmt: skip


@given(st.lists(_PIECES | st.text(max_size=3), max_size=12).map("".join))
def test_split_and_extraction_are_as_without_their_shortcuts(text: str) -> None:
    """A text without ``<`` is all visible, as the walk over its tags finds; a response
    without an answer or a reasoning box gets the one shared no-answer result, equal to a
    fresh one."""
    assert split_reasoning(text) == walk_tags(text)
    for line in (False, True):
        got = extract_answer(text, accept_answer_line=line)
        if got.answer is None:
            assert got == ExtractionResult(None, reasoning_boxes=got.reasoning_boxes)


def _boxed_by_the_whole_map(text: str) -> list[str]:
    """``boxed_contents`` as it was: every brace of the text matched first."""
    from gymforge.verify.math import extract as ex

    if "\\boxed" not in text and "\\fbox" not in text:
        return []
    match = ex._brace_pairs(text)
    out: list[str] = []
    end = -1
    for m in ex._BOX.finditer(text):
        if m.start() < end:
            continue
        j = ex._skip_blanks(text, m.end(), len(text))
        if j < len(text) and text[j] == "{":
            close = match.get(j)
            if close is None:
                continue
            out.append(text[j + 1 : close].strip())
            end = close
        elif j > m.end():
            bare = ex._BARE_TOKEN.match(text, j)
            if bare:
                out.append(bare.group(0).strip())
                end = bare.end()
    return out


_BRACE_PIECES = st.sampled_from(
    ["\\boxed", "\\fbox", "\\boxed{", "{", "}", "\\{", "\\}", "\\\\", "\\", " ", "\t", "x", "1",
     "\\boxedx", "$", "\n", "é"]
)  # fmt: skip


@given(st.lists(_BRACE_PIECES | st.text("{}\\ bx", max_size=3), max_size=24).map("".join))
def test_boxes_scanned_for_are_the_boxes_of_the_whole_map(text: str) -> None:
    """Each box's closing brace found by a scan from it is the one the match of every brace
    of the text gives, unbalanced, escaped, nested and bare boxes included; so is every
    brace's match found by a scan (``_closing`` against ``_pairs``)."""
    from gymforge.verify.math import extract as ex

    assert ex.boxed_contents(text) == _boxed_by_the_whole_map(text)
    plain = ex._unescaped(text)
    pairs = ex._pairs(plain)
    for j, c in enumerate(plain):
        if c == "{":
            assert ex._closing(plain, j) == pairs.get(j)


def test_many_unbalanced_boxes_cost_one_match_of_every_brace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A scan that reaches the end unmatched is made once: the boxes after it read the
    match of every brace, made once (a scan for each of 20,000 unbalanced boxes would be
    quadratic)."""
    from gymforge.verify.math import extract as ex

    scans: list[int] = []
    real = ex._closing

    def counting(plain: str, j: int) -> int | None:
        scans.append(j)
        return real(plain, j)

    monkeypatch.setattr(ex, "_closing", counting)
    text = "\\boxed{" * 20_000 + "\\boxed{1}"
    assert ex.boxed_contents(text) == ["1"] == _boxed_by_the_whole_map(text)
    assert len(scans) == 1
