"""Research task families: questions over a seeded corpus, with their planted answers.

Every family draws a corpus (``size`` companies, corpus number ``corpus``) and asks one
question about it. Knobs: ``size`` (8, 12 or 16 companies: 56 to 135 documents) and
``fault_rate`` rise with the level; ``hops`` (multi-hop) and ``members`` (aggregation)
too. Held out whole: ``research.comparison``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gymforge.envs.research.corpus import (
    CITIES,
    Cite,
    Company,
    Corpus,
    Product,
    corpus,
    dollars,
    money,
)
from gymforge.envs.research.truth import Decoy, Evidence, ResearchTruth
from gymforge.tasks import ChoiceKnob, IntKnob, ParamSpace, Split
from gymforge.tasks.family import Knob
from gymforge.world.tasks import WorldFamily

NOT_ANSWERABLE = "not answerable"
NOW = "2025-01-15T09:00:00Z"
Question = tuple[str, dict[str, Any]]  # the prompt and ResearchTruth's fields


def evidence(c: Corpus, cites: list[Cite], query: str) -> Evidence:
    first = cites[0]
    return Evidence(
        alternatives=[(x.doc, x.needle) for x in cites],
        doc=first.doc,
        quote=first.sentence(c.docs),
        query=query,
    )


def decoy(c: Corpus, answer: str, cite: Cite) -> Decoy:
    return Decoy(answer=answer, doc=cite.doc, quote=cite.sentence(c.docs))


def _revenue(c: Corpus, co: Company, y: int, ask: str) -> Question:
    fields: dict[str, Any] = {
        "kind": "number",
        "value": co.revenue[y],
        "unit": "usd_million",
        "answer": money(co.revenue[y]),
        "evidence": [evidence(c, co.cites[("revenue", y)], f"{co.name} revenue {y}")],
    }
    if y in co.rumours:
        guess, cite = co.rumours[y]
        fields["decoy"] = decoy(c, money(guess), cite)
    return f"What revenue did {ask} report for fiscal {y}, in USD million?", fields


def _headcount(c: Corpus, co: Company, y: int) -> Question:
    n = co.headcount[y]
    ev = evidence(c, co.cites[("headcount", y)], f"{co.name} employees {y}")
    prompt = f"How many employees did {co.name} have at the end of fiscal {y}?"
    return prompt, {
        "kind": "number",
        "value": float(n),
        "unit": "count",
        "answer": f"{n:,} employees",
        "evidence": [ev],
    }


def _ceo(c: Corpus, co: Company) -> Question:
    person = co.ceos[-1][0]
    fields: dict[str, Any] = {
        "kind": "entity",
        "entity": person,
        "candidates": list(c.people),
        "answer": person,
        "evidence": [evidence(c, co.cites[("ceo",)], f"{co.name} chief executive")],
    }
    if co.stale_ceo is not None:
        fields["decoy"] = decoy(c, co.stale_ceo[0], co.stale_ceo[1])
    return f"Who is the current chief executive officer of {co.name}?", fields


def _city(c: Corpus, co: Company) -> Question:
    return f"In which city is {co.name} headquartered?", {
        "kind": "entity",
        "entity": co.city,
        "candidates": list(CITIES),
        "answer": co.city,
        "evidence": [evidence(c, co.cites[("city",)], f"{co.name} headquarters")],
    }


def _price(c: Corpus, p: Product) -> Question:
    fields: dict[str, Any] = {
        "kind": "number",
        "value": p.price,
        "unit": "usd",
        "answer": dollars(p.price),
        "evidence": [evidence(c, p.cites["price"], f"{p.name} price")],
    }
    if p.listing is not None:
        fields["decoy"] = decoy(c, dollars(p.listing[0]), p.listing[1])
    return f"What is the list price of the {p.name}, in US dollars?", fields


def single_fact(c: Corpus, params: dict[str, Any], r: random.Random) -> Question:
    co = r.choice(list(c.companies.values()))
    kind = r.choice(("revenue", "headcount", "ceo", "city", "price"))
    if kind == "ceo" and co.ceos:
        return _ceo(c, co)
    if kind == "city":
        return _city(c, co)
    if kind == "price":
        return _price(c, r.choice([p for p in c.products.values() if p.maker == co.name]))
    y = r.choice(sorted(co.revenue))
    return _headcount(c, co, y) if kind == "headcount" else _revenue(c, co, y, co.name)


def multi_hop(c: Corpus, params: dict[str, Any], r: random.Random) -> Question:
    """Product -> its maker -> (hops - 2) acquirers -> that company's revenue."""
    hops = int(params["hops"])
    chains = []
    for p in c.products.values():
        path = [c.companies[p.maker]]
        while len(path) < hops - 1 and path[-1].parent is not None:
            path.append(c.companies[path[-1].parent])
        if len(path) == hops - 1:
            chains.append((p, path))
    p, path = r.choice(chains)
    final = path[-1]
    ask = f"the company that makes the {p.name}"
    for _ in path[1:]:
        ask = f"the company that acquired {ask}"
    y = r.choice(sorted(final.revenue))
    prompt, fields = _revenue(c, final, y, ask)
    links = [evidence(c, p.cites["maker"], f"{p.name} made by")]
    links += [evidence(c, co.cites[("parent",)], f"acquisition of {co.name}") for co in path[:-1]]
    fields["evidence"] = links + fields["evidence"]
    return prompt, fields


def aggregation(c: Corpus, params: dict[str, Any], r: random.Random) -> Question:
    """The combined revenue or headcount of ``members`` companies in one fiscal year."""
    y = r.choice((2021, 2022, 2023))
    reporting = [co for co in c.companies.values() if y in co.revenue]
    group = r.sample(reporting, min(int(params["members"]), len(reporting)))
    names = ", ".join(co.name for co in group[:-1]) + f" and {group[-1].name}"
    if r.random() < 0.5:
        total = round(sum(co.revenue[y] for co in group), 1)
        evs = [evidence(c, co.cites[("revenue", y)], f"{co.name} revenue {y}") for co in group]
        prompt = f"What was the combined fiscal {y} revenue of {names}, in USD million?"
        fields: dict[str, Any] = {"unit": "usd_million", "value": total, "answer": money(total)}
        rumoured = next((co for co in group if y in co.rumours), None)
        if rumoured is not None:
            guess, cite = rumoured.rumours[y]
            fields["decoy"] = decoy(c, money(total - rumoured.revenue[y] + guess), cite)
    else:
        heads = sum(co.headcount[y] for co in group)
        evs = [evidence(c, co.cites[("headcount", y)], f"{co.name} employees {y}") for co in group]
        prompt = f"How many employees did {names} have in total at the end of fiscal {y}?"
        fields = {"unit": "count", "value": float(heads), "answer": f"{heads:,} employees"}
    return prompt, {**fields, "kind": "number", "evidence": evs}


def comparison(c: Corpus, params: dict[str, Any], r: random.Random) -> Question:
    """Which of two companies earned more in a year, or which of two products costs less."""
    if r.random() < 0.5:
        y = r.choice((2021, 2022, 2023))
        a, b = r.sample([co for co in c.companies.values() if y in co.revenue], 2)
        win = a if a.revenue[y] > b.revenue[y] else b
        evs = [evidence(c, co.cites[("revenue", y)], f"{co.name} revenue {y}") for co in (a, b)]
        prompt = f"Which company reported the higher revenue for fiscal {y}: {a.name} or {b.name}?"
        names = (a.name, b.name)
        flip = next((co for co in (a, b) if y in co.rumours), None)
        lie = None
        if flip is not None:
            other = b if flip is a else a
            guess = flip.rumours[y][0]
            fake = flip if guess > other.revenue[y] else other
            lie = decoy(c, fake.name, flip.rumours[y][1]) if fake is not win else None
        fields: dict[str, Any] = {"entity": win.name, "decoy": lie}
    else:
        p, q = r.sample(list(c.products.values()), 2)
        win_p = p if p.price < q.price else q
        evs = [evidence(c, x.cites["price"], f"{x.name} price") for x in (p, q)]
        prompt = f"Which costs less at list price: the {p.name} or the {q.name}?"
        names = (p.name, q.name)
        fields = {"entity": win_p.name}
    return prompt, {
        **fields,
        "kind": "entity",
        "candidates": list(names),
        "answer": fields["entity"],
        "evidence": evs,
    }


def not_answerable(c: Corpus, params: dict[str, Any], r: random.Random) -> Question:
    """A question of an answerable family's form whose answer the corpus does not hold: a
    fiscal year the company never reported, a chief executive never announced, the buyer
    of a company nobody acquired."""
    options: list[str] = []
    for co in c.companies.values():
        for y in (2021, 2022, 2023):
            if y not in co.revenue:
                options.append(f"What revenue did {co.name} report for fiscal {y}, in USD million?")
                options.append(f"How many employees did {co.name} have at the end of fiscal {y}?")
        if not co.ceos:
            options.append(f"Who is the current chief executive officer of {co.name}?")
        if co.parent is None:
            p = next(p for p in c.products.values() if p.maker == co.name)
            options.append(
                "What revenue did the company that acquired the company that makes the "
                f"{p.name} report for fiscal {max(co.revenue)}, in USD million?"
            )
    return r.choice(options), {"kind": "none", "answer": NOT_ANSWERABLE}


Build = Callable[[Corpus, dict[str, Any], random.Random], Question]


@dataclass
class ResearchFamily(WorldFamily[ResearchTruth]):
    ask: Build = field(default=single_fact)

    def build(self, params: dict[str, Any], r: random.Random) -> tuple[str, ResearchTruth]:
        c = corpus(int(params["size"]), int(params["corpus"]))
        prompt, fields = self.ask(c, params, r)
        return prompt, ResearchTruth(world={}, now=NOW, corpus=c.key, **fields)


LEVELS: dict[int, dict[str, Knob]] = {
    1: {"size": ChoiceKnob((8,)), "fault_rate": ChoiceKnob((0.0,))},
    2: {"size": ChoiceKnob((12,)), "fault_rate": ChoiceKnob((0.05,))},
    3: {"size": ChoiceKnob((16,)), "fault_rate": ChoiceKnob((0.1,))},
}
CORPORA = IntKnob(0, 63)


def _levels(extra: dict[int, dict[str, Knob]] | None = None) -> dict[int, ParamSpace]:
    more = extra or {}
    return {d: ParamSpace({**k, "corpus": CORPORA, **more.get(d, {})}) for d, k in LEVELS.items()}


FAMILIES = [
    ResearchFamily("research.single_fact", 1, _levels(), single_fact),
    ResearchFamily(
        "research.multi_hop",
        1,
        _levels({d: {"hops": ChoiceKnob((d + 1,))} for d in (1, 2, 3)}),
        multi_hop,
    ),
    ResearchFamily(
        "research.aggregation",
        1,
        _levels({d: {"members": ChoiceKnob((d + 1,))} for d in (1, 2, 3)}),
        aggregation,
    ),
    ResearchFamily("research.not_answerable", 1, _levels(), not_answerable),
    ResearchFamily("research.comparison", 1, _levels(), comparison),
]
HELD_OUT_FAMILY = "research.comparison"
SPLIT = Split(families=frozenset({HELD_OUT_FAMILY}))
TRAIN_FAMILIES = tuple(f.name for f in FAMILIES if f.name != HELD_OUT_FAMILY)
