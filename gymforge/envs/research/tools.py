"""The research tools: BM25 search over the corpus, reading documents, the cited answer.

``search`` runs on the world's SQLite FTS5 index (built once per corpus, with its template);
``open`` and ``find_in_doc`` return verbatim text (and count as having read the document,
or the passages found);
``answer`` records the one answer of the episode with its citations, which the verifier
then checks against the documents and the planted truth.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any

from pydantic import BaseModel, ConfigDict

from gymforge.core.errors import ToolError
from gymforge.core.seeding import canonical_json
from gymforge.envs.research.grading import MAX_CITATIONS
from gymforge.envs.research.truth import ResearchTruth
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv
from gymforge.world.schema import Schema, table
from gymforge.world.search import search
from gymforge.world.writes import world_read, world_write

Result = dict[str, Any]
MAX_ANSWER = 1000
MAX_MATCHES = 5

SCHEMA = Schema(
    (
        table(
            "docs", "id", "kind", "title", "source", "published", "body",
            fulltext=("title", "body"),
        ),
        table("answers", "id", "text", "citations", "at"),
    )
)  # fmt: skip


class Citation(BaseModel):
    """One piece of evidence: a document and a verbatim quote from it."""

    model_config = ConfigDict(extra="forbid")

    doc_id: str
    quote: str


class ResearchTools(WorldToolEnv[ResearchTruth]):
    """The tool surface of ``ResearchEnv``."""

    def _doc(self, doc_id: str) -> dict[str, Any]:
        doc = self.db.get("docs", doc_id)
        if doc is None:
            raise ToolError("not_found", f"no document {doc_id[:60]!r}")
        return doc

    def index_lag(self) -> str | None:
        """The date up to which this ``search`` call's index is current, when it lags (a
        seeded stale read: documents published later are missing from its results), else
        None."""
        return None

    @tool
    @world_read
    def search(self, query: str, limit: int = 5) -> Result:
        """Full-text search of the corpus, best matches first (BM25 ranking). The index
        can lag: ``index_as_of`` is the date it is current to.

        Args:
            query: Words to look for, such as a company name and what you want to know.
            limit: How many results to return, 1 to 10.
        """
        if not 1 <= limit <= 10:
            raise ToolError("validation", "limit must be between 1 and 10")
        lag = self.index_lag()
        hits = search(self.db, "docs", query, column="body", limit=limit if lag is None else 60)
        rows = {
            r["id"]: r
            for r in self.db.all(
                "SELECT id, kind, title, source, published FROM docs WHERE id IN "
                f"({', '.join('?' * len(hits))})",
                *[h.pk for h in hits],
            )
        }
        if lag is not None:
            hits = [h for h in hits if rows[h.pk]["published"] <= lag][:limit]
        return {
            "results": [{**rows[h.pk], "score": h.score, "snippet": h.snippet} for h in hits],
            "index_as_of": lag or self.db.now()[:10],
        }

    @tool
    @world_read
    def open(self, doc_id: str) -> Result:
        """Read a whole document: title, kind, source, publication date and text.

        Args:
            doc_id: The document id, such as D-1234.
        """
        doc = self._doc(doc_id)
        self.note(doc=doc_id)
        return {"doc_id": doc.pop("id"), **doc}

    @tool
    @world_read
    def find_in_doc(self, doc_id: str, text: str) -> Result:
        """Find the passages (sentences or table rows) of a document that contain ``text``,
        ignoring case.

        Args:
            doc_id: The document id, such as D-1234.
            text: The words to find.
        """
        doc = self._doc(doc_id)
        if not text.strip():
            raise ToolError("validation", "text must not be empty")
        needle = text.lower()
        passages = [p for p in _passages(doc["body"]) if needle in p.lower()]
        self.note(doc=doc_id, shown=passages[:MAX_MATCHES])  # what it read: these, no more
        return {
            "doc_id": doc_id,
            "matches": passages[:MAX_MATCHES],
            "total_matches": len(passages),
        }

    @tool(writes=True)
    @world_write
    def answer(self, text: str, citations: list[Citation]) -> Result:
        """Submit your final answer, once, with the evidence for it. If the corpus does not
        answer the question, answer "not answerable" and cite nothing.

        Args:
            text: The answer: a number with its unit, or a name.
            citations: The evidence, each {doc_id, quote} with a quote copied verbatim from
                the document that states the fact it supports.
        """
        if self.db.scalar("SELECT COUNT(*) FROM answers"):
            raise ToolError("conflict", "an answer was already submitted")
        if not text.strip() or len(text) > MAX_ANSWER:
            raise ToolError("validation", f"text must be 1 to {MAX_ANSWER} characters")
        if len(citations) > MAX_CITATIONS:
            raise ToolError("validation", f"at most {MAX_CITATIONS} citations")
        cited = canonical_json([c.model_dump() for c in citations])
        self.db.insert(
            "answers",
            {"id": self.db.new_id("AN"), "text": text, "citations": cited, "at": self.db.tick()},
        )
        return {"submitted": True, "citations": len(citations)}

    def submitted(self) -> tuple[str, list[dict[str, Any]]] | None:
        """The episode's answer text and citations, if one was submitted."""
        row = self.db.one("SELECT text, citations FROM answers")
        if row is None:
            return None
        return str(row["text"]), list(json.loads(row["citations"]))


def _passages(body: str) -> list[str]:
    """A body's sentences (prose) or lines (tables), as written."""
    return [body[a:b] for a, b in _spans(body)]


def _spans(body: str) -> list[tuple[int, int]]:
    """Where each passage of ``body`` lies in it (:func:`_passages`), in order."""
    out, start = [], 0
    if "\n" in body:
        for line in body.split("\n"):
            out.append((start, start + len(line)))
            start += len(line) + 1
        return out
    for i, ch in enumerate(body):
        if ch == "." and (i + 1 == len(body) or body[i + 1] == " "):
            out.append((start, i + 1))
            start = i + 2
    return out


def shown_runs(body: str, shown: Collection[str]) -> list[str]:
    """The text each run of consecutive passages of ``body`` that ``find_in_doc`` showed
    (``shown``) makes in the body, as written: a quote over two shown sentences lies inside
    one run, a quote running into a sentence never shown in none."""
    runs: list[str] = []
    first: int | None = None
    last = 0
    for a, b in _spans(body):
        if body[a:b] in shown:
            first, last = a if first is None else first, b
        elif first is not None:
            runs.append(body[first:last])
            first = None
    if first is not None:
        runs.append(body[first:last])
    return runs
