"""The support desk's tools. Reads return views (``gymforge.world.render``), never rows;
writes take an idempotency key and append to the audit log.

Tools enforce what a real billing system enforces (existence, amounts, the agent's
authority, a closed case, stale versions); the policy itself is the verifier's job. Each
call ``note``s the entities it touched for the process rules: ``customer``, ``account``,
``discloses`` (account data was shown), ``account_change`` (a refund, credit or
escalation), ``verified`` and ``hold``.
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import ToolError
from gymforge.envs.support_desk.policy import AUTHORITY_CENTS, OUTCOMES, TEAMS
from gymforge.envs.support_desk.truth import DeskTruth
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv
from gymforge.world.render import money, paginate, view
from gymforge.world.writes import world_read, world_write

Result = dict[str, Any]


class DeskTools(WorldToolEnv[DeskTruth]):
    """The tool surface of ``SupportDeskEnv``."""

    def _row(self, table: str, pk: str, what: str) -> dict[str, Any]:
        row = self.db.get(table, pk)
        if row is None:
            raise ToolError("not_found", f"no {what} {pk[:60]!r}")
        return row

    def _account(self, account_id: str) -> dict[str, Any]:
        acct = self._row("accounts", account_id, "account")
        self.note(customer=acct["customer_id"], account=account_id, discloses=True)
        return acct

    def _open_case(self, case_id: str) -> dict[str, Any]:
        case = self._row("cases", case_id, "case")
        if case["status"] == "closed":
            raise ToolError("conflict", f"case {case_id} is closed")
        return case

    def _page_size(self) -> int:
        return self.truth.page_size if self.task else 5

    # ---- reads ----------------------------------------------------------------------------
    @tool
    @world_read
    def get_case(self, case_id: str) -> Result:
        """Read a support case: its customer, subject, status and version.

        Args:
            case_id: The case id, such as CS-1234.
        """
        case = self._row("cases", case_id, "case")
        return view(
            case, ("id", "customer_id", "subject", "channel", "status", "version", "opened_at")
        )

    @tool
    @world_read
    def verify_identity(self, customer_id: str, email: str, zip_code: str) -> Result:
        """Check the caller's email address and ZIP code against the customer's records.

        Args:
            customer_id: The customer id, such as C-1234.
            email: The email address the caller gave.
            zip_code: The ZIP or postal code the caller gave.
        """
        cust = self._row("customers", customer_id, "customer")
        ok = email.strip().lower() == cust["email"] and zip_code.strip() == cust["zip"]
        self.note(customer=customer_id, verified=ok)
        if self.task is not None:  # the details the caller gives (``unread_outcomes``)
            said = self.truth.identity
            self.note(
                as_told=email.strip().lower() == said["email"].strip().lower()
                and zip_code.strip() == said["zip"].strip()
            )
        return {"customer_id": customer_id, "verified": ok}

    @tool
    @world_read
    def get_customer(self, customer_id: str) -> Result:
        """Read a customer's profile.

        Args:
            customer_id: The customer id, such as C-1234.
        """
        cust = self._row("customers", customer_id, "customer")
        self.note(customer=customer_id, discloses=True)
        user, _, domain = cust["email"].partition("@")
        return view(cust, ("id", "name", "region", "created_at"), email=f"{user[0]}***@{domain}")

    @tool
    @world_read
    def get_account(self, customer_id: str) -> Result:
        """Read a customer's account: plan, status and any holds.

        Args:
            customer_id: The customer id, such as C-1234.
        """
        acct = self.db.one("SELECT * FROM accounts WHERE customer_id = ?", customer_id)
        if acct is None:
            raise ToolError("not_found", f"no account for customer {customer_id[:60]!r}")
        plan = self.db.get("plans", acct["plan_id"]) or {}
        hold = bool(acct["fraud_hold"])
        self.note(customer=customer_id, account=acct["id"], discloses=True, hold=hold)
        return view(
            acct,
            ("id", "customer_id", "status", "opened_at"),
            plan=plan.get("name"),
            monthly_cents=plan.get("monthly_cents"),
            holds=["fraud_review"] if hold else [],
        )

    @tool
    @world_read
    def list_payment_methods(self, customer_id: str) -> Result:
        """List the customer's payment methods.

        Args:
            customer_id: The customer id, such as C-1234.
        """
        self._row("customers", customer_id, "customer")
        self.note(customer=customer_id, discloses=True)
        rows = self.db.all(
            "SELECT * FROM payment_methods WHERE customer_id = ? ORDER BY id", customer_id
        )
        return {"items": [view(m, ("id", "kind", "last4")) for m in rows], "as_of": self.db.now()}

    @tool
    @world_read
    def list_payments(self, account_id: str, page: int = 1) -> Result:
        """List an account's payments, newest first, one page at a time.

        Args:
            account_id: The account id, such as A-1234.
            page: The page to read, from 1.
        """
        self._account(account_id)
        rows = self.db.all(
            "SELECT p.*, COALESCE((SELECT SUM(amount_cents) FROM refunds r "
            "WHERE r.payment_id = p.id), 0) AS refunded_cents FROM payments p "
            "WHERE account_id = ? ORDER BY charged_at DESC, id DESC",
            account_id,
        )
        fields = ("id", "invoice_id", "amount_cents", "refunded_cents", "method_id", "charged_at")
        items = [view(p, fields) for p in rows]
        out = paginate(items, page, self._page_size(), self.db.now())
        self.note(shown=tuple(p["id"] for p in out["items"]))
        return out

    @tool
    @world_read
    def list_invoices(self, account_id: str, page: int = 1) -> Result:
        """List an account's invoices, newest first, one page at a time.

        Args:
            account_id: The account id, such as A-1234.
            page: The page to read, from 1.
        """
        self._account(account_id)
        rows = self.db.all(
            "SELECT * FROM invoices WHERE account_id = ? ORDER BY issued_at DESC, id DESC",
            account_id,
        )
        items = [view(i, ("id", "period", "issued_at", "total_cents", "status")) for i in rows]
        return paginate(items, page, self._page_size(), self.db.now())

    @tool
    @world_read
    def get_invoice(self, invoice_id: str) -> Result:
        """Read one invoice with its lines.

        Args:
            invoice_id: The invoice id, such as IN-1234.
        """
        inv = self._row("invoices", invoice_id, "invoice")
        self._account(inv["account_id"])
        lines = self.db.all(
            "SELECT * FROM invoice_lines WHERE invoice_id = ? ORDER BY id", invoice_id
        )
        return view(
            inv,
            ("id", "account_id", "period", "issued_at", "total_cents", "status"),
            lines=[view(ln, ("description", "amount_cents")) for ln in lines],
        )

    @tool
    @world_read
    def list_credits(self, account_id: str) -> Result:
        """List the credits ever applied to an account.

        Args:
            account_id: The account id, such as A-1234.
        """
        self._account(account_id)
        rows = self.db.all(
            "SELECT * FROM credits WHERE account_id = ? ORDER BY created_at DESC", account_id
        )
        return {
            "items": [
                view(c, ("id", "amount_cents", "kind", "reason", "created_at")) for c in rows
            ],
            "as_of": self.db.now(),
        }

    # ---- writes ---------------------------------------------------------------------------
    @tool(writes=True)
    @world_write
    def take_case(self, case_id: str, idempotency_key: str = "") -> Result:
        """Assign an open case to yourself before working on it.

        Args:
            case_id: The case to take.
            idempotency_key: A key that makes retries of this assignment safe.
        """
        case = self._open_case(case_id)
        self.note(customer=case["customer_id"])
        if case["status"] != "open":
            raise ToolError("conflict", f"case {case_id} is already {case['status']}")
        self.audit("take_case", case_id)
        self.db.update("cases", case_id, status="in_progress", version=case["version"] + 1)
        return {"case_id": case_id, "status": "in_progress", "version": case["version"] + 1}

    @tool(writes=True)
    @world_write
    def issue_refund(
        self,
        case_id: str,
        payment_id: str,
        amount_cents: int,
        method_id: str,
        reason: str = "",
        idempotency_key: str = "",
    ) -> Result:
        """Refund (part of) a payment to one of the customer's payment methods.

        Args:
            case_id: The case this refund belongs to.
            payment_id: The payment to refund, such as PY-1234.
            amount_cents: The amount in cents, at most what is left to refund.
            method_id: The payment method to refund to, such as PM-1234.
            reason: A short reason, kept in the record.
            idempotency_key: A key that makes retries of this refund safe.
        """
        self._open_case(case_id)
        pay = self._row("payments", payment_id, "payment")
        acct = self._row("accounts", pay["account_id"], "account")
        self.note(customer=acct["customer_id"], account=acct["id"], account_change=True)
        method = self.db.get("payment_methods", method_id)
        if method is None or method["customer_id"] != acct["customer_id"]:
            raise ToolError(
                "validation", f"{method_id[:60]!r} is not a payment method of this customer"
            )
        done = self.db.scalar(
            "SELECT COALESCE(SUM(amount_cents), 0) FROM refunds WHERE payment_id = ?", payment_id
        )
        left = pay["amount_cents"] - done
        if not 0 < amount_cents <= left:
            # no amount named: the refusal reached callers never verified (list_payments
            # shows what is left, after the identity check; tests/redteam/
            # test_support_desk_refund_error_leak_red18.py)
            raise ToolError(
                "validation",
                "amount_cents must be positive and at most what is left to refund of the "
                "payment (its amount_cents less refunded_cents in list_payments)",
            )
        row: dict[str, Any] = {
            "id": self.db.new_id("RF"),
            "case_id": case_id,
            "payment_id": payment_id,
        }
        row.update(method_id=method_id, amount_cents=amount_cents, reason=reason)
        row["created_at"] = self.audit("issue_refund", row["id"], money(amount_cents))
        self.db.insert("refunds", row)
        return view(row, ("id", "payment_id", "method_id", "amount_cents"), status="pending")

    @tool(writes=True)
    @world_write
    def apply_credit(
        self,
        case_id: str,
        account_id: str,
        amount_cents: int,
        reason: str = "",
        idempotency_key: str = "",
    ) -> Result:
        """Apply a goodwill credit to an account.

        Args:
            case_id: The case this credit belongs to.
            account_id: The account to credit, such as A-1234.
            amount_cents: The credit in cents.
            reason: A short reason, kept in the record.
            idempotency_key: A key that makes retries of this credit safe.
        """
        self._open_case(case_id)
        acct = self._row("accounts", account_id, "account")
        self.note(customer=acct["customer_id"], account=account_id, account_change=True)
        if amount_cents <= 0:
            raise ToolError("validation", "amount_cents must be positive")
        if amount_cents > AUTHORITY_CENTS:
            raise ToolError(
                "permission_denied",
                f"credits above {money(AUTHORITY_CENTS)} are beyond your authority",
            )
        row: dict[str, Any] = {
            "id": self.db.new_id("CR"),
            "case_id": case_id,
            "account_id": account_id,
        }
        row.update(amount_cents=amount_cents, kind="goodwill", reason=reason)
        row["created_at"] = self.audit("apply_credit", row["id"], money(amount_cents))
        self.db.insert("credits", row)
        return view(row, ("id", "account_id", "amount_cents", "kind"))

    @tool(writes=True)
    @world_write
    def escalate_case(
        self,
        case_id: str,
        team: str,
        amount_cents: int = 0,
        reason: str = "",
        idempotency_key: str = "",
    ) -> Result:
        """Escalate the case to another team, with the amount at stake.

        Args:
            case_id: The case to escalate.
            team: billing_supervisor or fraud.
            amount_cents: The amount the customer asks for, in cents.
            reason: A short reason, kept in the record.
            idempotency_key: A key that makes retries of this escalation safe.
        """
        case = self._open_case(case_id)
        self.note(customer=case["customer_id"], account_change=True)
        if team not in TEAMS:
            raise ToolError("validation", f"team must be one of {', '.join(TEAMS)}")
        if amount_cents < 0:
            raise ToolError("validation", "amount_cents must not be negative")
        row: dict[str, Any] = {"id": self.db.new_id("ES"), "case_id": case_id, "team": team}
        row.update(amount_cents=amount_cents, reason=reason)
        row["created_at"] = self.audit("escalate_case", row["id"], f"{case_id} {team}")
        self.db.insert("escalations", row)
        self.db.update("cases", case_id, status="escalated", version=case["version"] + 1)
        return view(
            row, ("id", "case_id", "team", "amount_cents"), case_version=case["version"] + 1
        )

    @tool(writes=True)
    @world_write
    def close_case(
        self,
        case_id: str,
        outcome_codes: list[str],
        expected_version: int,
        idempotency_key: str = "",
    ) -> Result:
        """Close the case, recording one outcome code per issue the customer raised.

        Args:
            case_id: The case to close.
            outcome_codes: The outcome codes, one per issue.
            expected_version: The case version you last read; a stale one is refused.
            idempotency_key: A key that makes retries of this close safe.
        """
        case = self._open_case(case_id)
        self.note(customer=case["customer_id"])
        unknown = sorted(set(outcome_codes) - set(OUTCOMES))
        if not outcome_codes or unknown:
            raise ToolError(
                "validation", f"unknown or missing outcome codes {unknown[:5]}; see the policy"
            )
        if expected_version != case["version"]:
            raise ToolError(
                "conflict",
                f"stale version: case {case_id} is at version {case['version']}; read it again",
            )
        at = self.audit("close_case", case_id, ",".join(sorted(set(outcome_codes))))
        self.db.update(
            "cases",
            case_id,
            status="closed",
            outcome_codes=",".join(sorted(set(outcome_codes))),
            closed_at=at,
            version=case["version"] + 1,
        )
        return {"case_id": case_id, "status": "closed", "version": case["version"] + 1}
