"""The seeded corpus: companies, their people and products, and the documents about them.

A corpus is a pure function of ``(size, index)``: ``corpus(size, index)`` builds it once
per process and caches it, so every task over it (and its world template, with the FTS5
index) shares one build. Documents are of five kinds, each with a ``source`` and a
``published`` date:

- ``report``: a company's annual report for a fiscal year (revenue, headcount, sector, head
  office). Companies skip some years: those figures are *not in the corpus* at all.
- ``product``: the maker's product page (maker, launch year, list price), and for some
  products a ``listing`` on a reseller's site with an older, different price.
- ``news``: chief-executive appointments (a company may have had two: the later one is
  current) and completed acquisitions, some reprinted word for word by a wire service
  (near-duplicates with their own ids, titles and dates).
- ``blog``: an analyst's estimate of a reported year's revenue, off by 8-25%.
- ``table``: a sector's league table of a fiscal year (one row per reporting company).

The contradictions resolve by the written rules of ``SOURCE_RULES``: the company's own
report beats blogs, the maker's page beats a reseller, the later appointment beats the
earlier one.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field

from gymforge.core.seeding import derive_seed

YEARS = (2021, 2022, 2023)
SECTORS = ("logistics", "software", "energy", "food", "robotics", "health")
CITIES = ("Lisbon", "Osaka", "Denver", "Tallinn", "Porto Alegre", "Leeds", "Perth", "Graz")
FIRST = ("Mara", "Tomas", "Ines", "Kofi", "Lena", "Ravi", "Yuki", "Omar", "Sofia", "Jonas")
LAST = ("Quinn", "Okafor", "Varga", "Lindqvist", "Moreau", "Tanaka", "Haddad", "Novak", "Reyes")
STEMS = (
    "Borel", "Cendra", "Dovetail", "Everly", "Fenwick", "Galvan", "Halcyon", "Isola", "Juniper",
    "Kestrel", "Larkspur", "Meridian", "Norrland", "Orrin", "Pellucid", "Quarry", "Rookwood",
    "Saltire", "Tamsin", "Umber", "Vantor", "Wexford", "Yarrow", "Zephyr",
)  # fmt: skip
SUFFIXES = ("Systems", "Dynamics", "Labs", "Holdings", "Works", "Group")
GOODS = ("router", "sensor", "tracker", "planner", "scanner", "console", "drive", "hub")
PRODUCT_WORDS = ("Nova", "Axis", "Pulse", "Orbit", "Vector", "Summit", "Echo", "Atlas", "Flux")
SOURCE_RULES = (
    "A company's own annual report beats news, blogs and tables for its figures.",
    "A maker's product page beats a reseller's listing for a product's price.",
    "For who holds a post now, the most recent announcement wins.",
)


@dataclass(frozen=True)
class Doc:
    """One document; ``sentences`` joined by ``sep`` is its body."""

    id: str
    kind: str
    title: str
    source: str
    published: str
    sentences: tuple[str, ...]
    sep: str = " "

    @property
    def body(self) -> str:
        return self.sep.join(self.sentences)

    def row(self) -> dict[str, str]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "source": self.source,
            "published": self.published,
            "body": self.body,
        }


@dataclass(frozen=True)
class Cite:
    """Where a fact is stated: the document and a phrase of it that states the fact."""

    doc: str
    needle: str

    def sentence(self, docs: dict[str, Doc]) -> str:
        """The sentence of the document holding ``needle`` (what the oracle quotes)."""
        return next(s for s in docs[self.doc].sentences if self.needle in s)


@dataclass
class Company:
    name: str
    sector: str
    city: str
    revenue: dict[int, float]  # USD million, one decimal; only the reported years
    headcount: dict[int, int]
    ceos: list[tuple[str, str]] = field(default_factory=list)  # (person, date), oldest first
    parent: str | None = None
    # where each fact is stated: ("revenue", year) -> cites, ("ceo",) -> cites of the latest
    cites: dict[tuple[object, ...], list[Cite]] = field(default_factory=dict)
    rumours: dict[int, tuple[float, Cite]] = field(default_factory=dict)  # blog estimates
    stale_ceo: tuple[str, Cite] | None = None  # the earlier appointment, superseded


@dataclass
class Product:
    name: str
    maker: str
    price: float
    launch: int
    cites: dict[str, list[Cite]] = field(default_factory=dict)  # "price", "maker"
    listing: tuple[float, Cite] | None = None  # a reseller's older price


@dataclass
class Corpus:
    key: str
    docs: dict[str, Doc]
    companies: dict[str, Company]
    products: dict[str, Product]
    people: tuple[str, ...]

    def rows(self) -> list[dict[str, str]]:
        return [d.row() for d in self.docs.values()]


def money(m: float) -> str:
    return f"${m:,.1f} million"


def dollars(v: float) -> str:
    return f"${v:,.2f}"


def _date(r: random.Random, year: int) -> str:
    return f"{year}-{r.randint(1, 12):02d}-{r.randint(1, 28):02d}"


class _Builder:
    def __init__(self, key: str, r: random.Random) -> None:
        self.key, self.r = key, r
        self.docs: dict[str, Doc] = {}
        self._ids = r.sample(range(1000, 9999), 600)

    def add(
        self, kind: str, title: str, source: str, published: str, *sent: str, sep: str = " "
    ) -> str:
        doc = Doc(f"D-{self._ids[len(self.docs)]}", kind, title, source, published, sent, sep)
        self.docs[doc.id] = doc
        return doc.id


def _companies(b: _Builder, n: int) -> list[Company]:
    r = b.r
    names = [f"{s} {r.choice(SUFFIXES)}" for s in r.sample(STEMS, n)]
    out = []
    for name in names:
        years = YEARS if r.random() < 0.4 else tuple(sorted(r.sample(YEARS, 2)))
        base = r.uniform(40, 900)
        rev, heads = {}, {}
        for y in years:
            rev[y] = round(base * r.uniform(0.85, 1.25), 1)
            heads[y] = int(base * r.uniform(2.5, 4.0)) + r.randint(0, 40)
        out.append(Company(name, r.choice(SECTORS), r.choice(CITIES), rev, heads))
    return out


def _reports(b: _Builder, c: Company) -> None:
    for y in sorted(c.revenue):
        sentences = (
            f"{c.name} is a {c.sector} company headquartered in {c.city}.",
            f"For fiscal {y}, {c.name} reported revenue of {money(c.revenue[y])}.",
            f"The company ended fiscal {y} with {c.headcount[y]:,} employees.",
            "This report was approved by the board of directors.",
        )
        doc = b.add(
            "report",
            f"{c.name} annual report {y}",
            f"{c.name} investor relations",
            _date(b.r, y + 1)[:5] + "03-15",
            *sentences,
        )
        c.cites.setdefault(("revenue", y), []).append(Cite(doc, money(c.revenue[y])))
        c.cites.setdefault(("headcount", y), []).append(Cite(doc, f"{c.headcount[y]:,} employees"))
        c.cites.setdefault(("city",), []).append(Cite(doc, f"headquartered in {c.city}"))


def _people_news(b: _Builder, c: Company, people: list[str], wire: float) -> None:
    r = b.r
    if r.random() < 0.15:
        return  # no announcement: who leads it is not in the corpus
    picks = [people.pop()] + ([people.pop()] if r.random() < 0.5 else [])
    year = r.choice(YEARS[:2])
    for i, person in enumerate(picks):
        date = _date(r, year + i)
        c.ceos.append((person, date))
        text = f"{c.name} has named {person} as its chief executive officer."
        more = "The appointment takes effect immediately."
        title = f"{c.name} names {person} chief executive"
        ids = [b.add("news", title, "Business Daily", date, text, more)]
        if r.random() < wire:
            ids.append(b.add("news", f"{title} (wire)", "Wire Service", date, text, more))
        cites = [Cite(d, f"named {person} as its chief executive") for d in ids]
        if i == len(picks) - 1:
            c.cites[("ceo",)] = cites
        else:
            c.stale_ceo = (person, cites[0])


def _acquisitions(b: _Builder, cs: list[Company], wire: float) -> None:
    r = b.r
    n = len(cs)
    chain = r.sample(range(n), 3)
    pairs = {(chain[1], chain[0]), (chain[2], chain[1])}  # (target, buyer): a chain of two
    for i in range(n):
        buyers = [j for j in range(i) if j not in chain]  # earlier ones only: no cycles
        if i not in chain and buyers and r.random() < 0.3:
            pairs.add((i, r.choice(buyers)))
    for t, buyer in sorted(pairs):
        target, parent = cs[t], cs[buyer]
        target.parent = parent.name
        text = f"{parent.name} has completed its acquisition of {target.name}."
        more = f"{target.name} will keep its brand and its offices in {target.city}."
        date = _date(r, r.choice(YEARS))
        title = f"{parent.name} closes deal for {target.name}"
        ids = [b.add("news", title, "Business Daily", date, text, more)]
        if r.random() < wire:
            ids.append(b.add("news", f"{title} (wire)", "Wire Service", date, text, more))
        target.cites[("parent",)] = [Cite(d, text[:-1]) for d in ids]


def _products(b: _Builder, cs: list[Company], reseller: float) -> list[Product]:
    r = b.r
    words = [f"{w} {g.title()}" for w in PRODUCT_WORDS for g in GOODS]
    names = r.sample(words, len(cs) + len(cs) // 2)
    out = []
    for i, name in enumerate(names):
        c = cs[i % len(cs)]
        p = Product(name, c.name, round(r.uniform(49, 2400), 2), r.choice(YEARS))
        doc = b.add(
            "product",
            f"{name} | {c.name}",
            f"{c.name} website",
            _date(r, 2024),
            f"The {name} is {c.sector} equipment, a {name.split()[1].lower()} made by {c.name}.",
            f"It launched in {p.launch}.",
            f"The list price of the {name} is {dollars(p.price)}.",
        )
        p.cites["maker"] = [Cite(doc, f"made by {c.name}")]
        p.cites["price"] = [Cite(doc, f"{name} is {dollars(p.price)}")]
        if r.random() < reseller:
            old = round(p.price * r.choice((0.7, 0.8, 1.15, 1.3)), 2)
            ld = b.add(
                "listing",
                f"Buy {name} online",
                "ShopCompare reseller",
                _date(r, 2023),
                f"The {name} from {c.name}, in stock.",
                f"Our price for the {name} is {dollars(old)}.",
            )
            p.cites["maker"].append(Cite(ld, f"from {c.name}"))
            p.listing = (old, Cite(ld, f"{name} is {dollars(old)}"))
        out.append(p)
    return out


def _blogs(b: _Builder, cs: list[Company], rate: float) -> None:
    r = b.r
    for c in cs:
        for y in sorted(c.revenue):
            if r.random() >= rate:
                continue
            guess = round(
                c.revenue[y] * r.choice((-1, 1)) * r.uniform(0.08, 0.25) + c.revenue[y], 1
            )
            text = f"We estimate that {c.name} brought in about {money(guess)} in fiscal {y}."
            doc = b.add(
                "blog",
                f"What {c.name} really earned in {y}",
                "Analyst blog",
                _date(r, y),
                text,
                "These are our own estimates, not company figures.",
            )
            c.rumours[y] = (guess, Cite(doc, money(guess)))


def _tables(b: _Builder, cs: list[Company]) -> None:
    for sector in sorted({c.sector for c in cs}):
        for y in YEARS:
            members = [c for c in cs if c.sector == sector and y in c.revenue]
            if len(members) < 2:
                continue
            rows = [f"| {c.name} | {c.revenue[y]:,.1f} | {c.headcount[y]:,} |" for c in members]
            doc = b.add(
                "table",
                f"{sector.title()} league table, fiscal {y}",
                "Industry Register",
                f"{y + 1}-06-30",
                f"{sector.title()} companies, fiscal {y}: revenue in USD million and employees.",
                "| company | revenue | employees |",
                *rows,
                sep="\n",
            )
            for c, row in zip(members, rows, strict=True):
                c.cites[("revenue", y)].append(Cite(doc, row.rsplit("|", 2)[0]))


@functools.lru_cache(maxsize=256)
def corpus(size: int, index: int) -> Corpus:
    """The corpus of ``size`` companies number ``index`` (built once per process)."""
    key = f"{size}x{index}"
    r = random.Random(derive_seed("research-corpus", size, index))
    b = _Builder(key, r)
    cs = _companies(b, size)
    people = [f"{f} {last}" for f in FIRST for last in LAST]
    r.shuffle(people)
    for c in cs:
        _reports(b, c)
        _people_news(b, c, people, wire=0.4)
    _acquisitions(b, cs, wire=0.4)
    products = _products(b, cs, reseller=0.4)
    _blogs(b, cs, rate=0.3)
    _tables(b, cs)
    leaders = tuple(sorted({p for c in cs for p, _ in c.ceos}))
    docs = dict(sorted(b.docs.items()))
    return Corpus(key, docs, {c.name: c for c in cs}, {p.name: p for p in products}, leaders)
