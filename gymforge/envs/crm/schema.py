"""The CRM world's tables. Amounts are integer cents; dates are ``YYYY-MM-DD``; times are
ISO 8601. ``team_id`` on accounts and opportunities says which team owns the record (a
contact belongs to its account's team); ``status`` is ``active`` or ``merged``."""

from __future__ import annotations

from gymforge.world.schema import Column, Schema, table

SCHEMA = Schema(
    (
        table("teams", "id", "name"),
        table("users", "id", "name", "team_id"),
        table(
            "accounts",
            "id",
            "name",
            "domain",
            "industry",
            "phone",
            "team_id",
            "owner_id",
            "status",
            "merged_into",
            "created_at",
            "updated_at",
            indexes=("domain",),
        ),
        table(
            "contacts",
            "id",
            "account_id",
            "first_name",
            "last_name",
            "email",
            "phone",
            "title",
            "status",
            "merged_into",
            "created_at",
            "updated_at",
            indexes=("account_id", "email"),
        ),
        table(
            "opportunities",
            "id",
            "account_id",
            "name",
            "stage",
            Column("amount_cents", "INTEGER"),
            "close_date",
            "contact_id",
            "next_step",
            "loss_reason",
            "team_id",
            "owner_id",
            "created_at",
            "updated_at",
            indexes=("account_id",),
        ),
        table(
            "activities",
            "id",
            "kind",
            "subject",
            "account_id",
            "contact_id",
            "opportunity_id",
            "created_at",
            indexes=("account_id",),
        ),
        table("stage_history", "id", "opportunity_id", "from_stage", "to_stage", "at"),
        table("change_requests", "id", "record_id", "team_id", "change", "created_at"),
        table("audit_log", "id", "at", "actor", "action", "entity_id", "detail"),
    )
)
