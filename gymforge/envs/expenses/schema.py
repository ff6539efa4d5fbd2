"""The expenses world's tables. Amounts are integer minor units (cents); rates are US
dollars per unit of the currency, in millionths."""

from __future__ import annotations

from gymforge.world.schema import Schema, table

SCHEMA = Schema(
    (
        table("employees", "id", "name", "department"),
        table("policy", "key", "value_cents:int", pk="key"),
        table("rates", "currency", "usd_micros:int", "as_of", pk="currency"),
        table("batches", "id", "status", "report_count:int", "submitted_at"),
        table(
            "reports",
            "id",
            "batch_id",
            "seq:int",
            "employee_id",
            "category",
            "merchant",
            "expense_date",
            "amount_cents:int",
            "currency",
            "has_receipt:int",
            "status",
            "reason_code",
            "approved_usd_cents:int",
            "decided_at",
            indexes=("batch_id",),
        ),
        table("reimbursements", "id", "report_id", "employee_id", "usd_cents:int", "created_at"),
        table("audit_log", "id", "at", "actor", "action", "entity_id", "detail"),
    )
)
