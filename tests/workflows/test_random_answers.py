"""The random policy answers single-turn environments in their own form, and still fails."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from wf_helpers import cli, episodes

from gymforge.rollout import scripted


@pytest.mark.parametrize(
    ("text", "form"),
    [
        ("The answer is \\boxed{84}.", r"The answer is \\boxed\{\d\d\}\."),
        ("```sql\nSELECT a FROM t LIMIT 3\n```", r"```sql\nSELECT a FROM t LIMIT \d\n```"),
        ("Answer: Erin=knave, Wendy=knight", r"Answer: \w+=\w+, \w+=\w+"),
        ('{"n": 12, "tag": "x"}', r'\{"n": \d\d, "tag": "x"\}'),
        ("7", r"\d"),
    ],
)
def test_scramble_keeps_the_form_and_changes_the_content(text: str, form: str) -> None:
    for seed in range(50):
        out = scripted.scramble(text, random.Random(seed))
        assert out != text and re.fullmatch(form, out), out
    assert scripted.scramble(text, random.Random(3)) == scripted.scramble(text, random.Random(3))


def replies(run_dir: Path) -> list[str]:
    texts = []
    for line in (run_dir / "trajectories.jsonl").read_text().splitlines():
        rec = json.loads(line)
        action = rec.get("action") if rec.get("record") == "step" else None
        if action and action.get("kind") == "reply":
            texts.append(action["text"])
    return texts


@pytest.mark.parametrize(
    ("env", "form"),
    [
        ("digits", r"\d+"),
        ("math", r"The answer is \\boxed\{.+\}\."),
        ("extract", r"```json\n\{.*\}\n```"),
        ("sql", r"```sql\nSELECT .+\n```"),
        ("puzzles", r"Answer: .+"),
    ],
)
def test_random_answers_single_turn_envs_in_their_form_and_fails(
    tmp_path: Path, env: str, form: str
) -> None:
    out = tmp_path / env
    res = cli("run", env, "-p", "random", "-n", "20", "--seed", "4", "--out", out)
    assert res.code == 0, res.stderr
    texts = replies(out)
    shaped = [t for t in texts if re.fullmatch(form, t, re.DOTALL)]
    assert len(shaped) >= len(texts) // 2, texts  # mostly answers, not junk
    assert set(texts) - {"done", "I cannot help.", ""}  # not only junk
    success = sum(e["success"] for e in episodes(out)) / len(episodes(out))
    assert success <= 0.2
