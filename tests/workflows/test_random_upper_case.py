"""The random baseline changes upper-case answers too (issue 36).

It used to skip every upper-case word (to keep SQL keywords), so an all-capitals answer
(reasoning-gym's caesar_cipher, string_insertion, quantum_lock) only got a word appended,
which those datasets' lenient scorers still pay: ``scripted_baselines`` then failed through
the baseline's fault, not the environment's.
"""

from __future__ import annotations

import asyncio
import random
import re

import pytest

from gymforge.qa.checks.common import jobs, play_many, success_rate
from gymforge.qa.target import QATarget
from gymforge.rollout import scripted


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("THOSE FROM MARS OF ANY INDEED", r"[A-Z]+( [A-Z]+){5}"),
        ("EACADDDDB", r"[A-Z]{9}"),
        ("B → B → B → B", r"[A-Z]( → [A-Z]){3}"),
        ("Answer: YES", r"Answer: [A-Z]{3}"),
        ("ok ok", r"[a-z]{2} [a-z]{2}"),
    ],
)
def test_upper_case_answers_change_in_content_and_keep_their_form(text: str, form: str) -> None:
    for seed in range(50):
        out = scripted.scramble(text, random.Random(seed))
        assert out.casefold() != text.casefold() and re.fullmatch(form, out), out


def test_sql_keywords_stay_while_other_words_can_change() -> None:
    text = "```sql\nSELECT name FROM people WHERE city = town\n```"
    for seed in range(30):
        out = scripted.scramble(text, random.Random(seed))
        assert out != text and re.fullmatch(
            r"```sql\nSELECT \w+ FROM \w+ WHERE \w+ = \w+\n```", out
        )


@pytest.mark.parametrize("dataset", ["caesar_cipher", "string_insertion", "quantum_lock"])
def test_random_baseline_fails_upper_case_reasoning_gym_datasets(dataset: str) -> None:
    pytest.importorskip("reasoning_gym")
    target = QATarget.load(f"reasoning-gym:{dataset}")
    episodes = asyncio.run(play_many(target, "random", jobs(target, 20, 2, "train")))
    assert success_rate(episodes) <= 0.2  # the QA threshold for a bad baseline


def test_tag_names_are_form_not_content() -> None:
    text = "<answer>A → B → C</answer>"
    for seed in range(50):
        out = scripted.scramble(text, random.Random(seed))
        assert out != text and re.fullmatch(r"<answer>[A-Z]( → [A-Z]){2}</answer>", out), out
