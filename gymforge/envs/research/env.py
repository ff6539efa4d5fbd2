"""``research``: answer a question from a seeded corpus, citing verbatim evidence.

The agent searches a corpus of 56-135 generated documents (annual reports, product pages
and reseller listings, news and wire reprints, analyst blogs, league tables) through a real
SQLite FTS5 index with BM25 ranking, opens documents, finds passages in them, and submits
one ``answer(text, citations)``. Documents contradict each other on purpose (a blog's
estimate, a reseller's old price, a superseded appointment); the written source rules in
the system prompt resolve them.

The verifier judges the submitted answer against the planted truth (numbers within a
relative tolerance, names normalised, exactly one candidate named) and every citation:
the quote must appear verbatim in the cited document and contain the evidence, every
evidence item must be cited, and what is quoted must have been read before the answer (the
document opened, or the quote in a passage ``find_in_doc`` returned). No valid citations,
no credit; on a not-answerable question the right answer says so and cites nothing.
Reward: ``task`` (1 on success) and ``step_cost``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from gymforge.core.env import EnvSpec
from gymforge.core.episode import Budget
from gymforge.core.seeding import uniform
from gymforge.core.types import Action, Reply, Task, ToolCall
from gymforge.envs.research.corpus import SOURCE_RULES, corpus
from gymforge.envs.research.families import FAMILIES, SPLIT, TRAIN_FAMILIES
from gymforge.envs.research.grading import (
    ABSTAIN,
    MAX_QUOTE,
    check_answer,
    check_citations,
    partial_score,
)
from gymforge.envs.research.redteam import REDTEAM
from gymforge.envs.research.tools import SCHEMA, ResearchTools, shown_runs
from gymforge.qa_profile import Baselines, QAProfile, ThroughputBudget
from gymforge.reward.standard import StandardReward
from gymforge.tasks import TaskSource
from gymforge.tools import FaultPlan
from gymforge.verify import Verdict
from gymforge.world.db import TemplateCache, WorldDB
from gymforge.world.render import RENDERER_VERSION
from gymforge.world.verify import Finding, verdict_of
from gymforge.world.writes import WorldFaults

INDEX_LAG = "2022-12-31"
SUBMITTED = "I have submitted my answer with its citations."
SYSTEM_PROMPT = f"""\
You are a research analyst. Answer the user's question from the document corpus only.
Use search to find documents, open (or find_in_doc) to read them, then call answer once \
with the answer and its citations, and finally reply briefly.
Cite every fact your answer rests on as {{doc_id, quote}}: a quote of at most {MAX_QUOTE} \
characters copied verbatim from a document you have read, which states the fact. For a \
question that chains facts (the maker of a product, the buyer of a company), cite each link.
When documents disagree: {" ".join(SOURCE_RULES)}
Give a number with its unit (for example "$412.5 million" or "1,240 employees"), or a \
name. If the corpus does not answer the question, answer "{ABSTAIN[0]}" with no citations."""


def call(name: str, **arguments: Any) -> ToolCall:
    return ToolCall(name=name, arguments=arguments)


def read_before_answer(log: Sequence[Any]) -> tuple[set[str], dict[str, list[str]]]:
    """What the action log shows the agent read before the answer was recorded: the
    documents it opened whole, and per document the passages ``find_in_doc`` returned. A
    read after ``answer`` cannot have informed its citations, and a find that returned no
    passage, or other ones, showed nothing of what is quoted."""
    whole: set[str] = set()
    shown: dict[str, list[str]] = {}
    for e in log:
        if e.name == "tool.answer" and e.attrs.get("effect"):
            break
        if not e.attrs.get("ok") or "doc" not in e.attrs:
            continue
        if e.name == "tool.open":
            whole.add(str(e.attrs["doc"]))
        elif e.name == "tool.find_in_doc":
            shown.setdefault(str(e.attrs["doc"]), []).extend(e.attrs.get("shown", ()))
    return whole, shown


def unread(
    cites: Sequence[Mapping[str, Any]], docs: Mapping[str, Any], log: Sequence[Any]
) -> list[str]:
    """The cited documents (of ``docs``, those that exist) some citation of which quotes
    what the agent was not shown before answering: the document was not opened, and no
    passage ``find_in_doc`` returned of it holds the quote (quotes lifted from search
    snippets, documents "read" with a find that matched nothing). Consecutive passages
    shown read as the text they make in the document (:func:`shown_runs`): a quote may run
    over two sentences (``grading.MAX_QUOTE``)."""
    whole, shown = read_before_answer(log)
    out = set()
    for c in cites:
        doc, quote = str(c.get("doc_id", "")), str(c.get("quote", ""))
        if doc not in docs or doc in whole:
            continue
        runs = shown_runs(str(docs[doc]["body"]), set(shown.get(doc, ()))) if doc in shown else []
        if not any(quote in run for run in runs):
            out.add(doc)
    return sorted(out)


class ResearchEnv(ResearchTools):
    spec = EnvSpec(
        "research",
        "1.1.0",
        renderer_version=RENDERER_VERSION,
        description="Multi-step retrieval over a seeded corpus; answers with verbatim citations.",
    )
    schema = SCHEMA
    templates = TemplateCache(256)
    tasks = TaskSource.of(FAMILIES, SPLIT)
    budget = Budget(max_steps=24, max_tokens=24_000)
    reward = StandardReward(step_cost=-0.001)
    system_prompt = SYSTEM_PROMPT
    qa = QAProfile(
        verifier_kinds=("state",),
        redteam=REDTEAM,
        # the unanswerable family's answer is always the abstention, by design; its prompts
        # are single_fact's (revenue, headcount, CEO of a company), so only searching tells
        baselines=Baselines(
            oracle_min=0.95,
            bad_max=0.05,
            noop_max=0.0,
            constant_families=("research.not_answerable",),
        ),
        throughput=ThroughputBudget(reset_p50_ms=5.0, steps_per_s=400.0),
        family_weights={f: 1.0 for f in TRAIN_FAMILIES},
    )

    # ---- the shared corpus ----------------------------------------------------------------
    def world_key(self, task: Task) -> str:
        return f"corpus-{self.truth_of(task).corpus}"

    def world_rows(self, task: Task) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        size, index = self.truth_of(task).corpus.split("x")
        return {"docs": corpus(int(size), int(index)).rows()}

    # ---- episode setup --------------------------------------------------------------------
    def episode_budget(self, task: Task) -> Budget:
        """The oracle's path (a search and a read per evidence item, the answer, the reply)
        plus room for retries and a few wrong turns."""
        n = len(self.truth_of(task).evidence)
        return Budget(max_steps=3 * n + 12, max_tokens=8_000 + 3_000 * n)

    def fault_plan(self, task: Task) -> FaultPlan:
        rate = float(task.params["fault_rate"])
        return FaultPlan(
            rates={"timeout": rate / 2, "permission_denied": rate / 4, "stale": rate / 4},
            tools=frozenset({"search", "open", "find_in_doc", "answer"}),
        )

    def index_lag(self) -> str | None:
        """A stale index on a seeded ``fault_rate / 2`` of search calls: current only up to
        ``INDEX_LAG`` (the latest appointments and reports are missing)."""
        task = self.task
        if task is None or not (rate := float(task.params["fault_rate"]) / 2):
            return None
        step = self.counters.steps
        return (
            INDEX_LAG
            if uniform("research-index-lag", task.task_id, self.seed, step) < rate
            else None
        )

    def world_faults(self, task: Task) -> WorldFaults:
        rate = float(task.params["fault_rate"])
        return WorldFaults(rate_limited=rate / 2, tools=frozenset({"search", "open"}))

    # ---- the oracle -----------------------------------------------------------------------
    def oracle_plan(self, task: Task) -> list[Action]:
        """Search for and open each evidence document, answer with one citation per item."""
        t = self.truth_of(task)
        plan: list[Action] = []
        if t.kind == "none":
            plan.append(call("search", query=task.prompt))
        for ev in t.evidence:
            plan += [call("search", query=ev.query), call("open", doc_id=ev.doc)]
        cites = [{"doc_id": ev.doc, "quote": ev.quote} for ev in t.evidence]
        return [*plan, call("answer", text=t.answer, citations=cites), Reply(text=SUBMITTED)]

    # ---- the verifier ---------------------------------------------------------------------
    def verify(self, task: Task, world: WorldDB, reply: str) -> Verdict:
        t = self.truth_of(task)
        got = self.submitted()
        facts: dict[str, Any] = {"kind": t.kind, "evidence": len(t.evidence)}
        if got is None:
            finding = Finding("no_change", "no answer was submitted")
            return verdict_of([finding], verifier="research.answer@1", facts=facts, score=0.0)
        text, cites = got
        findings: list[Finding] = []
        extra = sorted(world.diff().changed_tables - {"answers"})
        if extra:
            findings.append(Finding("collateral", f"unexpected changes to tables {extra}"))
        right, why = check_answer(t, text, task.prompt)
        if not right:
            findings.append(Finding("outcome", why))
        ids = sorted({str(c.get("doc_id", "")) for c in cites})
        docs = {
            r["id"]: r
            for r in world.all(
                f"SELECT id, title, body FROM docs WHERE id IN ({', '.join('?' * len(ids))})",
                *ids,
            )
        }
        rep = check_citations(t, cites, docs)
        for i, c in enumerate(rep.checked):
            if not c["valid"]:
                findings.append(Finding("policy", f"citation {i + 1}: {c['problem']}"))
        for i, covered in enumerate(rep.covered):
            if not covered:
                findings.append(
                    Finding("policy", f"evidence {i + 1} of {len(t.evidence)} is not cited")
                )
        if t.kind == "none" and cites:
            findings.append(Finding("policy", "cites documents on an unanswerable question"))
        if missed := unread(cites, docs, self.log):
            findings.append(
                Finding("process", f"cited documents not read before answering: {missed[:5]}")
            )
        facts.update(
            answer=text[:200],
            answer_right=right,
            citations=rep.checked,
            covered=rep.covered,
        )
        sound = not extra and not missed and not (t.kind == "none" and cites)
        score = partial_score(t, right, rep) if sound else 0.0
        return verdict_of(findings, verifier="research.answer@1", facts=facts, score=score)
