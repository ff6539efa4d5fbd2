"""The CRM's read tools and ``ask_requester``. Reads return views (``gymforge.world.render``)
and the record's owning ``team_id``; the writes are in ``gymforge.envs.crm.writes``.

Each call ``note``s for the process rules: ``record`` (the record read or written; for a
new contact or an activity, its account), ``team`` and ``foreign`` (another team owns it),
``target`` (it is one of the records an ambiguous request could mean), ``kind`` (what a
search looked for), the transition facts of a stage move, and for a question whether it
``revealed`` the hidden intent or was ``needless``.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import ToolError
from gymforge.envs.crm.pipeline import describe
from gymforge.envs.crm.requester import Requester
from gymforge.envs.crm.truth import CrmTruth
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv
from gymforge.world.render import check_page, page_envelope
from gymforge.world.writes import world_read

Result = dict[str, Any]
PREFIX = {"AC": "accounts", "CT": "contacts", "OP": "opportunities"}
SEARCH = {
    "accounts": ("name || ' ' || domain", ("id", "name", "domain", "team_id", "status")),
    "contacts": (
        "first_name || ' ' || last_name || ' ' || email",
        ("id", "account_id", "first_name", "last_name", "email", "title"),
    ),
    "opportunities": ("name", ("id", "account_id", "name", "stage", "team_id")),
}


class CrmReads(WorldToolEnv[CrmTruth]):
    """The read tools of ``CrmEnv``, the requester, and the helpers the writes share."""

    questions: list[dict[str, Any]]
    requester: Requester

    # ---- helpers --------------------------------------------------------------------------
    def _team(self) -> str:
        return self.truth.team_id if self.task else ""

    def _row(self, record_id: str) -> tuple[str, dict[str, Any]]:
        table = PREFIX.get(record_id.split("-", 1)[0])
        row = self.db.get(table, record_id) if table else None
        if table is None or row is None:
            raise ToolError("not_found", f"no record {record_id[:60]!r}")
        return table, row

    def _owner(self, table: str, row: dict[str, Any]) -> str:
        if table == "contacts":
            acct = self.db.get("accounts", row["account_id"]) or {}
            return str(acct.get("team_id", ""))
        return str(row["team_id"])

    def _touch(self, record: str, team: str, *refs: str, foreign: bool | None = None) -> None:
        targets = set(self.truth.targets) if self.task else set()
        self.note(
            record=record,
            team=team,
            foreign=team != self._team() if foreign is None else foreign,
            target=any(r in targets for r in (record, *refs) if r),
        )

    def _active(self, table: str, row: dict[str, Any]) -> None:
        if row.get("status") == "merged":
            raise ToolError("conflict", f"{row['id']} was merged into {row['merged_into']}")

    # ---- reads ----------------------------------------------------------------------------
    @tool
    @world_read
    def search(self, query: str, kind: str = "accounts", page: int = 1) -> Result:
        """Search active records by name (and, for accounts, domain; for contacts, email).

        Args:
            query: Text to look for, case-insensitive (part of a name, a domain, an email).
            kind: accounts, contacts or opportunities.
            page: The page of results to read, from 1.
        """
        if kind not in SEARCH:
            raise ToolError("validation", f"kind must be one of {', '.join(SEARCH)}")
        text, fields = SEARCH[kind]
        self.note(kind=kind)
        where = f"lower({text}) LIKE ?" + (
            " AND status = 'active'" if kind != "opportunities" else ""
        )
        like = "%" + query.strip().lower().replace("%", "").replace("_", "") + "%"
        total = self.db.scalar(f"SELECT COUNT(*) FROM {kind} WHERE {where}", like)
        size = self.truth.page_size if self.task else 5
        check_page(page, size, total)
        rows = self.db.all(
            f"SELECT {', '.join(fields)} FROM {kind} WHERE {where} ORDER BY id LIMIT ? OFFSET ?",
            like,
            size,
            (page - 1) * size,
        )
        return page_envelope(rows, page, size, total, self.db.now())

    @tool
    @world_read
    def get_record(self, record_id: str) -> Result:
        """Read one account, contact or opportunity in full, with what hangs off it.

        Args:
            record_id: An id such as AC-1234 (account), CT-1234 (contact) or OP-1234.
        """
        table, row = self._row(record_id)
        self.note(record=record_id, team=self._owner(table, row))
        out = dict(row)
        if table == "accounts":
            out["contacts"] = self.db.all(
                "SELECT id, first_name, last_name, email, title FROM contacts "
                "WHERE account_id = ? AND status = 'active' ORDER BY id",
                record_id,
            )
            out["opportunities"] = self.db.all(
                "SELECT id, name, stage, amount_cents FROM opportunities WHERE account_id = ? "
                "ORDER BY id",
                record_id,
            )
            out["recent_activities"] = self.db.all(
                "SELECT id, kind, subject, contact_id, created_at FROM activities "
                "WHERE account_id = ? ORDER BY created_at DESC LIMIT 5",
                record_id,
            )
        elif table == "opportunities":
            out["stage_history"] = self.db.all(
                "SELECT from_stage, to_stage, at FROM stage_history WHERE opportunity_id = ? "
                "ORDER BY at",
                record_id,
            )
        return out

    @tool
    @world_read
    def get_pipeline(self) -> Result:
        """Read the pipeline: stages, allowed transitions, required fields per stage."""
        return describe()

    @tool
    async def ask_requester(self, question: str) -> Result:
        """Ask the colleague who made the request a clarifying question.

        Args:
            question: The question, in plain language.
        """
        if not question.strip():
            raise ToolError("validation", "the question is empty")
        text, revealed = await self.requester.answer(question)
        first = bool(revealed) and not any(q["revealed"] for q in self.questions)
        self.questions.append({"question": question[:200], "revealed": revealed})
        needless = not self.truth.ambiguous
        self.note(revealed=bool(revealed), needless=needless, slots=",".join(revealed))
        if needless:
            self.shape("clarify", -0.1)
        elif first:
            self.shape("clarify", 0.1)
        return {"answer": text}
