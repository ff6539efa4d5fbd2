"""The written rules of the spreadsheet world: what the agent is told, and the process
rules checked over the action log."""

from __future__ import annotations

from gymforge.verify.rules import Before, Match, Rule
from gymforge.world.writes import WRITE_RULES

WRITE_TOOLS = frozenset({"write_range", "set_formula", "create_pivot", "sort", "add_sheet"})
READ_TOOLS = frozenset({"list_sheets", "read_range", "filter", "export_xlsx"})

SYSTEM_PROMPT = """\
You work in a spreadsheet workbook through tools. Ranges are written Sheet!A1:C10 (a single \
cell Sheet!B2); defined names (list_sheets shows them) may stand for ranges in tools and \
formulas. Rules:
1. Read the data you work from (read_range or filter) before you change anything.
2. Change only the cells the request names; edits anywhere else count as damage.
3. Where the request asks for a formula, enter a formula over the data (set_formula); a \
typed-in number there is wrong even if it shows the right value.
4. A pivot table is made with create_pivot; its output is read-only.
5. Every write takes an idempotency_key: a fresh one per change, reused only to retry that \
change after an error; never resend a write that succeeded.
When the workbook is done, reply with a short summary."""

PROCESS_RULES: tuple[Rule, ...] = (
    Before(
        Match("tool.*", where={"ok": True, "read": True}),
        Match("tool.*", where={"writes": True, "effect": True}),
        name="read_before_write",
    ),
    *WRITE_RULES,
)
