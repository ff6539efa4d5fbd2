"""The observation renderer: what a tool shows of the world, never the world itself.

Tools return *views* of rows (a chosen subset of columns, hidden flags left out or turned
into agent-facing fields) and long lists as *pages* whose size is a task knob. Every page
carries ``as_of``: the simulated time of the data, which a stale read shows as older than
the latest change. Changing anything here changes what agents see: bump
``RENDERER_VERSION`` (environments put it in ``EnvSpec.renderer_version``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gymforge.core.errors import ToolError

RENDERER_VERSION = "1"


def view(row: Mapping[str, Any], fields: Sequence[str], **extra: Any) -> dict[str, Any]:
    """The agent-facing projection of a row: ``fields`` in order, then ``extra``."""
    out = {f: row[f] for f in fields}
    out.update(extra)
    return out


def paginate(
    items: Sequence[Mapping[str, Any]] | Iterable[Mapping[str, Any]],
    page: int,
    page_size: int,
    as_of: str,
) -> dict[str, Any]:
    """Page ``page`` (from 1) of ``items``. A page past the end is a validation error, as
    real APIs do; an empty list has one empty page."""
    rows = list(items)
    check_page(page, page_size, len(rows))
    return page_envelope(
        rows[(page - 1) * page_size : page * page_size], page, page_size, len(rows), as_of
    )


def check_page(page: int, page_size: int, total: int) -> None:
    """Refuse a page outside ``1..total_pages`` (validation)."""
    pages = max(1, -(-total // page_size))
    if page < 1 or page > pages:
        raise ToolError("validation", f"page must be between 1 and {pages}, got {page}")


def page_envelope(
    chunk: Iterable[Mapping[str, Any]], page: int, page_size: int, total: int, as_of: str
) -> dict[str, Any]:
    """The page around ``chunk``, already cut (with SQL ``LIMIT``/``OFFSET``) from ``total``
    items."""
    pages = max(1, -(-total // page_size))
    return {
        "items": [dict(r) for r in chunk],
        "page": page,
        "total_pages": pages,
        "total_items": total,
        "next_page": page + 1 if page < pages else None,
        "as_of": as_of,
    }


def page_of(index: int, page_size: int) -> int:
    """The page (from 1) that shows the item at 0-based ``index``."""
    return index // page_size + 1


def money(cents: int, currency: str = "USD") -> str:
    """``12.34 USD``: how amounts appear in text the user simulator writes."""
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d} {currency}"
