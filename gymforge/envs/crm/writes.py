"""The CRM's write tools: each takes an idempotency key (``gymforge.world.writes``), runs in
a savepoint, appends to the audit log and ``note``s what the process rules read (see
``gymforge.envs.crm.tools``). They refuse what a real CRM refuses and no more: the written
rules are the verifier's to enforce."""

from __future__ import annotations

import re
from typing import Any

from gymforge.core.errors import ToolError
from gymforge.envs.crm.pipeline import LOSS_REASONS, STAGES
from gymforge.envs.crm.policy import transition_facts
from gymforge.envs.crm.tools import CrmReads, Result
from gymforge.tools import tool
from gymforge.world.render import view
from gymforge.world.writes import world_write

EDITABLE: dict[str, dict[str, type]] = {
    "accounts": {"name": str, "domain": str, "industry": str, "phone": str},
    "contacts": {"first_name": str, "last_name": str, "email": str, "phone": str, "title": str},
    "opportunities": {
        "name": str,
        "amount_cents": int,
        "close_date": str,
        "contact_id": str,
        "next_step": str,
        "loss_reason": str,
    },
}
DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$")
ACTIVITY_KINDS = ("call", "email", "meeting", "note")


class CrmTools(CrmReads):
    """The whole tool surface of ``CrmEnv``."""

    # ---- writes ---------------------------------------------------------------------------
    @tool(writes=True)
    @world_write
    def create_contact(
        self,
        account_id: str,
        first_name: str,
        last_name: str,
        email: str,
        title: str = "",
        phone: str = "",
        idempotency_key: str = "",
    ) -> Result:
        """Create a contact at an account.

        Args:
            account_id: The account, such as AC-1234.
            first_name: Their first name.
            last_name: Their last name.
            email: Their email address.
            title: Their job title.
            phone: Their phone number.
            idempotency_key: A key that makes retries of this creation safe.
        """
        table, acct = self._row(account_id)
        if table != "accounts":
            raise ToolError("validation", f"{account_id[:60]!r} is not an account")
        self._active(table, acct)
        self._touch(account_id, acct["team_id"])
        if not (first_name.strip() and last_name.strip()) or not EMAIL.match(email.lower()):
            raise ToolError("validation", "a contact needs a first name, a last name and an email")
        new_id = self.db.new_id("CT")
        row: dict[str, Any] = {
            "id": new_id,
            "account_id": account_id,
            "first_name": first_name.strip(),
            "last_name": last_name.strip(),
            "email": email.strip().lower(),
            "phone": phone or None,
            "title": title or None,
            "status": "active",
            "merged_into": None,
        }
        row["created_at"] = row["updated_at"] = self.audit("create_contact", new_id)
        self.db.insert("contacts", row)
        return view(row, ("id", "account_id", "first_name", "last_name", "email", "title"))

    @tool(writes=True)
    @world_write
    def update_record(
        self, record_id: str, changes: dict[str, str | int], idempotency_key: str = ""
    ) -> Result:
        """Change fields of an account, contact or opportunity (not an opportunity's stage:
        use move_stage).

        Args:
            record_id: The record, such as CT-1234.
            changes: Field name -> new value, e.g. {"phone": "+1-212-555-0100"}.
            idempotency_key: A key that makes retries of this update safe.
        """
        table, row = self._row(record_id)
        self._active(table, row)
        self._touch(record_id, self._owner(table, row))
        allowed = EDITABLE[table]
        if not changes:
            raise ToolError("validation", "changes is empty")
        for name, value in changes.items():
            kind = allowed.get(name)
            if kind is None:
                hint = " (use move_stage)" if name == "stage" else ""
                raise ToolError(
                    "validation",
                    f"{name[:40]!r} is not an editable field of {table}{hint}; "
                    f"editable: {', '.join(allowed)}",
                )
            if not isinstance(value, kind):
                raise ToolError("validation", f"{name} must be a {kind.__name__}")
        self._check_values(row, changes)
        stamp = self.audit("update_record", record_id, ",".join(sorted(changes)))
        self.db.update(table, record_id, **changes, updated_at=stamp)
        return {"record_id": record_id, "updated": sorted(changes)}

    def _check_values(self, row: dict[str, Any], changes: dict[str, str | int]) -> None:
        if "close_date" in changes and not DATE.match(str(changes["close_date"])):
            raise ToolError("validation", "close_date must be YYYY-MM-DD")
        if "amount_cents" in changes and int(changes["amount_cents"]) <= 0:
            raise ToolError("validation", "amount_cents must be positive")
        if "loss_reason" in changes and changes["loss_reason"] not in LOSS_REASONS:
            raise ToolError("validation", f"loss_reason must be one of {', '.join(LOSS_REASONS)}")
        if "contact_id" in changes:
            c = self.db.get("contacts", changes["contact_id"])
            if c is None or c["account_id"] != row["account_id"]:
                raise ToolError("validation", "contact_id must be a contact of this account")
        if "email" in changes and not EMAIL.match(str(changes["email"]).lower()):
            raise ToolError("validation", "email is not an email address")

    @tool(writes=True)
    @world_write
    def merge_records(
        self, survivor_id: str, duplicate_id: str, idempotency_key: str = ""
    ) -> Result:
        """Merge a duplicate account into the account that survives: its contacts,
        opportunities and activities move over, and the duplicate is marked merged.

        Args:
            survivor_id: The account that stays, such as AC-1234.
            duplicate_id: The duplicate account, which is marked merged.
            idempotency_key: A key that makes retries of this merge safe.
        """
        t1, keep = self._row(survivor_id)
        t2, dup = self._row(duplicate_id)
        if t1 != "accounts" or t2 != "accounts" or survivor_id == duplicate_id:
            raise ToolError("validation", "merge two different accounts")
        self._active(t1, keep)
        self._active(t2, dup)
        teams = {keep["team_id"], dup["team_id"]}
        self._touch(duplicate_id, dup["team_id"], survivor_id, foreign=teams != {self._team()})
        if keep["domain"] != dup["domain"]:
            raise ToolError("validation", "only accounts with the same domain can be merged")
        stamp = self.audit("merge_records", duplicate_id, f"into {survivor_id}")
        for table in ("contacts", "opportunities", "activities"):
            for r in self.db.all(f"SELECT id FROM {table} WHERE account_id = ?", duplicate_id):
                self.db.update(table, r["id"], account_id=survivor_id)
        self.db.update(
            "accounts", duplicate_id, status="merged", merged_into=survivor_id, updated_at=stamp
        )
        return {"survivor_id": survivor_id, "merged": duplicate_id}

    @tool(writes=True)
    @world_write
    def log_activity(
        self,
        kind: str,
        subject: str,
        account_id: str,
        contact_id: str = "",
        opportunity_id: str = "",
        idempotency_key: str = "",
    ) -> Result:
        """Log a call, email, meeting or note against an account (and a contact, a deal).

        Args:
            kind: call, email, meeting or note.
            subject: A short subject line.
            account_id: The account, such as AC-1234.
            contact_id: The contact it was with, if any.
            opportunity_id: The opportunity it concerns, if any.
            idempotency_key: A key that makes retries of this entry safe.
        """
        table, acct = self._row(account_id)
        if table != "accounts":
            raise ToolError("validation", f"{account_id[:60]!r} is not an account")
        self._active(table, acct)
        self._touch(account_id, acct["team_id"], contact_id, opportunity_id)
        if kind not in ACTIVITY_KINDS or not subject.strip():
            raise ToolError("validation", f"kind must be one of {', '.join(ACTIVITY_KINDS)}")
        for ref, tbl in ((contact_id, "contacts"), (opportunity_id, "opportunities")):
            if ref:
                found = self.db.get(tbl, ref)
                if found is None or found["account_id"] != account_id:
                    raise ToolError("validation", f"{ref[:60]!r} is not in {tbl} of this account")
        new_id = self.db.new_id("AV")
        row: dict[str, Any] = {
            "id": new_id,
            "kind": kind,
            "subject": subject.strip(),
            "account_id": account_id,
            "contact_id": contact_id or None,
            "opportunity_id": opportunity_id or None,
        }
        row["created_at"] = self.audit("log_activity", new_id, kind)
        self.db.insert("activities", row)
        return view(row, ("id", "kind", "subject", "account_id", "contact_id", "opportunity_id"))

    @tool(writes=True)
    @world_write
    def move_stage(self, opportunity_id: str, to_stage: str, idempotency_key: str = "") -> Result:
        """Move an opportunity to another pipeline stage.

        Args:
            opportunity_id: The opportunity, such as OP-1234.
            to_stage: The stage to move to (see get_pipeline).
            idempotency_key: A key that makes retries of this move safe.
        """
        table, opp = self._row(opportunity_id)
        if table != "opportunities":
            raise ToolError("validation", f"{opportunity_id[:60]!r} is not an opportunity")
        self._touch(opportunity_id, opp["team_id"])
        if to_stage not in STAGES:
            raise ToolError("validation", f"to_stage must be one of {', '.join(STAGES)}")
        if to_stage == opp["stage"]:
            raise ToolError("conflict", f"{opportunity_id} is already in {to_stage}")
        self.note(**transition_facts(opp["stage"], to_stage, opp))
        stamp = self.audit("move_stage", opportunity_id, f"{opp['stage']}->{to_stage}")
        self.db.insert(
            "stage_history",
            {
                "id": self.db.new_id("SH"),
                "opportunity_id": opportunity_id,
                "from_stage": opp["stage"],
                "to_stage": to_stage,
                "at": stamp,
            },
        )
        self.db.update("opportunities", opportunity_id, stage=to_stage, updated_at=stamp)
        return {"opportunity_id": opportunity_id, "from": opp["stage"], "stage": to_stage}

    @tool(writes=True)
    @world_write
    def request_change(self, record_id: str, change: str, idempotency_key: str = "") -> Result:
        """Ask the team that owns a record to make a change to it.

        Args:
            record_id: The record, such as OP-1234.
            change: What should change, in plain language.
            idempotency_key: A key that makes retries of this request safe.
        """
        table, row = self._row(record_id)
        team = self._owner(table, row)
        self._touch(record_id, team, foreign=False)
        if not change.strip():
            raise ToolError("validation", "describe the change")
        item = {"id": self.db.new_id("CR"), "record_id": record_id, "team_id": team}
        item.update(change=change.strip(), created_at=self.audit("request_change", record_id))
        self.db.insert("change_requests", item)
        return view(item, ("id", "record_id", "team_id"), status="sent")
