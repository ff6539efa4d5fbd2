"""Graph colouring: give every node one of ``k`` colours so that no edge joins equal colours.

Generation plants a colouring first: nodes get colours ``1..k`` (every colour used), and
each pair of differently coloured nodes becomes an edge with probability ``density``%.
The planted colouring is therefore always proper and is the oracle. The verifier accepts
*any* proper colouring that uses colours from ``1..k`` and names every node exactly once.

Failure reasons: ``parse_error``, ``unknown_node``, ``duplicate_node``, ``missing_node``,
``bad_color``, ``conflict``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from itertools import combinations
from typing import Any

from gymforge.envs.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.envs.puzzles.base import PuzzleFamily
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_ITEM = re.compile(r"\s*([A-Za-z])\s*[=:]\s*(\d{1,3})\s*")


class ColoringFamily(PuzzleFamily):
    heldout = {"largest_graphs": lambda p: p["nodes"] >= 15}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, dict[str, Any]]:
        n, k, density = params["nodes"], params["colors"], params["density"]
        order = r.sample(LETTERS, n)
        color = {v: (i + 1 if i < k else r.randint(1, k)) for i, v in enumerate(order)}
        nodes = sorted(order)
        edges = [
            [u, v]
            for u, v in combinations(nodes, 2)
            if color[u] != color[v] and r.random() * 100 < density
        ]
        listed = ", ".join(f"{u}-{v}" for u, v in edges)
        prompt = (
            f"Colour the nodes of an undirected graph with the colours 1 to {k} so that the "
            "two ends of every edge get different colours. Any such colouring is accepted "
            "(not every colour has to be used).\n"
            f"Nodes: {', '.join(nodes)}\nEdges: {listed}\n\n"
            + answer_instruction("<Node>=<colour>, ... for every node", "P=1, Q=2, R=1")
        )
        truth = {"nodes": nodes, "edges": edges, "colors": k}
        return prompt, {**truth, "solution": [color[v] for v in nodes]}

    def check(self, truth: Mapping[str, Any], answer: str) -> Outcome:
        nodes: list[str] = truth["nodes"]
        k: int = truth["colors"]
        index = {v: i for i, v in enumerate(nodes)}
        given: dict[str, int] = {}
        for item in answer.strip().rstrip(".").replace(";", ",").split(","):
            m = _ITEM.fullmatch(item)
            if m is None:
                return fail("parse_error", item=item.strip()[:40])
            node, c = m[1].upper(), int(m[2])
            if node not in index:
                return fail("unknown_node", node=node)
            if node in given:
                return fail("duplicate_node", node=node)
            if not 1 <= c <= k:
                return fail("bad_color", node=node, color=c, colors=k)
            given[node] = c
        missing = [v for v in nodes if v not in given]
        if missing:
            return fail("missing_node", node=missing[0])
        for u, v in truth["edges"]:
            if given[u] == given[v]:
                return fail("conflict", edge=f"{u}-{v}", color=given[u])
        return ok(colors_used=len(set(given.values())))

    def oracle_answer(self, truth: Mapping[str, Any]) -> str:
        pairs = zip(truth["nodes"], truth["solution"], strict=True)
        return ", ".join(f"{v}={c}" for v, c in pairs)


def _level(nodes: tuple[int, int], colors: int, density: tuple[int, ...]) -> ParamSpace:
    return ParamSpace(
        {"nodes": IntKnob(*nodes), "colors": ChoiceKnob((colors,)), "density": ChoiceKnob(density)}
    )


FAMILY = ColoringFamily(
    "puzzles.coloring",
    1,
    {
        1: _level((5, 7), 3, (40, 50)),
        2: _level((8, 11), 3, (55, 65)),
        3: _level((12, 16), 4, (60, 75)),
    },
)
