"""The expenses tools: policy and rates, paginated report lists, decisions, submission.

``decide_report`` adds the shaped ``report`` reward component when its decision takes
effect: ``+REPORT_WEIGHT / N`` if it matches the policy and the report was read first
(``get_report``, answered without a fault), ``-REPORT_WEIGHT / N * p / (1 - p)`` if it does
not match, ``p`` being the share of the batch's most common right outcome
(``report_weights``).
"""

from __future__ import annotations

from typing import Any

from gymforge.core.errors import ToolError
from gymforge.envs.expenses.policy import DECISIONS, REASONS
from gymforge.envs.expenses.truth import ExpenseTruth
from gymforge.tools import tool
from gymforge.world.env import WorldToolEnv
from gymforge.world.render import check_page, page_envelope, view
from gymforge.world.writes import world_read, world_write

Result = dict[str, Any]
STATUS = {"approve": "approved", "reject": "rejected", "escalate": "escalated"}
REPORT_WEIGHT = 0.5
SUMMARY = (
    "id",
    "seq",
    "employee_id",
    "merchant",
    "expense_date",
    "amount_cents",
    "currency",
    "status",
)
DETAIL = (*SUMMARY[:3], "category", *SUMMARY[3:7], "has_receipt", "status", "reason_code")


def report_weights(truth: ExpenseTruth) -> tuple[float, float]:
    """The ``report`` component of one right and of one wrong decision of ``truth``'s batch.

    A wrong decision costs ``p / (1 - p)`` right ones, ``p`` the share of the batch's most
    common right outcome (decision and reason; approvals, about 70%). A decision that does
    not depend on the report (approve everything, guess with the batch's mix, decide an
    arbitrary subset) is right with probability at most ``p``, so it earns at most
    ``p - (1 - p) * p / (1 - p) = 0`` in expectation, and approving every report for its
    amount exactly 0; the whole batch right earns ``REPORT_WEIGHT``, the most any episode
    can. Before, both weighed ``1 / N``: approving every row of the list unread earned about
    +0.19 a batch (tests/redteam/test_expenses_shaped_approve_all_red18.py)."""
    counts: dict[tuple[str, str], int] = {}
    for d in truth.decisions.values():
        key = (d["decision"], d["reason_code"])
        counts[key] = counts.get(key, 0) + 1
    n = len(truth.order)
    p = max(counts.values()) / n
    right = REPORT_WEIGHT / n
    return right, -right * (p / (1 - p) if p < 1 else 1.0)


class ExpenseTools(WorldToolEnv[ExpenseTruth]):
    """The tool surface of ``ExpensesEnv``."""

    def _batch(self, batch_id: str) -> dict[str, Any]:
        batch = self.db.get("batches", batch_id)
        if batch is None:
            raise ToolError("not_found", f"no batch {batch_id[:60]!r}")
        return batch

    def _read(self, report_id: str) -> bool:
        """Did a ``get_report`` of ``report_id`` answer, without a fault, in this episode?"""
        return any(
            e.name == "tool.get_report"
            and e.attrs.get("report") == report_id
            and e.attrs.get("ok")
            and not e.attrs.get("fault")
            for e in self.log
        )

    @tool
    @world_read
    def get_policy(self) -> Result:
        """Read the expense policy's numbers: per-category limits and the receipt threshold,
        in US cents."""
        rows = {r["key"]: r["value_cents"] for r in self.db.all("SELECT * FROM policy")}
        limits = {k.split(".", 1)[1]: v for k, v in sorted(rows.items()) if k.startswith("limit.")}
        return {
            "limits_usd_cents": limits,
            "receipt_threshold_usd_cents": rows["receipt_threshold"],
        }

    @tool
    @world_read
    def get_rates(self) -> Result:
        """Read the exchange rates: US dollars per unit of each currency, in millionths."""
        rows = self.db.all("SELECT * FROM rates ORDER BY currency")
        return {
            "usd_micros": {r["currency"]: r["usd_micros"] for r in rows},
            "as_of": rows[0]["as_of"],
        }

    @tool
    @world_read
    def list_reports(self, batch_id: str, page: int = 1) -> Result:
        """List a batch's reports in submission order, one page at a time.

        Args:
            batch_id: The batch id, such as B-1234.
            page: The page to read, from 1.
        """
        total = self._batch(batch_id)["report_count"]
        size = self.truth.page_size if self.task else 10
        check_page(page, size, total)
        rows = self.db.all(
            f"SELECT {', '.join(SUMMARY)} FROM reports WHERE batch_id = ? ORDER BY seq "
            "LIMIT ? OFFSET ?",
            batch_id,
            size,
            (page - 1) * size,
        )
        return page_envelope(rows, page, size, total, self.db.now())

    @tool
    @world_read
    def get_report(self, report_id: str) -> Result:
        """Read one report in full: category, amount, currency, receipt, status.

        Args:
            report_id: The report id, such as R-12345.
        """
        rep = self.db.get("reports", report_id)
        if rep is None:
            raise ToolError("not_found", f"no report {report_id[:60]!r}")
        self.note(report=report_id)
        return view(rep, DETAIL)

    @tool(writes=True)
    @world_write
    def decide_report(
        self,
        report_id: str,
        decision: str,
        reason_code: str,
        approved_usd_cents: int = 0,
        idempotency_key: str = "",
    ) -> Result:
        """Decide a pending report.

        Args:
            report_id: The report to decide.
            decision: approve, reject or escalate.
            reason_code: within_policy, duplicate, missing_receipt or over_limit.
            approved_usd_cents: The approved amount in US cents; 0 unless approving.
            idempotency_key: A key that makes retries of this decision safe.
        """
        rep = self.db.one(
            "SELECT r.*, b.status AS batch_status FROM reports r "
            "JOIN batches b ON b.id = r.batch_id WHERE r.id = ?",
            report_id,
        )
        if rep is None:
            raise ToolError("not_found", f"no report {report_id[:60]!r}")
        self.note(report=report_id)
        if rep["batch_status"] != "open":
            raise ToolError("conflict", "the batch was already submitted")
        if rep["status"] != "pending":
            raise ToolError("conflict", f"report {report_id} is already {rep['status']}")
        if decision not in DECISIONS or reason_code not in REASONS:
            raise ToolError(
                "validation", f"decision must be one of {DECISIONS}, reason_code one of {REASONS}"
            )
        if (decision == "approve") != (approved_usd_cents > 0) or approved_usd_cents < 0:
            raise ToolError("validation", "approved_usd_cents must be > 0 to approve, else 0")
        at = self.audit("decide_report", report_id, f"{decision}:{reason_code}")
        self.db.update(
            "reports",
            report_id,
            status=STATUS[decision],
            reason_code=reason_code,
            approved_usd_cents=approved_usd_cents if decision == "approve" else None,
            decided_at=at,
        )
        if decision == "approve":
            self.db.insert(
                "reimbursements",
                {
                    "id": self.db.new_id("RB"),
                    "report_id": report_id,
                    "employee_id": rep["employee_id"],
                    "usd_cents": approved_usd_cents,
                    "created_at": at,
                },
            )
        if self.task is not None:
            want = self.truth.decisions[report_id]
            right = (want["decision"], want["reason_code"]) == (decision, reason_code) and (
                decision != "approve" or want["usd"] == approved_usd_cents
            )
            paid, charged = report_weights(self.truth)
            # a right decision pays only on a report read first: the list alone (duplicates,
            # a merchant's category, amounts against the limits) decided ~93% of reports
            # right unread, as much shaped reward as reading every report and deciding 90%
            # right (tests/redteam/test_expenses_list_only_red18b.py)
            if not right:
                self.shape("report", charged)
            elif self._read(report_id):
                self.shape("report", paid)
        return {"report_id": report_id, "status": STATUS[decision]}

    @tool(writes=True)
    @world_write
    def submit_batch(self, batch_id: str, idempotency_key: str = "") -> Result:
        """Submit the batch once every report is decided.

        Args:
            batch_id: The batch to submit.
            idempotency_key: A key that makes retries of this submission safe.
        """
        if self._batch(batch_id)["status"] != "open":
            raise ToolError("conflict", "the batch was already submitted")
        pending = self.db.scalar(
            "SELECT COUNT(*) FROM reports WHERE batch_id = ? AND status = 'pending'", batch_id
        )
        if pending:
            raise ToolError("validation", f"{pending} reports are still pending")
        at = self.audit("submit_batch", batch_id)
        self.db.update("batches", batch_id, status="submitted", submitted_at=at)
        return {"batch_id": batch_id, "status": "submitted"}
