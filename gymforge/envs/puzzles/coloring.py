"""Graph colouring: give every node one of ``k`` colours so that no edge joins equal colours.

Generation plants a colouring first: nodes get colours ``1..k`` (every colour used), and
each pair of differently coloured nodes becomes an edge with probability ``density``%.
The planted colouring is therefore always proper and is the oracle. The verifier accepts
*any* proper colouring that uses colours from ``1..k`` and names every node exactly once.

Version 2 names nodes by letters or by integers (knob ``naming``) and reads answers naming
nodes either way (``3=1, 7=2``). Dataset rows (``from_row``): ``nodes`` (strings or
integers), ``edges`` (``[u, v]`` pairs), ``colors`` (k).

Failure reasons: ``parse_error``, ``unknown_node``, ``duplicate_node``, ``missing_node``,
``bad_color``, ``conflict``.
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from itertools import combinations
from typing import Any

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.tasks.trusted import trusted
from gymforge.verify.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.rows import NAMING, Name, draw_names, edge_list, field, key_of, names

_ITEM = re.compile(r"\s*([A-Za-z])\s*[=:]\s*(\d{1,3})\s*")
_ITEM_V2 = re.compile(r"\s*([A-Za-z]\w{0,30}|\d{1,6})\s*[=:]\s*(\d{1,3})\s*")


class ColoringTruth(PuzzleTruth):
    """Nodes (all integers or all names), edges ``[u, v]``, the number of colours and, for
    generated tasks, one valid colouring (per node, in ``nodes`` order)."""

    nodes: list[Name]
    edges: list[list[Name]]
    colors: int
    solution: list[int] | None = None


def _form(nodes: list[Name]) -> tuple[str, str]:
    example = "2=1, 5=2, 7=1" if isinstance(nodes[0], int) else "P=1, Q=2, R=1"
    return "<Node>=<colour>, ... for every node", example


class ColoringFamily(PuzzleFamily[ColoringTruth]):
    heldout = {"largest_graphs": lambda p: p["nodes"] >= 15}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, ColoringTruth]:
        n, k, density = params["nodes"], params["colors"], params["density"]
        order = draw_names(r, n, params.get("naming", "letters"))
        color = {v: (i + 1 if i < k else r.randint(1, k)) for i, v in enumerate(order)}
        nodes = sorted(order)  # one kind of name per task
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
            f"Nodes: {', '.join(map(str, nodes))}\nEdges: {listed}\n\n"
            + answer_instruction(*_form(nodes))
        )
        truth = trusted(  # values this build made, of their types (test_trusted_truth)
            ColoringTruth, nodes=nodes, edges=edges, colors=k, solution=[color[v] for v in nodes]
        )
        return prompt, truth

    def answer_form(self, truth: ColoringTruth) -> tuple[str, str]:
        return _form(truth.nodes)

    def from_row(self, row: Mapping[str, Any]) -> ColoringTruth:
        nodes = names(row, "nodes")
        k = field(row, "colors", int)
        if k < 1:
            raise ValueError("field 'colors' must be at least 1")
        edges = edge_list(row, "edges", nodes, False)
        return ColoringTruth(nodes=nodes, edges=edges, colors=k)

    def check(self, truth: ColoringTruth, answer: str) -> Outcome:
        nodes = [key_of(v) for v in truth.nodes]
        k = truth.colors
        index = {v: i for i, v in enumerate(nodes)}
        pattern = _ITEM if self.version < 2 else _ITEM_V2
        given: dict[str, int] = {}
        for item in answer.strip().rstrip(".").replace(";", ",").split(","):
            m = pattern.fullmatch(item)
            if m is None:
                return fail("parse_error", item=item.strip()[:40])
            node, c = key_of(m[1]), int(m[2])
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
        for u, v in truth.edges:
            if given[key_of(u)] == given[key_of(v)]:
                return fail("conflict", edge=f"{u}-{v}", color=given[key_of(u)])
        return ok(colors_used=len(set(given.values())))

    def oracle_answer(self, truth: ColoringTruth) -> str:
        pairs = zip(truth.nodes, truth.solution or [], strict=True)
        return ", ".join(f"{v}={c}" for v, c in pairs)


def _level(
    nodes: tuple[int, int], colors: int, density: tuple[int, ...], naming: bool = False
) -> ParamSpace:
    knobs: dict[str, IntKnob | ChoiceKnob] = {
        "nodes": IntKnob(*nodes),
        "colors": ChoiceKnob((colors,)),
        "density": ChoiceKnob(density),
    }
    if naming:
        knobs["naming"] = ChoiceKnob(NAMING)
    return ParamSpace(knobs)


def _levels(naming: bool) -> dict[int, ParamSpace]:
    return {
        1: _level((5, 7), 3, (40, 50), naming),
        2: _level((8, 11), 3, (55, 65), naming),
        3: _level((12, 16), 4, (60, 75), naming),
    }


V1 = ColoringFamily("puzzles.coloring", 1, _levels(False))
FAMILY = ColoringFamily("puzzles.coloring", 2, _levels(True), older={1: V1})
"""Version 2: nodes named by integers too (``naming``), dataset rows."""
