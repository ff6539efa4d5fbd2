"""The right values typed in as formulas that ignore the data: every formula cell of the
``compute`` and ``fix`` tasks written as ``=IF(ISBLANK($A$1),v,v)`` (it has a reference,
and its value is right, but it does not depend on any data cell). Its success would pay a
policy for hard-coding answers the task says must be computed by a formula over the data."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "envs" / "spreadsheet"))

from spreadsheet_helpers import episode, task_id

from gymforge.core.types import Action, Task, ToolCall
from gymforge.envs.spreadsheet.truth import SheetTruth
from gymforge.tasks.truth import TruthCodec


def data_blind(task: Task, plan: list[Action]) -> list[Action]:
    """The oracle's plan with every formula cell set, one by one, to a data-blind formula."""
    truth = TruthCodec(SheetTruth).parse(task)
    out: list[Action] = [
        a for a in plan if not (isinstance(a, ToolCall) and a.name == "set_formula")
    ]
    blind = [
        ToolCall(
            name="set_formula",
            arguments={
                "range": cid,
                "formula": f"=IF(ISBLANK($A$1),{truth.targets[cid]!r},{truth.targets[cid]!r})",
                "idempotency_key": f"blind-{i}",
            },
            call_id=f"blind{i}",
        )
        for i, cid in enumerate(truth.formula_cells)
    ]
    return [*out[:-1], *blind, out[-1]]


def test_data_blind_formulas_fail_the_formula_rule() -> None:
    for kind in ("compute", "fix"):
        records = episode(task_id(kind, rows=10), data_blind)
        assert not records[-1]["truncated"], kind
        verdict = records[-2]["info"]["verdict"]
        assert not verdict["passed"], (kind, verdict["facts"])
        findings = verdict["facts"]["findings"]
        # the values are right: only the formula rule can catch it
        assert not [f for f in findings if f["check"] == "outcome"], findings
        assert any(
            f["check"] == "policy" and "do not depend on the data" in f["message"] for f in findings
        ), (kind, findings)
