"""Puzzle family versions: old ids replay as recorded; version 2 reads what models write."""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import itertools
import random
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from gymforge.core import Reply, SyncEnvironment
from gymforge.core.errors import UnknownTaskError
from gymforge.core.seeding import canonical_json
from gymforge.envs.math.arith import FAMILY as ARITH
from gymforge.envs.puzzles import FAMILIES, PuzzlesEnv
from gymforge.envs.puzzles.coloring import FAMILY as COLORING
from gymforge.envs.puzzles.countdown import FAMILY as COUNTDOWN
from gymforge.envs.puzzles.kk_logic import _sat, count_solutions, holds, negate, term
from gymforge.envs.puzzles.knights_knaves import FAMILY as KK
from gymforge.envs.puzzles.shortest_path import FAMILY as PATH
from gymforge.envs.puzzles.sudoku import FAMILY as SUDOKU
from gymforge.registry.resolve import make_env
from gymforge.rollout.replay import replay_file

DATA = Path(__file__).parent / "data"

V1_DIGESTS = {
    "puzzles.countdown": "f99b330ca7edf529",
    "puzzles.sudoku": "bfedef65fb9e4535",
    "puzzles.knights_knaves": "56c0191dc9fb0845",
    "puzzles.shortest_path": "64d9befd65f46c4c",
    "puzzles.coloring": "2cc5c056071d64cc",
}
"""Measured on the version-1 code before version 2 existed: ids, prompts, truths, params and
the oracle's verdict of 25 tasks per level."""


def typed(family: Any, truth: dict[str, Any] | BaseModel) -> Any:
    """A truth dict written in a test, as the family's truth model."""
    return truth if isinstance(truth, BaseModel) else family.truth_model().model_validate(truth)


def reason(family: Any, truth: dict[str, Any], answer: str) -> str | None:
    outcome = family.check(typed(family, truth), answer)
    assert outcome.passed == (outcome.reason is None)
    return outcome.reason


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_version_1_ids_regenerate_and_judge_exactly_as_recorded(family: Any) -> None:
    assert family.version == 2
    v1 = family.at_version(1)
    h = hashlib.sha256()
    for d in sorted(v1.levels):
        for s in range(25):
            task = family.resolve(v1.task_id(d, s))  # through the current family
            outcome = v1.check(v1.truth_of(task), v1.oracle_answer(v1.truth_of(task)))
            row = [task.task_id, task.prompt, task.truth, task.params, outcome.passed]
            h.update(canonical_json([*row, outcome.reason, outcome.facts]).encode())
    assert h.hexdigest()[:16] == V1_DIGESTS[family.name]


@pytest.mark.parametrize("name", ["puzzles_v1_oracle.jsonl", "puzzles_v1_random.jsonl"])
def test_trajectories_recorded_before_version_2_replay_unchanged(name: str) -> None:
    """Recorded with the version-1 puzzle code (``gymforge run puzzles --policy oracle|random
    -n 12`` on the main line before any family had a version 2; re-recorded when the
    trajectory format gained ``tools_json``): every step still matches."""
    report = asyncio.run(replay_file(DATA / name, lambda env_id: make_env(env_id)))
    assert report.ok, report.divergence
    assert report.episodes == 12


def test_an_old_episode_is_judged_by_its_own_version() -> None:
    env = SyncEnvironment(PuzzlesEnv())
    task = COUNTDOWN.at_version(1).task(2, 5)
    env.reset(task.task_id, 0)
    result = env.step(Reply(text=f"Answer: -1 + 1 + {task.truth['solution']}"))
    verdict = result.info["verdict"]
    assert verdict["verifier"] == "puzzles.countdown@1"
    assert verdict["facts"]["reason"] == "parse_error"  # version 1 has no unary minus
    with pytest.raises(UnknownTaskError, match="no version 7"):
        COUNTDOWN.resolve("puzzles.countdown/v7/d1/s1")
    misfiled = dataclasses.replace(COUNTDOWN, older={1: ARITH})  # a version that cannot judge
    with pytest.raises(TypeError, match="not a PuzzleFamily"):
        misfiled.for_task(COUNTDOWN.at_version(1).task(2, 5))


# ---- countdown -----------------------------------------------------------------------------
def _countdown(negatives: bool) -> dict[str, Any]:
    return {"numbers": [2, 3, 5, 10], "target": 7, "negatives": negatives}


@pytest.mark.parametrize(
    "answer",
    ["-3 + 10", "10 - 3", "-(3 - 10)", "-(-(10 - 3))", "\u22123 + 10 = 7", "(-2) * -5 - 3"],
)
def test_countdown_unary_minus_where_negatives_are_allowed(answer: str) -> None:
    assert reason(COUNTDOWN, _countdown(True), answer) is None


@pytest.mark.parametrize(
    ("answer", "why"),
    [
        ("-3 + 10", "parse_error"),
        ("(3 - 10) + 2 * 5 + 2 - 2 * 0 + 2", "number_not_given"),
        ("(2 - 5) + 10", "negative_intermediate"),
        ("10 - 3", None),
    ],
)
def test_countdown_without_negatives(answer: str, why: str | None) -> None:
    assert reason(COUNTDOWN, _countdown(False), answer) == why


def test_countdown_prompt_states_its_rule_and_generated_tasks_follow_it() -> None:
    seen = set()
    for seed in range(120):
        task = COUNTDOWN.task(3, seed)
        rule = task.truth["negatives"]
        seen.add(rule)
        assert ("unary minus is allowed" in task.prompt) == rule
        assert ("no value along the way may be negative" in task.prompt) == (not rule)
        assert reason(COUNTDOWN, task.truth, task.truth["solution"]) is None
    assert seen == {False, True}


def test_countdown_use_all_rule() -> None:
    truth = {**_countdown(True), "use_all": True}
    assert reason(COUNTDOWN, truth, "10 - 3") == "numbers_unused"
    assert reason(COUNTDOWN, truth, "10 - 3 + 5 - 5 + 2 - 2") == "uses_number_twice"
    assert reason(COUNTDOWN, truth, "10 / 2 + 5 - 3") is None
    assert reason(COUNTDOWN, {**truth, "numbers": [3, 10]}, "-3 + 10") is None


def test_countdown_unary_minus_is_bounded() -> None:
    assert reason(COUNTDOWN, _countdown(True), "-" * 60 + "7") == "parse_error"


# ---- sudoku --------------------------------------------------------------------------------
SOLVED = "1234341221434321"
TRUTH4 = {"size": 4, "givens": "1..4.41.2..3.32.", "solution": SOLVED}


@pytest.mark.parametrize(
    "layout",
    [
        "1234/3412/2143/4321",
        "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1",
        "\n1 2 | 3 4\n3 4 | 1 2\n----+----\n2 1 | 4 3\n4 3 | 2 1\n",
        "[[1,2,3,4],[3,4,1,2],[2,1,4,3],[4,3,2,1]]",
        "1234341221434321",
        "1,2,3,4\n3,4,1,2\n2,1,4,3\n4,3,2,1.",
    ],
)
def test_sudoku_reads_the_common_layouts(layout: str) -> None:
    assert reason(SUDOKU, TRUTH4, layout) is None


def test_sudoku_layouts_keep_every_rejection() -> None:
    assert reason(SUDOKU, TRUTH4, "1 2 3 4\n3 4 1 2\n2 1 . 3\n4 3 2 1") == "incomplete"
    assert reason(SUDOKU, TRUTH4, "1 2 3 4\n3 4 1 2\n2 1 0 3\n4 3 2 1") == "incomplete"
    assert reason(SUDOKU, TRUTH4, "1 2 3 4\n3 4 1 2\n2 1 4 3") == "parse_error"
    assert reason(SUDOKU, TRUTH4, "1 2 3 4\n3 4 1 2\n2 1 4 3\n4 3 2 1\nI think") == "parse_error"
    assert reason(SUDOKU, TRUTH4, "2143/3412/1234/4321") == "givens_changed"


def test_sudoku_grid_may_follow_the_answer_line() -> None:
    env = SyncEnvironment(PuzzlesEnv())
    task = SUDOKU.task(2, 3)
    s = task.truth["solution"]
    grid = "\n".join(" ".join(s[i : i + 9]) for i in range(0, 81, 9))
    env.reset(task.task_id, 0)
    assert env.step(Reply(text=f"Here it is.\nAnswer:\n{grid}\n")).info["success"]
    env.reset(task.task_id, 0)
    two = f"Answer:\n{grid}\nAnswer: 123456789/" + "/".join(["123456789"] * 8)
    assert env.step(Reply(text=two)).info["verdict"]["facts"]["reason"] == "hedge"


# ---- knights and knaves --------------------------------------------------------------------
def _random_term(r: random.Random, n: int, depth: int) -> list[Any]:
    if depth == 0 or r.random() < 0.3:
        kind = r.choice(("is", "same", "diff", "atleast", "atmost"))
        if kind == "is":
            return ["is", r.randrange(n), r.choice(("knight", "knave"))]
        if kind in ("same", "diff"):
            return [kind, r.randrange(n), r.randrange(n)]
        return [kind, r.randint(0, n)]
    op = r.choice(("and", "or", "not", "implies", "iff"))
    width = 1 if op == "not" else 2 if op in ("implies", "iff") else r.randint(2, 4)
    return [op, *(_random_term(r, n, depth - 1) for _ in range(width))]


def test_kk_new_connectives_agree_between_bitsets_truth_and_negation() -> None:
    r = random.Random(5)
    for _ in range(300):
        n = r.randint(2, 5)
        s = _random_term(r, n, 3)
        sat = _sat(s, n)
        nsat = _sat(negate(s), n)
        for a in range(1 << n):
            knights = [bool(a >> i & 1) for i in range(n)]
            assert bool(sat >> a & 1) == holds(s, knights)
            assert bool(nsat >> a & 1) == (not holds(s, knights))


def test_kk_logic_levels_use_the_new_connectives_and_stay_solvable() -> None:
    used: set[str] = set()

    def walk(s: list[Any]) -> None:
        used.add(s[0])
        if s[0] in ("and", "or", "not", "implies", "iff"):
            for x in s[1:]:
                walk(x)

    logic = [KK.task(3, s) for s in range(80)]
    logic = [t for t in logic if t.params["kinds"] == "logic"]
    assert len(logic) >= 20
    for task in logic:
        for s in task.truth["statements"]:
            walk(s)
        assert count_solutions(task.truth["statements"]) == task.truth["solutions"] >= 1
        assert reason(KK, task.truth, KK.oracle_answer(KK.truth_of(task))) is None
    assert {"not", "implies", "iff", "and", "or"} <= used
    assert any("if and only if" in t.prompt for t in logic)


def test_kk_reads_reasoning_gym_terms_and_answers() -> None:
    statements = [
        term(["not", ["lying", 1]], 2, [50]),
        term(["->", ["telling-truth", 0], ["telling-truth", 1]], 2, [50]),
    ]
    assert statements == [
        ["not", ["is", 1, "knave"]],
        ["implies", ["is", 0, "knight"], ["is", 1, "knight"]],
    ]
    truth = {
        "names": ["Amelia", "Elizabeth"],
        "statements": statements,
        "labels": ["hero", "villain"],
    }
    assert reason(KK, truth, "Amelia is a hero, and Elizabeth is a hero") is None
    assert reason(KK, truth, "Amelia=knight; Elizabeth=knight") is None
    assert reason(KK, truth, "Amelia is a villain and Elizabeth is a villain") == "violates_clue"
    assert reason(KK, truth, "Amelia is a wizard, and Elizabeth is a hero") == "parse_error"
    with pytest.raises(ValueError, match="islander 5"):
        term(["lying", 5], 2, [50])
    with pytest.raises(ValueError, match="larger than"):
        term(["not"] * 1 + [["not", ["not", ["lying", 0]]]], 2, [2])


# ---- graphs named by integers --------------------------------------------------------------
def test_graph_families_name_nodes_by_integers_too() -> None:
    for family in (COLORING, PATH):
        namings = set()
        for seed in range(40):
            task = family.task(1 + seed % 3, seed)
            namings.add(task.params["naming"])
            nodes = task.truth["nodes"]
            assert all(isinstance(v, int) for v in nodes) == (task.params["naming"] == "integers")
            assert reason(family, task.truth, family.oracle_answer(family.truth_of(task))) is None
        assert namings == {"letters", "integers"}


def test_coloring_with_integer_nodes_accepts_exactly_the_proper_colourings() -> None:
    truth = {"nodes": [1, 2, 3, 10], "edges": [[1, 2], [2, 3], [3, 10]], "colors": 2}
    for colors in itertools.product((1, 2), repeat=4):
        c = dict(zip(truth["nodes"], colors, strict=True))
        proper = all(c[u] != c[v] for u, v in truth["edges"])
        answer = ", ".join(f"{v}={c[v]}" for v in truth["nodes"])
        assert (reason(COLORING, truth, answer) is None) == proper
    assert reason(COLORING, truth, "1=1, 2=2, 3=1, 11=2") == "unknown_node"
    assert reason(COLORING, truth, "1=1, 2=2, 3=1") == "missing_node"
