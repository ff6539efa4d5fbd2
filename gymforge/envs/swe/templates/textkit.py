"""The ``textkit`` project template: text utilities for a static blog generator."""

from __future__ import annotations

import random

from gymforge.envs.swe.projects import (
    Feature,
    Fn,
    Mutation,
    Project,
    text,
)

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
            lambda r: [text(r, 1, 5), r.randint(0, 24)],
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
            lambda r: [text(r, 0, 7)] + ([r.randint(1, 5)] if r.random() < 0.5 else []),
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
            lambda r: [text(r, 1, 5) + r.choice(["", "!", " 2024", "  "])],
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
            lambda r: [text(r, 1, 5), r.randint(0, 24)],
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
            lambda r: [text(r, 0, 8), r.randint(0, 8)],
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
            lambda r: [text(r, 0, 5)],
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
