"""The shared answer extraction of the puzzles environment."""

from __future__ import annotations

import time

import pytest

from gymforge.envs.puzzles.answer import MAX_ANSWER_CHARS, extract_answer, visible_text


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Answer: 1 + 2", "1 + 2"),
        ("some work\n\nAnswer: 1 + 2\n", "1 + 2"),
        ("answer:1+2", "1+2"),
        ("**Answer:** 1 + 2", "1 + 2"),
        ("**Answer: 1 + 2**", "1 + 2"),
        ("Final answer: 1 + 2", "1 + 2"),
        ("Answer: 1 + 2\nAnswer:  1  +  2", "1  +  2"),  # repeating the same answer is fine
        ("<think>Answer: 7 * 7</think>\nAnswer: 1 + 2", "1 + 2"),
        ("<THINK>x</THINK>Answer: 1 + 2", "1 + 2"),
        ("reasoning opened by the template</think>\nAnswer: 1 + 2", "1 + 2"),
        ("Answer: 1 + 2\n<think>second thoughts, Answer: 5", "1 + 2"),
    ],
)
def test_extracts_the_last_answer_outside_reasoning(reply: str, answer: str) -> None:
    got, problem = extract_answer(reply)
    assert problem is None
    assert got == answer


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("", "no_answer"),
        ("done", "no_answer"),
        ("The answer is 1 + 2", "no_answer"),
        ("It is not Answer: 1 + 2.", "no_answer"),
        ("Answer:", "no_answer"),
        ("<think>Answer: 1 + 2</think>", "no_answer"),
        ("<think>\nAnswer: 1 + 2", "no_answer"),  # unclosed reasoning never counts
        ("Answer: 1 + 2\nAnswer: 3 + 4", "hedge"),
        ("Answer: 1 + 2\nor maybe\nAnswer: 2 + 1", "hedge"),
        ("0\nAnswer: 1 + 2\nnone of these", "text_after_answer"),
        ("Answer: 1 + 2\nActually I am not sure.", "text_after_answer"),
        ("A n s w e r : 1 + 2", "no_answer"),
        ('{"answer": "0", "alt": "Answer: 1 + 2"}', "no_answer"),
        ("Answer: " + "1" * (MAX_ANSWER_CHARS + 1), "too_long"),
    ],
)
def test_rejects_missing_hedged_and_trailing_answers(reply: str, reason: str) -> None:
    got, problem = extract_answer(reply)
    assert got is None
    assert problem is not None and not problem.passed
    assert problem.reason == reason


def test_boxes_inside_think_are_ignored() -> None:
    reply = "<think>so it is Answer: 3 * 4 and \\boxed{12}</think>\nAnswer: 5 + 7"
    assert "3 * 4" not in visible_text(reply)
    assert extract_answer(reply)[0] == "5 + 7"


HUGE = [
    "Answer: " + " " * 1_000_000 + "x",
    " " * 1_000_000 + "\n",
    "<think>" * 200_000,
    "Answer: 1\n" * 100_000,
    "x" * 2_000_000,
]


@pytest.mark.parametrize("reply", HUGE)
def test_huge_replies_are_handled(reply: str) -> None:
    extract_answer(reply)  # returns: no crash, no RecursionError


@pytest.mark.perf
@pytest.mark.parametrize("reply", HUGE)
def test_huge_replies_are_handled_quickly(reply: str) -> None:
    t0 = time.perf_counter()
    extract_answer(reply)
    assert time.perf_counter() - t0 < 1.0
