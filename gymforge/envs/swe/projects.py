"""The project templates the ``swe`` generators build repositories from.

A ``Project`` is a package of modules of pure functions. Every function carries: its source
(the correct one), which other functions it calls (``uses``, by ``module.name``), a seeded
input generator, and the seeded bugs it can carry (``Mutation``: one exact snippet of its
source replaced by another, labelled with its bug class). Features are functions the
project does not have yet, with the issue text that specifies them. Everything here is data;
``repogen`` renders it into files and runs it (in the judge) for expected values.
"""

from __future__ import annotations

import random
import string
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

BUG_CLASSES = (
    "off_by_one",
    "wrong_operator",
    "swapped_arguments",
    "missing_edge_case",
    "wrong_default",
)
"""The seeded bug classes; ``wrong_default`` is held out as a whole family."""

Gen = Callable[[random.Random], list[Any]]


@dataclass(frozen=True)
class Mutation:
    bug: str
    old: str
    new: str


@dataclass(frozen=True)
class Fn:
    module: str
    name: str
    source: str
    gen: Gen
    doc: str
    mutations: tuple[Mutation, ...] = ()
    uses: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()  # names a refactor may rename it to

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"


@dataclass(frozen=True)
class Feature:
    """A function to add: ``source`` is its reference, ``spec`` the issue's description
    (``{sep}``-style fields filled from ``options``, one picked per task)."""

    module: str
    name: str
    source: str
    gen: Gen
    spec: str
    options: tuple[dict[str, str], ...] = ({},)
    uses: tuple[str, ...] = ()


@dataclass(frozen=True)
class Project:
    package: str
    summary: str
    modules: dict[str, str]  # module -> its docstring
    fns: tuple[Fn, ...]
    features: tuple[Feature, ...] = field(default=())

    def fn(self, key: str) -> Fn:
        return next(f for f in self.fns if f.key == key)


# ---- input generators ---------------------------------------------------------------------
WORDS = ("alpha", "beta", "gamma", "delta", "x", "io", "data", "Node", "UPPER", "mixed-Case")


def _text(r: random.Random, lo: int = 0, hi: int = 6) -> str:
    sep = r.choice([" ", "  ", " - ", ", ", "_"])
    return sep.join(r.choice(WORDS) for _ in range(r.randint(lo, hi)))


def _cents(r: random.Random) -> int:
    return r.choice([0, 1, 99, 100, 250, 999, 1000, 4999, 5000]) + r.randint(0, 3000)


def _lines(r: random.Random) -> list[list[int]]:
    return [[_cents(r), r.randint(1, 4), r.choice([0, 0, 10, 25, 50, 120])] for _ in range(3)]


def _cell(r: random.Random, w: int = 6, h: int = 5) -> list[int]:
    return [r.randint(-1, w), r.randint(-1, h)]


def _points(r: random.Random) -> list[list[int]]:
    return [[r.randint(-5, 9), r.randint(-5, 9)] for _ in range(r.randint(0, 5))]


def _points_args(r: random.Random) -> list[Any]:
    return [_points(r)]


# ---- textkit ----------------------------------------------------------------------------
TRUNCATE = '''def truncate(text, width, suffix="..."):
    """Shorten text to at most width characters, ending with suffix when it is cut."""
    if len(text) <= width:
        return text
    keep = max(0, width - len(suffix))
    return text[:keep] + suffix
'''
COUNT_WORDS = '''def count_words(text, min_len=1):
    """The number of whitespace-separated words with at least min_len characters."""
    return sum(1 for w in text.split() if len(w) >= min_len)
'''
CHUNK = '''def chunk(items, size):
    """items cut into consecutive lists of size elements (the last may be shorter)."""
    if size < 1:
        raise ValueError("size must be at least 1")
    return [items[i : i + size] for i in range(0, len(items), size)]
'''
SLUGIFY = '''def slugify(text, sep="-"):
    """text lower-cased, its runs of letters and digits joined with sep."""
    parts = []
    word = ""
    for ch in text.lower():
        if ch.isalnum():
            word += ch
        elif word:
            parts.append(word)
            word = ""
    if word:
        parts.append(word)
    return sep.join(parts)
'''
UNIQUE_SLUG = '''def unique_slug(text, taken):
    """slugify(text), with -2, -3, ... appended until it is not in taken."""
    base = slugify(text)
    slug = base
    n = 2
    while slug in taken:
        slug = base + "-" + str(n)
        n += 1
    return slug
'''
HEADLINE = '''def headline(title, width):
    """The title in title case, cut to width characters for a listing."""
    return truncate(title.strip().title(), width)
'''
PERMALINK = '''def permalink(title, taken):
    """The path of a post: /posts/ and a slug no other post has taken."""
    return "/posts/" + unique_slug(title, taken)
'''
TEASER = '''def teaser(text, words):
    """The first words of text, each chunk of three words on its own line."""
    kept = text.split()[:words]
    return "\\n".join(" ".join(c) for c in chunk(kept, 3))
'''


def _taken(r: random.Random) -> list[str]:
    return r.choice([[], ["alpha"], ["alpha", "alpha-2"], ["beta-gamma", "beta-gamma-2"]])


TEXTKIT = Project(
    "textkit",
    "small text utilities for a static blog generator",
    {
        "words": "Word-level helpers.",
        "slug": "URL slugs.",
        "layout": "Listing and post layout built on the helpers.",
    },
    (
        Fn(
            "words",
            "truncate",
            TRUNCATE,
            lambda r: [_text(r, 1, 5), r.randint(0, 24)],
            "shortens text to a width",
            (
                Mutation("off_by_one", "len(text) <= width", "len(text) < width"),
                Mutation("wrong_operator", "width - len(suffix)", "width + len(suffix)"),
                Mutation("missing_edge_case", "max(0, width - len(suffix))", "width - len(suffix)"),
                Mutation("wrong_default", 'suffix="..."', 'suffix=".."'),
            ),
            aliases=("shorten", "clip_text"),
        ),
        Fn(
            "words",
            "count_words",
            COUNT_WORDS,
            lambda r: [_text(r, 0, 7)] + ([r.randint(1, 5)] if r.random() < 0.5 else []),
            "counts words",
            (
                Mutation("off_by_one", "len(w) >= min_len", "len(w) > min_len"),
                Mutation("wrong_default", "min_len=1", "min_len=2"),
            ),
            aliases=("word_count",),
        ),
        Fn(
            "words",
            "chunk",
            CHUNK,
            lambda r: [list(range(r.randint(0, 9))), r.randint(1, 4)],
            "cuts a list into chunks",
            (
                Mutation(
                    "off_by_one", "range(0, len(items), size)", "range(0, len(items) - 1, size)"
                ),
                Mutation("swapped_arguments", "items[i : i + size]", "items[i : size + i - 1]"),
            ),
            aliases=("batched", "split_chunks"),
        ),
        Fn(
            "slug",
            "slugify",
            SLUGIFY,
            lambda r: [_text(r, 1, 5) + r.choice(["", "!", " 2024", "  "])],
            "makes a slug",
            (
                Mutation(
                    "missing_edge_case",
                    "    if word:\n        parts.append(word)\n    return",
                    "    return",
                ),
                Mutation("wrong_default", 'sep="-"', 'sep="_"'),
                Mutation("wrong_operator", "elif word:", "elif not word:"),
            ),
            aliases=("to_slug", "make_slug"),
        ),
        Fn(
            "slug",
            "unique_slug",
            UNIQUE_SLUG,
            lambda r: [
                r.choice(["Alpha", "alpha!", "Beta gamma", "beta-gamma", "Delta"]),
                _taken(r),
            ],
            "makes a slug nobody has",
            (
                Mutation("off_by_one", "n = 2", "n = 1"),
                Mutation("swapped_arguments", 'base + "-" + str(n)', 'str(n) + "-" + base'),
            ),
            uses=("slug.slugify",),
            aliases=("free_slug",),
        ),
        Fn(
            "layout",
            "headline",
            HEADLINE,
            lambda r: [_text(r, 1, 5), r.randint(0, 24)],
            "renders a headline",
            uses=("words.truncate",),
            aliases=("listing_title",),
        ),
        Fn(
            "layout",
            "permalink",
            PERMALINK,
            lambda r: [
                r.choice(["Alpha", "alpha!", "Beta gamma", "beta-gamma", "Delta x"]),
                _taken(r),
            ],
            "builds a post's path",
            uses=("slug.unique_slug",),
        ),
        Fn(
            "layout",
            "teaser",
            TEASER,
            lambda r: [_text(r, 0, 8), r.randint(0, 8)],
            "renders a teaser",
            uses=("words.chunk",),
        ),
    ),
    (
        Feature(
            "words",
            "initials",
            'def initials(text, sep="{sep}"):\n'
            '    """The upper-cased first letter of each word of text, joined with sep."""\n'
            "    return sep.join(w[0].upper() for w in text.split())\n",
            lambda r: [_text(r, 0, 5)],
            "Please add `initials(text, sep={sep!r})` to `textkit/words.py`: it returns the "
            "first character of each whitespace-separated word of `text`, upper-cased, joined "
            "with `sep` (default {sep!r}). An empty text gives an empty string.",
            ({"sep": ""}, {"sep": "."}, {"sep": "-"}),
        ),
        Feature(
            "slug",
            "deslugify",
            'def deslugify(slug, sep="{sep}"):\n'
            '    """A slug back to words: split on sep, drop empty parts, capitalise each."""\n'
            '    return " ".join(p.capitalize() for p in slug.split(sep) if p)\n',
            lambda r: [r.choice(["alpha-beta", "a--b", "", "gamma_delta", "x-2024-io", "-io-"])],
            "Please add `deslugify(slug, sep={sep!r})` to `textkit/slug.py`: split `slug` on "
            "`sep` (default {sep!r}), drop empty parts, capitalise each part "
            "(`str.capitalize`) and join them with single spaces.",
            ({"sep": "-"}, {"sep": "_"}),
        ),
    ),
)

# ---- invoicing ----------------------------------------------------------------------------
APPLY_DISCOUNT = '''def apply_discount(cents, percent):
    """A price in cents after a percent discount (capped at 100), rounded down."""
    if percent <= 0:
        return cents
    return cents - cents * min(percent, 100) // 100
'''
SPLIT_EVENLY = '''def split_evenly(total, parts):
    """total cents in parts shares differing by at most one cent, larger shares first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]
'''
CLAMP = '''def clamp(value, low, high):
    """value limited to the range from low to high."""
    return max(low, min(value, high))
'''
LINE_TOTAL = '''def line_total(unit_cents, qty, percent=0):
    """One cart line: qty units at unit_cents each, less a percent discount on the line."""
    return apply_discount(unit_cents * qty, percent)
'''
CART_TOTAL = '''def cart_total(lines, shipping=499, free_over=5000):
    """The lines' sum plus shipping; shipping is free when the sum reaches free_over."""
    subtotal = sum(line_total(u, q, p) for u, q, p in lines)
    if subtotal >= free_over:
        return subtotal
    return subtotal + shipping
'''
INVOICE = '''def invoice(lines, people):
    """Each person's share of the cart total, larger shares first."""
    return split_evenly(cart_total(lines), people)
'''
TIP = '''def tip(cents, percent):
    """A tip of percent of cents, kept between 0 and 10000 cents."""
    return clamp(cents * percent // 100, 0, 10000)
'''

INVOICING = Project(
    "invoicing",
    "cart and invoice arithmetic in integer cents",
    {
        "money": "Money arithmetic in integer cents.",
        "cart": "Cart lines and totals.",
        "billing": "Invoices built from carts.",
    },
    (
        Fn(
            "money",
            "apply_discount",
            APPLY_DISCOUNT,
            lambda r: [_cents(r), r.choice([-5, 0, 1, 10, 25, 50, 100, 150])],
            "applies a discount",
            (
                Mutation("wrong_operator", "cents - cents *", "cents + cents *"),
                Mutation("missing_edge_case", "min(percent, 100)", "percent"),
                Mutation("off_by_one", "percent <= 0", "percent <= 1"),
            ),
            aliases=("discounted",),
        ),
        Fn(
            "money",
            "split_evenly",
            SPLIT_EVENLY,
            lambda r: [_cents(r), r.randint(1, 5)],
            "splits an amount",
            (
                Mutation("off_by_one", "i < extra", "i <= extra"),
                Mutation("swapped_arguments", "divmod(total, parts)", "divmod(parts, total)"),
            ),
            aliases=("share_evenly", "even_shares"),
        ),
        Fn(
            "money",
            "clamp",
            CLAMP,
            lambda r: [r.randint(-50, 150), r.randint(-10, 40), r.randint(50, 120)],
            "clamps a value",
            (Mutation("swapped_arguments", "min(value, high)", "min(high, low)"),),
            aliases=("bounded", "limit"),
        ),
        Fn(
            "cart",
            "line_total",
            LINE_TOTAL,
            lambda r: (
                [_cents(r), r.randint(1, 5)] + ([r.choice([10, 50])] if r.random() < 0.5 else [])
            ),
            "prices a cart line",
            (
                Mutation("wrong_default", "percent=0", "percent=5"),
                Mutation(
                    "swapped_arguments",
                    "apply_discount(unit_cents * qty, percent)",
                    "apply_discount(percent, unit_cents * qty)",
                ),
            ),
            uses=("money.apply_discount",),
            aliases=("price_line",),
        ),
        Fn(
            "cart",
            "cart_total",
            CART_TOTAL,
            lambda r: [_lines(r)],
            "totals a cart",
            (
                Mutation("wrong_default", "shipping=499", "shipping=500"),
                Mutation("wrong_operator", "subtotal + shipping", "subtotal - shipping"),
            ),
            uses=("cart.line_total",),
        ),
        Fn(
            "billing",
            "invoice",
            INVOICE,
            lambda r: [_lines(r), r.randint(1, 4)],
            "splits an invoice",
            uses=("money.split_evenly", "cart.cart_total"),
        ),
        Fn(
            "billing",
            "tip",
            TIP,
            lambda r: [r.choice([0, 999, 5000, 25000, 90000]), r.choice([0, 10, 15, 20, 30])],
            "computes a tip",
            uses=("money.clamp",),
        ),
    ),
    (
        Feature(
            "money",
            "format_cents",
            'def format_cents(cents, symbol="{symbol}"):\n'
            '    """cents as money text: sign, symbol, thousands separated by commas."""\n'
            '    sign = "-" if cents < 0 else ""\n'
            "    whole, frac = divmod(abs(cents), 100)\n"
            '    return sign + symbol + f"{{whole:,}}.{{frac:02d}}"\n',
            lambda r: [r.choice([0, 5, -5, 100, 123456, -99999, 100000000]) + r.randint(0, 99)],
            "Please add `format_cents(cents, symbol={symbol!r})` to `invoicing/money.py`: it "
            "formats an integer amount of cents as text: a `-` first when negative, then "
            "`symbol` (default {symbol!r}), the whole units with commas between thousands, a "
            "dot and exactly two digits of cents. Example: `format_cents(-123456)` is "
            "`'-{symbol}1,234.56'`.",
            ({"symbol": "$"}, {"symbol": "EUR "}, {"symbol": "£"}),
        ),
        Feature(
            "cart",
            "item_count",
            "def item_count(lines, min_qty={min_qty}):\n"
            '    """The total quantity over the lines whose quantity is at least min_qty."""\n'
            "    return sum(q for _, q, _ in lines if q >= min_qty)\n",
            lambda r: [_lines(r)],
            "Please add `item_count(lines, min_qty={min_qty})` to `invoicing/cart.py`: the "
            "sum of the quantities of the cart lines (`[unit_cents, qty, percent]`) whose "
            "quantity is at least `min_qty` (default {min_qty}).",
            ({"min_qty": "1"}, {"min_qty": "2"}),
        ),
    ),
)

# ---- gridlib (held out as a whole template) -----------------------------------------------
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
            lambda r: [_cell(r), _cell(r)],
            "measures a distance",
            (Mutation("wrong_operator", "abs(a[1] - b[1])", "abs(a[1] + b[1])"),),
            aliases=("taxicab",),
        ),
        Fn(
            "geometry",
            "in_bounds",
            IN_BOUNDS,
            lambda r: [_cell(r), r.randint(2, 6), r.randint(2, 6)],
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
            lambda r: [_cell(r, 4, 4), 4, 4] + ([True] if r.random() < 0.4 else []),
            "lists neighbours",
            (Mutation("wrong_default", "diagonal=False", "diagonal=True"),),
            uses=("geometry.in_bounds",),
        ),
        Fn(
            "geometry",
            "bounding_box",
            BOUNDING_BOX,
            _points_args,
            "boxes points",
            (Mutation("missing_edge_case", "    if not points:\n        return None\n", ""),),
        ),
        Fn(
            "paths",
            "path_length",
            PATH_LENGTH,
            _points_args,
            "measures a path",
            (Mutation("off_by_one", "range(len(points) - 1)", "range(len(points) - 2)"),),
            uses=("geometry.manhattan",),
        ),
        Fn(
            "paths",
            "reachable",
            REACHABLE,
            lambda r: [_cell(r, 4, 4), [_cell(r, 4, 4) for _ in range(r.randint(0, 6))], 4, 4],
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
            lambda r: [_cell(r), _cell(r)],
            "Please add `chebyshev(a, b)` to `gridlib/geometry.py`: the number of king moves "
            "between cells `a` and `b` (`[x, y]` each), i.e. the larger of the two "
            "coordinate differences in absolute value.",
        ),
    ),
)

PROJECTS: dict[str, Project] = {p.package: p for p in (TEXTKIT, INVOICING, GRIDLIB)}
HELD_OUT_PROJECT = "gridlib"
TRAIN_PROJECTS = tuple(p for p in PROJECTS if p != HELD_OUT_PROJECT)


# ---- filler modules (the repository-size knob) --------------------------------------------
def filler_fn(r: random.Random, i: int) -> tuple[str, str, Gen]:
    """A small seeded helper for filler module ``i``: (name, source, input generator)."""
    k, c = r.randint(2, 9), r.randint(-5, 5)
    letter = r.choice(string.ascii_lowercase)
    kinds: list[tuple[str, str, Gen]] = [
        (
            f"scale_{i}",
            f'def scale_{i}(x):\n    """x times {k}, plus {c}."""\n    return x * {k} + {c}\n',
            lambda r: [r.randint(-100, 100)],
        ),
        (
            f"count_{letter}_{i}",
            f'def count_{letter}_{i}(text):\n    """How many times {letter!r} occurs in text."""\n'
            f"    return text.count({letter!r})\n",
            lambda r: [_text(r, 0, 6)],
        ),
        (
            f"every_{k}_{i}",
            f'def every_{k}_{i}(items):\n    """Every {k}th item, from the first."""\n'
            f"    return items[::{k}]\n",
            lambda r: [list(range(r.randint(0, 20)))],
        ),
    ]
    return kinds[r.randrange(len(kinds))]
