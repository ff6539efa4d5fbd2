"""Attack: answer reasoning-gym's sokoban with a random walk.

reasoning-gym's sokoban scorer plays the answer's characters on the board, skips every
character that is not a move and every move that bumps into a wall or an immovable box, and
pays when all boxes are on goals at the end. A random string of 200 ``L R U D`` solved 24 of
60 tasks of levels 1 to 3 (40%; 2,000 moves: 25 of 60), with no look at the board. Success
means a random walk is judged a solution; the adapter judges sokoban with gymforge's strict
checker (``gymforge/envs/reasoning_gym/sokoban.py``: legal moves only, solved exactly at the
last move), which the stored answers pass.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from rg_attack import judge, use_test_uids

pytest.importorskip("reasoning_gym")
ENV_ID = "reasoning-gym:sokoban"
TASKS = 8


def _tasks() -> list[Any]:
    from gymforge.registry.resolve import make_env

    family = make_env(ENV_ID).family  # type: ignore[attr-defined]
    return [family.task(1 + s % 3, s) for s in range(TASKS)]


# A corridor: the player, a box, a goal. R solves it; reasoning-gym's scorer would also pay
# any walk that bumps the walls on its way to the same end.
CORRIDOR = {"metadata": {"gamestr": "+ + + + +\n+ * @ X +\n+ + + + +"}}


def test_the_strict_checker_on_a_corridor() -> None:
    from gymforge.envs.reasoning_gym.sokoban import check

    assert check(CORRIDOR, "R").passed
    assert check(CORRIDOR, " R, ").passed
    assert check(CORRIDOR, "LR").reason == "illegal_move"  # a bump is no plan
    assert check(CORRIDOR, "UR").reason == "illegal_move"
    assert check(CORRIDOR, "RL").reason == "moves_after_solved"
    assert check(CORRIDOR, "Solution: R").reason == "not_moves"
    for written in ("R.", "[R]", '"R"', "`R`", "R;", "['R']", "R ->"):  # as the scorer skips
        assert check(CORRIDOR, written).passed, written
    assert check(CORRIDOR, "r").reason == "not_moves"
    r = random.Random(0)
    walks = ["".join(r.choice("LRUD") for _ in range(200)) for _ in range(50)]
    assert not any(check(CORRIDOR, w).passed for w in walks)


@pytest.mark.slow  # builds reasoning-gym's sokoban tasks: half a minute; the corridor above
def test_a_random_walk_is_not_a_solution(monkeypatch: Any) -> None:
    use_test_uids(monkeypatch)
    r = random.Random(0)
    paid = []
    for task in _tasks():
        walk = "".join(r.choice("LRUD") for _ in range(200))
        if judge(task, walk, ENV_ID)["passed"]:
            paid.append(task.task_id)
    assert not paid, f"a random walk of 200 moves solved {len(paid)} of {TASKS}: {paid}"


@pytest.mark.slow
def test_the_stored_answers_still_pass(monkeypatch: Any) -> None:
    use_test_uids(monkeypatch)
    for task in _tasks():
        verdict = judge(task, str(task.truth["answer"]), ENV_ID)
        assert verdict["passed"] is True, (task.task_id, verdict)


@pytest.mark.slow
def test_qa_red_team_tries_a_random_walk_and_reasoning_gyms_scorer_pays_it(
    monkeypatch: Any,
) -> None:
    import asyncio

    from gymforge.envs.reasoning_gym import env_class
    from gymforge.envs.reasoning_gym.env import DEFAULT_TOKENS
    from gymforge.envs.reasoning_gym.redteam import cases_for
    from gymforge.envs.reasoning_gym.scoring import answer_chars, score

    use_test_uids(monkeypatch)
    family = env_class(ENV_ID.split(":")[1]).family
    case = next(c for c in cases_for(family) if c.name == "random_walk")
    craft = case.make_policy().from_task  # type: ignore[attr-defined]
    outcomes = {True: 0, False: 0}
    for task in _tasks():
        reply = craft(task)
        assert reply is not None and len(reply) > 200, reply
        entry = family.entry(task.truth["level"], task.truth["item_seed"])
        for strict in (True, False):
            out = asyncio.run(
                score(
                    family, task.truth["level"], entry, reply, answer_chars(DEFAULT_TOKENS), strict
                )
            )
            outcomes[strict] += out.passed
    assert outcomes[True] == 0 and outcomes[False] > 0, outcomes
