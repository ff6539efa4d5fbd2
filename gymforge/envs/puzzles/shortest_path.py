"""Shortest path: a minimum-weight path between two nodes of a small weighted graph.

Generation: single-letter node names, a random spanning tree (so the graph is connected)
plus ``extra`` random edges, integer weights in ``[1, max_weight]``; the source is random
and the target is a node at least two hops away when one exists. Dijkstra gives the
shortest distance and one shortest path (the oracle).

The verifier accepts *any* shortest path: it must start at the source, end at the target,
follow existing edges only, and have total weight equal to the shortest distance (weights
are positive, so such a path is simple). Node separators ``->``, ``→``, ``-`` and ``,`` are
accepted.

Version 2 names nodes by letters or by integers (knob ``naming``); names match
case-insensitively. Dataset rows (``from_row``): ``nodes`` (strings or integers), ``edges``
(``[u, v, weight]``, positive integer weights; a pair of nodes joined twice only with one
weight), ``source``, ``target``.

Failure reasons: ``parse_error``, ``unknown_node``, ``wrong_start``, ``wrong_end``,
``not_a_path``, ``not_shortest``.
"""

from __future__ import annotations

import heapq
import random
import re
from collections.abc import Mapping, Sequence
from itertools import pairwise
from typing import Any

from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace
from gymforge.tasks.trusted import trusted
from gymforge.verify.puzzles.answer import Outcome, answer_instruction, fail, ok
from gymforge.verify.puzzles.base import PuzzleFamily, PuzzleTruth
from gymforge.verify.puzzles.rows import NAMING, Name, draw_names, edge_list, key_of, names

_SEP = re.compile(r"->|→|-|,")
"""Node separators; the blanks around them are stripped from each node (a pattern taking
them too retried a run of blanks from each of its positions: quadratic)."""


def weights(edges: list[list[Any]]) -> dict[tuple[Name, Name], int]:
    """``(u, v) -> weight`` in both directions."""
    out: dict[tuple[Name, Name], int] = {}
    for u, v, w in edges:
        out[u, v] = out[v, u] = w
    return out


def _one_weight_per_pair(edges: list[list[Any]]) -> None:
    """ValueError when two edges join the same two nodes with different weights: the
    shortest distance takes the lighter and ``check`` the one listed last, so a right path
    over the lighter edge would fail (a row is refused rather than judged wrongly)."""
    seen: dict[frozenset[str], int] = {}
    for u, v, w in edges:
        pair = frozenset((key_of(u), key_of(v)))
        if seen.setdefault(pair, w) != w:
            raise ValueError(
                f"field 'edges': {u} - {v} is listed with weights {seen[pair]} and {w}; "
                "keep one edge per pair of nodes"
            )


Adjacency = dict[Name, list[tuple[Name, int]]]
"""Each node's ``(neighbour, weight)`` pairs; nodes are all strings or all integers."""


def adjacency(nodes: Sequence[Name], edges: list[list[Any]]) -> Adjacency:
    adj: Adjacency = {n: [] for n in nodes}
    for u, v, w in edges:
        adj[u].append((v, w))
        adj[v].append((u, w))
    for n in nodes:
        adj[n].sort()
    return adj


def dijkstra(adj: Adjacency, source: Name) -> tuple[dict[Name, int], dict[Name, Name]]:
    """Distances from ``source`` and a predecessor map (ties broken by node name)."""
    dist: dict[Name, int] = {source: 0}
    prev: dict[Name, Name] = {}
    heap = [(0, source)]
    done: set[Name] = set()
    while heap:
        d, u = heapq.heappop(heap)
        if u in done:
            continue
        done.add(u)
        for v, w in adj[u]:
            if v not in dist or d + w < dist[v]:
                dist[v], prev[v] = d + w, u
                heapq.heappush(heap, (d + w, v))
    return dist, prev


def _hops(adj: Adjacency, source: Name) -> dict[Name, int]:
    hops: dict[Name, int] = {source: 0}
    frontier = [source]
    while frontier:
        nxt = []
        for u in frontier:
            for v, _ in adj[u]:
                if v not in hops:
                    hops[v] = hops[u] + 1
                    nxt.append(v)
        frontier = nxt
    return hops


def steps_of(answer: str) -> list[str]:
    """The node names of a path answer, upper-cased, in order (an empty one for a doubled
    or dangling separator)."""
    return [s.strip().upper() for s in _SEP.split(answer.strip().rstrip("."))]


class PathTruth(PuzzleTruth):
    """Nodes (all integers or all names), weighted edges ``[u, v, w]``, the two ends, the
    shortest distance and, for generated tasks, one shortest ``path``."""

    nodes: list[Name]
    edges: list[list[Name]]
    source: Name
    target: Name
    distance: int
    path: list[Name] | None = None


class ShortestPathFamily(PuzzleFamily[PathTruth]):
    heldout = {"largest_graphs": lambda p: p["nodes"] >= 18}

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, PathTruth]:
        n, top = params["nodes"], params["max_weight"]
        order: list[Any] = draw_names(r, n, params.get("naming", "letters"))
        pairs = {tuple(sorted((order[i], order[r.randrange(i)]))) for i in range(1, n)}
        for _ in range(params["extra"] * 4):
            if len(pairs) >= n - 1 + params["extra"]:
                break
            pairs.add(tuple(sorted(r.sample(order, 2))))
        edges = [[u, v, r.randint(1, top)] for u, v in sorted(pairs)]
        nodes = sorted(order)
        adj = adjacency(nodes, edges)
        source = r.choice(nodes)
        hops = _hops(adj, source)
        far = [v for v in nodes if hops[v] >= 2] or [v for v in nodes if v != source]
        target = r.choice(far)
        dist, prev = dijkstra(adj, source)
        path = [target]
        while path[-1] != source:
            path.append(prev[path[-1]])
        listed = "\n".join(f"{u} - {v}: {w}" for u, v, w in edges)
        example = "2 -> 5 -> 7" if isinstance(source, int) else "P -> Q -> R"
        prompt = (
            f"An undirected graph has nodes {', '.join(map(str, nodes))} and these weighted "
            f"edges:\n{listed}\n\nFind a path of minimum total weight from {source} to "
            f"{target}. Any shortest path is accepted; list every node along it, starting "
            f"with {source} and ending with {target}.\n\n"
            + answer_instruction("<node> -> <node> -> ... -> <node>", example)
        )
        truth = trusted(  # values this build made, of their types (test_trusted_truth)
            PathTruth,
            nodes=nodes,
            edges=edges,
            source=source,
            target=target,
            distance=dist[target],
            path=path[::-1],
        )
        return prompt, truth

    def answer_form(self, truth: PathTruth) -> tuple[str, str]:
        example = "2 -> 5 -> 7" if isinstance(truth.source, int) else "P -> Q -> R"
        return "<node> -> <node> -> ... -> <node>", example

    def from_row(self, row: Mapping[str, Any]) -> PathTruth:
        nodes = names(row, "nodes")
        edges = edge_list(row, "edges", nodes, True)
        _one_weight_per_pair(edges)
        known = {key_of(v): v for v in nodes}
        ends = []
        for key in ("source", "target"):
            if key not in row or key_of(row[key]) not in known:
                raise ValueError(f"field {key!r} must name one of the nodes")
            ends.append(known[key_of(row[key])])
        adj = adjacency(nodes, edges)
        dist, _ = dijkstra(adj, ends[0])
        if ends[1] not in dist or ends[0] == ends[1]:
            raise ValueError("no path from 'source' to a different 'target'")
        return PathTruth(
            nodes=nodes, edges=edges, source=ends[0], target=ends[1], distance=dist[ends[1]]
        )

    def check(self, truth: PathTruth, answer: str) -> Outcome:
        steps = steps_of(answer)
        if any(not s for s in steps):
            return fail("parse_error", error="empty node name")
        nodes = {key_of(v) for v in truth.nodes}
        unknown = next((s for s in steps if s not in nodes), None)
        if unknown is not None:
            return fail("unknown_node", node=unknown[:20])
        if steps[0] != key_of(truth.source):
            return fail("wrong_start", start=steps[0])
        if steps[-1] != key_of(truth.target) or len(steps) < 2:
            return fail("wrong_end", end=steps[-1])
        w = {(key_of(u), key_of(v)): d for (u, v), d in weights(truth.edges).items()}
        total = 0
        for u, v in pairwise(steps):
            if (u, v) not in w:
                return fail("not_a_path", missing_edge=f"{u}-{v}")
            total += w[u, v]
        if total != truth.distance:
            return fail("not_shortest", length=total, shortest=truth.distance)
        return ok(length=total, nodes=len(steps))

    def oracle_answer(self, truth: PathTruth) -> str:
        return " -> ".join(map(str, truth.path or []))


def _level(
    nodes: tuple[int, int], extra: tuple[int, int], top: tuple[int, ...], naming: bool = False
) -> ParamSpace:
    knobs: dict[str, IntKnob | ChoiceKnob] = {
        "nodes": IntKnob(*nodes),
        "extra": IntKnob(*extra),
        "max_weight": ChoiceKnob(top),
    }
    if naming:
        knobs["naming"] = ChoiceKnob(NAMING)
    return ParamSpace(knobs)


def _levels(naming: bool) -> dict[int, ParamSpace]:
    return {
        1: _level((5, 7), (2, 4), (9,), naming),
        2: _level((8, 12), (4, 8), (9, 20), naming),
        3: _level((13, 20), (8, 14), (20,), naming),
    }


V1 = ShortestPathFamily("puzzles.shortest_path", 1, _levels(False))
FAMILY = ShortestPathFamily("puzzles.shortest_path", 2, _levels(True), older={1: V1})
"""Version 2: nodes named by integers too (``naming``), dataset rows."""
