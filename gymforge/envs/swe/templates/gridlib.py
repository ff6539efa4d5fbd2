"""The ``gridlib`` project template (held out whole): grid geometry for a tile game."""

from __future__ import annotations

from gymforge.envs.swe.projects import (
    Feature,
    Fn,
    Mutation,
    Project,
    cell,
    points_args,
)

MANHATTAN = '''def manhattan(a, b):
    """The grid distance between cells a and b ([x, y] each)."""
    return abs(a[0] - b[0]) + abs(a[1] - b[1])
'''
IN_BOUNDS = '''def in_bounds(cell, width, height):
    """Whether cell [x, y] lies on a width x height grid."""
    x, y = cell
    return 0 <= x < width and 0 <= y < height
'''
NEIGHBORS = '''def neighbors(cell, width, height, diagonal=False):
    """The on-grid neighbours of cell, sorted; diagonal ones too when asked."""
    x, y = cell
    steps = [(1, 0), (-1, 0), (0, 1), (0, -1)]
    if diagonal:
        steps += [(1, 1), (1, -1), (-1, 1), (-1, -1)]
    out = [[x + dx, y + dy] for dx, dy in steps]
    return sorted(c for c in out if in_bounds(c, width, height))
'''
BOUNDING_BOX = '''def bounding_box(points):
    """[min x, min y, max x, max y] of the points; None when there are none."""
    if not points:
        return None
    xs = [p[0] for p in points]
    ys = [p[1] for p in points]
    return [min(xs), min(ys), max(xs), max(ys)]
'''
PATH_LENGTH = '''def path_length(points):
    """The total grid distance along the points, in order."""
    return sum(manhattan(points[i], points[i + 1]) for i in range(len(points) - 1))
'''
REACHABLE = '''def reachable(start, walls, width, height):
    """How many cells a walk from start reaches without crossing walls."""
    blocked = {tuple(w) for w in walls}
    if not in_bounds(start, width, height) or tuple(start) in blocked:
        return 0
    seen = {tuple(start)}
    todo = [start]
    while todo:
        for n in neighbors(todo.pop(), width, height):
            if tuple(n) not in seen and tuple(n) not in blocked:
                seen.add(tuple(n))
                todo.append(n)
    return len(seen)
'''

GRIDLIB = Project(
    "gridlib",
    "grid geometry for a tile-based game",
    {"geometry": "Cells, distances and bounds.", "paths": "Walks over the grid."},
    (
        Fn(
            "geometry",
            "manhattan",
            MANHATTAN,
            lambda r: [cell(r), cell(r)],
            "measures a distance",
            (Mutation("wrong_operator", "abs(a[1] - b[1])", "abs(a[1] + b[1])"),),
            aliases=("taxicab",),
        ),
        Fn(
            "geometry",
            "in_bounds",
            IN_BOUNDS,
            lambda r: [cell(r), r.randint(2, 6), r.randint(2, 6)],
            "checks bounds",
            (
                Mutation("off_by_one", "x < width", "x <= width"),
                Mutation("swapped_arguments", "y < height", "y < width"),
            ),
            aliases=("on_grid",),
        ),
        Fn(
            "geometry",
            "neighbors",
            NEIGHBORS,
            lambda r: [cell(r, 4, 4), 4, 4] + ([True] if r.random() < 0.4 else []),
            "lists neighbours",
            (Mutation("wrong_default", "diagonal=False", "diagonal=True"),),
            uses=("geometry.in_bounds",),
        ),
        Fn(
            "geometry",
            "bounding_box",
            BOUNDING_BOX,
            points_args,
            "boxes points",
            (Mutation("missing_edge_case", "    if not points:\n        return None\n", ""),),
        ),
        Fn(
            "paths",
            "path_length",
            PATH_LENGTH,
            points_args,
            "measures a path",
            (Mutation("off_by_one", "range(len(points) - 1)", "range(len(points) - 2)"),),
            uses=("geometry.manhattan",),
        ),
        Fn(
            "paths",
            "reachable",
            REACHABLE,
            lambda r: [cell(r, 4, 4), [cell(r, 4, 4) for _ in range(r.randint(0, 6))], 4, 4],
            "counts reachable cells",
            uses=("geometry.in_bounds", "geometry.neighbors"),
        ),
    ),
    (
        Feature(
            "geometry",
            "chebyshev",
            "def chebyshev(a, b):\n"
            '    """The king-move distance between cells a and b."""\n'
            "    return max(abs(a[0] - b[0]), abs(a[1] - b[1]))\n",
            lambda r: [cell(r), cell(r)],
            "Please add `chebyshev(a, b)` to `gridlib/geometry.py`: the number of king moves "
            "between cells `a` and `b` (`[x, y]` each), i.e. the larger of the two "
            "coordinate differences in absolute value.",
        ),
    ),
)
