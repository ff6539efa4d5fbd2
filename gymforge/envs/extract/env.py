"""``extract``: structured records from generated documents, graded field by field.

Families (one module each, see ``base.py``): ``extract.invoice`` (number, date, parties,
currency, line items, total; layouts, locales, subtotal/VAT/due-date distractors),
``extract.ticket`` (support tickets: id, reporter, priority, category, product, order,
tags; CC addresses, priority histories and quoted older tickets as distractors) and
``extract.shipping`` (shipping notices), which is **held out whole**. Invoices in the
``de`` locale (comma decimals, dotted dates) are a held-out region too.

Single-turn: the prompt gives the JSON Schema and the document; the reply's last
```` ```json ```` block (or the whole reply) is validated against the schema (Draft
2020-12) and compared field by field with the hidden record
(``gymforge.verify.json_schema``). ``success`` means every field right; the ``task`` reward
component is the verdict's partial credit, the weighted fraction of fields right
(``StandardReward(partial_credit=True)``), and a record that breaks the schema scores 0.
The oracle answers with the record.
"""

from __future__ import annotations

import random
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.core.verdict import Verdict
from gymforge.envs.extract import invoice, shipping, ticket
from gymforge.envs.extract.base import ExtractFamily, ExtractTruth, fenced_json
from gymforge.envs.extract.redteam import CASES
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.standard import StandardReward
from gymforge.tasks import Split, TaskSource
from gymforge.verify.json_schema import JsonSchemaVerifier

FAMILIES: tuple[ExtractFamily, ...] = (invoice.FAMILY, ticket.FAMILY, shipping.FAMILY)
BY_NAME = {f.name: f for f in FAMILIES}
HELD_OUT_FAMILY = shipping.FAMILY.name
VERIFIERS = {f.name: JsonSchemaVerifier(f.schema) for f in FAMILIES}


class ExtractEnv(ToolEnv[ExtractTruth, dict[str, Any]]):
    """Single-turn extraction: the first reply is verified; there are no tools."""

    spec = EnvSpec(
        "extract",
        "1.0.0",
        renderer_version="1",
        description="Invoices and support tickets to JSON records (shipping notices held out).",
    )
    tasks = TaskSource.of(
        FAMILIES,
        Split(
            families=frozenset({HELD_OUT_FAMILY}),
            regions={f.name: dict(f.heldout) for f in FAMILIES if f.heldout},
        ),
    )
    budget = Budget(max_steps=2, max_tokens=16_384)
    reward = StandardReward(partial_credit=True)
    qa = QAProfile(
        verifier_kinds=("match",),
        redteam=CASES,
        throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=300.0),
        # the random baseline is the hidden record with each number re-drawn at even odds,
        # a near miss keeping about half its fields (0.505 measured), which partial credit
        # pays by design; keeping three quarters of them on average would mean the scramble
        # no longer reaches the fields the grade counts
        # the red team's distractor swap is the record with one field wrong, and per-field
        # credit pays the others by design (0.883 measured at the default sample)
        baselines=Baselines(bad_reward_max=0.75, redteam_reward_max=0.95),
        family_weights={f.name: 1.0 for f in FAMILIES if f.name != HELD_OUT_FAMILY},
    )
    system_prompt = (
        "You extract structured records from documents. Reason as long as you need, then end "
        "with the record in a ```json fenced block that follows the given JSON Schema."
    )

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        family = BY_NAME[task.family]
        record = self.truth_of(task).record
        verdict = VERIFIERS[family.name].verify(reply, record, family.checks(record))
        facts = {**verdict.facts, "family": family.name}
        return verdict.model_copy(update={"facts": facts})

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=fenced_json(self.truth_of(task).record))]
