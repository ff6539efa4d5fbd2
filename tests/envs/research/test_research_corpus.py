"""The research corpus and its tasks: deterministic, every planted fact stated where its
evidence says, decoys that really contradict, unanswerable questions really unanswerable."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from gymforge.core.seeding import fingerprint
from gymforge.envs.research.corpus import corpus
from gymforge.envs.research.env import ResearchEnv
from gymforge.envs.research.truth import task_truth

SOURCE = ResearchEnv.tasks


def test_corpus_is_a_pure_function_of_its_key() -> None:
    here = fingerprint(corpus(12, 7).rows())
    code = (
        "from gymforge.core.seeding import fingerprint;"
        "from gymforge.envs.research.corpus import corpus;"
        "print(fingerprint(corpus(12, 7).rows()))"
    )
    env = {**os.environ, "PYTHONHASHSEED": "123"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    assert out.stdout.strip() == here
    assert fingerprint(corpus(12, 8).rows()) != here


def test_corpus_has_every_kind_of_document() -> None:
    for size in (8, 12, 16):
        docs = corpus(size, 3).docs.values()
        kinds = {d.kind for d in docs}
        assert {"report", "product", "news", "blog", "table"} <= kinds
        assert len({d.id for d in docs}) == len(docs)
        wires = [d for d in docs if d.source == "Wire Service"]
        assert all(any(o.body == w.body and o.id != w.id for o in docs) for w in wires)


def test_every_evidence_phrase_and_quote_is_in_its_document() -> None:
    tasks = [SOURCE.resolve(t) for t in SOURCE.sample(300, 11, "train")]
    tasks += [SOURCE.resolve(t) for t in SOURCE.sample(60, 11, "heldout")]
    for task in tasks:
        t = task_truth(task)
        size, index = t.corpus.split("x")
        docs = corpus(int(size), int(index)).docs
        for ev in t.evidence:
            assert ev.quote in docs[ev.doc].body
            assert any(d == ev.doc and n in ev.quote for d, n in ev.alternatives)
            for d, needle in ev.alternatives:
                assert needle in docs[d].body, (task.task_id, d, needle)
        if t.decoy is not None:
            assert t.decoy.quote in docs[t.decoy.doc].body
            assert t.decoy.answer != t.answer
            assert docs[t.decoy.doc].kind in ("blog", "listing", "news")


def test_unanswerable_questions_have_no_answer_in_the_corpus() -> None:
    seen = 0
    for tid in SOURCE.sample(400, 12, "train", families=["research.not_answerable"]):
        task = SOURCE.resolve(tid)
        t = task_truth(task)
        size, index = t.corpus.split("x")
        c = corpus(int(size), int(index))
        bodies = [d.body for d in c.docs.values()]
        year = re.search(r"fiscal (\d{4})", task.prompt)
        if "acquired" in task.prompt:
            product = re.search(r"makes the (.+?) report", task.prompt)
            assert product is not None
            maker = c.products[product.group(1)].maker
            assert not any(f"acquisition of {maker}" in b for b in bodies)
        elif "chief executive" in task.prompt:
            name = task.prompt.removeprefix("Who is the current chief executive officer of ")
            assert not any(f"{name[:-1]} has named" in b for b in bodies)
        else:
            assert year is not None
            name = next(n for n in c.companies if n in task.prompt)
            assert int(year.group(1)) not in c.companies[name].revenue
            assert not any(name in b and f"fiscal {year.group(1)}" in b for b in bodies)
        seen += 1
    assert seen == 400


def test_multi_hop_chains_have_as_many_documents_as_hops() -> None:
    fam = SOURCE.families["research.multi_hop"]
    for level, hops in ((1, 2), (2, 3), (3, 4)):
        for seed in range(20):
            t = task_truth(fam.task(level, seed))
            assert len(t.evidence) == hops
            assert len({ev.doc for ev in t.evidence}) == hops
