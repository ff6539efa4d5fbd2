"""gymforge's strict verifier of reasoning-gym's sokoban: the moves must be a solution.

reasoning-gym's scorer plays the answer's characters on its board, skips every character
that is not ``L R U D`` and every move into a wall or an immovable box, and pays when no box
is off a goal at the end. So a long random walk pays: 200 random moves solved 37% of the
tasks of levels 1 to 3 (11 of 30), 20,000 moves 43%, and the answer limit allows 262,144.
This checker plays the same board by the same rules (``+`` wall, ``-`` floor, ``X`` goal,
``@`` box, ``$`` box on a goal, ``*`` player, ``%`` player on a goal; a move pushes one box
into a free floor or goal cell) and asks what a solution is:

- the answer is moves only: ``L R U D``, optionally separated by anything but letters
  (spaces, commas, arrows, brackets, quotes);
- every move is legal (a move into a wall, or pushing a box into a wall or another box, is
  ``illegal_move``: a walk that bumps is not a plan);
- the boxes are all on goals after the last move and not before it (``moves_after_solved``);
- otherwise ``not_solved``.

Bounded: one pass over at most ``MAX_ANSWER_CHARS`` moves (``strict.strict_check``'s bound).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from gymforge.verify.puzzles.answer import Outcome, fail, ok

MOVES = {"L": (0, -1), "R": (0, 1), "U": (-1, 0), "D": (1, 0)}
_SEPARATORS = re.compile(r"[^A-Za-z]+")
"""Anything but letters: spaces, commas, arrows, brackets, quotes, a final period (as
reasoning-gym's scorer skips them); letters other than ``L R U D`` are refused."""
_ONLY_MOVES = re.compile(r"[LRUD]*")

BOXES = "@$"
GOALS = "X$%"
PLAYER = "*%"
WALL = "+"


def board_of(entry: Mapping[str, Any]) -> list[str]:
    """The board rows of a reasoning-gym sokoban entry (its ``gamestr``, spaces dropped,
    as reasoning-gym's scorer reads it)."""
    text = str(entry["metadata"]["gamestr"]).replace(" ", "").strip()
    return text.split("\n")


def check(entry: Mapping[str, Any], answer: str) -> Outcome:
    """The outcome of ``answer`` (the moves) on the sokoban board of ``entry``."""
    moves = _SEPARATORS.sub("", answer)
    if not moves or not _ONLY_MOVES.fullmatch(moves):
        return fail("not_moves", chars=len(answer))
    rows = board_of(entry)
    walls: set[tuple[int, int]] = set()
    goals: set[tuple[int, int]] = set()
    boxes: set[tuple[int, int]] = set()
    player: tuple[int, int] | None = None
    for r, row in enumerate(rows):
        for c, ch in enumerate(row):
            if ch == WALL:
                walls.add((r, c))
            if ch in GOALS:
                goals.add((r, c))
            if ch in BOXES:
                boxes.add((r, c))
            if ch in PLAYER:
                player = (r, c)
    if player is None or not boxes:
        return fail("bad_board")

    def blocked(cell: tuple[int, int]) -> bool:
        r, c = cell
        inside = 0 <= r < len(rows) and 0 <= c < len(rows[r])
        return not inside or cell in walls

    for i, move in enumerate(moves):
        if boxes <= goals:
            return fail("moves_after_solved", move=i, moves=len(moves))
        dr, dc = MOVES[move]
        target = (player[0] + dr, player[1] + dc)
        if blocked(target):
            return fail("illegal_move", move=i, why="wall")
        if target in boxes:
            beyond = (target[0] + dr, target[1] + dc)
            if blocked(beyond) or beyond in boxes:
                return fail("illegal_move", move=i, why="box cannot move")
            boxes = (boxes - {target}) | {beyond}
        player = target
    if not boxes <= goals:
        return fail("not_solved", off_goal=len(boxes - goals), moves=len(moves))
    return ok(moves=len(moves))
