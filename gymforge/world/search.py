"""Full-text search over a world table's SQLite FTS5 index, ranked by BM25.

A table declared with ``fulltext=(...)`` columns (``gymforge.world.schema.table``) gets an
external-content FTS5 index that triggers keep in step with the table, so the index is part
of the world's template and is restored with it on every reset: nothing is re-indexed per
episode.

Agents type free text, and FTS5's query language turns some of it into syntax errors
(``"``, ``-``, ``:``, ``AND``...). ``match_query`` makes any text a safe query: its words,
each quoted as an FTS5 string, joined with ``OR`` so that BM25 ranks documents by how many
of the rarer words they hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gymforge.world.db import WorldDB

_WORD = re.compile(r"\w+", re.UNICODE)
MAX_TERMS = 32
"""Words of a query beyond this many are ignored (a query is a search, not a document)."""


def match_query(text: str) -> str:
    """An FTS5 ``MATCH`` expression for free ``text`` ("" when it has no words)."""
    words = list(dict.fromkeys(w.lower() for w in _WORD.findall(text)))[:MAX_TERMS]
    return " OR ".join(f'"{w}"' for w in words)


@dataclass(frozen=True)
class Hit:
    """One ranked result: the row's primary key, its BM25 score (higher is better; FTS5's
    ``bm25()`` is negative, so this is its negation) and a snippet of ``column`` with the
    matched words in ``[brackets]``."""

    pk: str
    score: float
    snippet: str


def search(
    db: WorldDB, table: str, text: str, *, column: str, limit: int = 10, tokens: int = 16
) -> list[Hit]:
    """The ``limit`` best rows of ``table`` for ``text`` by BM25, ties broken by primary
    key; ``column`` (one of the table's ``fulltext`` columns) gives the snippet of
    ``tokens`` words."""
    t = db.schema[table]
    if column not in t.fulltext:
        raise ValueError(f"{column!r} is not a full-text column of {table}")
    query = match_query(text)
    if not query:
        return []
    sql = (
        f"SELECT {t.name}.{t.pk}, bm25({t.fts}) AS rank, "
        f"snippet({t.fts}, ?, '[', ']', '...', ?) FROM {t.fts} "
        f"JOIN {t.name} ON {t.name}.rowid = {t.fts}.rowid "
        f"WHERE {t.fts} MATCH ? ORDER BY rank, {t.name}.{t.pk} LIMIT ?"
    )
    rows = db.conn.execute(sql, (t.fulltext.index(column), tokens, query, limit)).fetchall()
    return [Hit(str(pk), round(-rank, 4), snip) for pk, rank, snip in rows]
