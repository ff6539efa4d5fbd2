"""``sql``: natural-language questions over generated SQLite databases, answered with a query.

Three schema families, one per ``sql.<schema>`` task family: ``sql.shop`` (customers,
products, orders, order items), ``sql.school`` (teachers, students, courses, enrollments)
and ``sql.flights`` (airlines, airports, flights, bookings), which is **held out whole**:
training never sees its tables or vocabulary. Difficulty knobs (see ``family.py`` and
``questions.py``): keys joined, aggregation, nesting, distractor columns, database size.

**Single-turn, no ``run_query`` tool.** The prompt shows the schema (with a comment per
column) and each table's first rows; the agent answers with one query. Reasons: every
sample is one generation, which keeps GRPO groups cheap and the outcome purely
verifiable; there is no tool dynamics to make replay or QA depend on; and answers are
judged on a shadow database the agent never sees, so an exploring agent could not
shortcut by copying results anyway. A tool-using variant can subclass this environment
and expose ``gymforge.verify.sql.run_query`` on the main database as a read-only tool.

Verification (``gymforge.verify.sql_verifier.SqlVerifier``): the reply's last ```` ```sql ```` block
(or the whole reply) runs read-only, with an operation budget and row caps, on the main
and the shadow database; its rows must equal the gold query's on both, as a multiset, or
in order when the question asks for one. Column names are ignored; column order is free.
Writes, pragmas, ``ATTACH``, extensions, unknown functions, several statements and
runaway queries are refused. The oracle answers with the gold query.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.types import Action, Reply, Task
from gymforge.core.verdict import Verdict
from gymforge.envs.sql.family import FAMILIES, HELD_OUT_FAMILY, SqlTruth, fixtures
from gymforge.envs.sql.redteam import CASES, fenced
from gymforge.kit.tool_env import ToolEnv
from gymforge.qa_profile import QAProfile, ThroughputBudget
from gymforge.tasks import Split, TaskSource
from gymforge.verify.sql_verifier import SqlVerifier

VERIFIER = SqlVerifier()


class SqlEnv(ToolEnv[SqlTruth, dict[str, Any]]):
    """Single-turn text-to-SQL: the first reply is verified; there are no tools."""

    spec = EnvSpec(
        "sql",
        "1.0.0",
        renderer_version="1",
        description="Text-to-SQL over generated SQLite databases (shop, school; flights held out).",
    )
    tasks = TaskSource.of(FAMILIES, Split(families=frozenset({HELD_OUT_FAMILY})))
    budget = Budget(max_steps=2, max_tokens=16_384)
    qa = QAProfile(
        verifier_kinds=("match",),
        redteam=CASES,
        # a reset generates two databases and validates a question against both (~5 ms);
        # random episodes are one or two steps, so steps/s is mostly resets per second
        throughput=ThroughputBudget(reset_p50_ms=20.0, steps_per_s=60.0),
        family_weights={f.name: 1.0 for f in FAMILIES if f.name != HELD_OUT_FAMILY},
    )
    system_prompt = (
        "You answer questions about SQLite databases by writing one SELECT query. Reason as "
        "long as you need, then end with the query in a ```sql fenced block."
    )

    def init_world(self, task: Task, r: random.Random) -> dict[str, Any]:
        return {}

    async def verify(self, task: Task, world: dict[str, Any], reply: str) -> Verdict:
        truth = self.truth_of(task)
        # A query may run up to its limits (SqlLimits: ops and wall time); it runs in a worker
        # thread with its own connection, so a slow query stalls no other session's loop.
        verdict = await asyncio.to_thread(
            VERIFIER.verify, reply, truth.sql, lambda: fixtures(truth), ordered=truth.ordered
        )
        facts = {**verdict.facts, "kind": truth.kind, "ordered": truth.ordered}
        return verdict.model_copy(update={"facts": facts})

    def oracle_plan(self, task: Task) -> list[Action]:
        return [Reply(text=fenced(self.truth_of(task).sql))]
