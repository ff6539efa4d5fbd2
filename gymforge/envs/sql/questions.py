"""Natural-language questions and their gold queries, generated over any ``SqlSchema``.

A question is drawn for the difficulty knobs ``joins`` (foreign keys walked), ``agg``
(aggregation) and ``nest`` (a subquery); each knob combination has one or more *kinds*:

============  =====  ===  ====  ==========================================================
kind          joins  agg  nest  shape
============  =====  ===  ====  ==========================================================
list          0-2    0    0     distinct labels of T0 reached through a chain, filtered
top_k         0      0    0     labels and a number of the k highest, ordered
count         0-2    1    0     COUNT(DISTINCT t0.id) through a chain, filtered
agg_num       0-2    1    0     SUM/AVG/MAX/MIN of a T0 number along child->parent keys
group_count   0-1    1    0     one row per category value with its count
having        1      1    0     parents with at least k children (GROUP BY ... HAVING)
top_count     1      1    0     the k parents with most children, ordered
above_avg     0      0/1  1     labels (or count) above the average of a subquery
not_in        1-2    0/1  1     labels (or count) of T0 NOT IN a filtered chain subquery
============  =====  ===  ====  ==========================================================

Walking a key child -> parent never duplicates T0's rows, so sums and averages only walk
that way; lists and counts use ``DISTINCT``. Ordered kinds break ties by the (unique)
label, and say so, so the expected order is fully determined by the question.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from gymforge.envs.sql.schema import Rows, SqlColumn, SqlSchema, SqlTable

AGG_WORDS = {"SUM": "total", "AVG": "average", "MAX": "highest", "MIN": "lowest"}


@dataclass(frozen=True)
class Question:
    text: str
    sql: str
    ordered: bool
    kind: str
    start: str
    """The table whose rows the answer is about (T0)."""
    near_misses: tuple[str, ...] = ()
    """Wrong readings of the question that the task's databases must tell from the gold
    (``SqlFamily.build``): its filter dropped (an average's scope too), an inclusive bound
    read as strict, and ``DISTINCT`` left out where a key walked from parent to children
    repeats rows."""


@dataclass(frozen=True)
class Step:
    """One key walked from ``src`` to ``dst``; ``forward`` when ``src`` holds the key."""

    src: SqlTable
    dst: SqlTable
    key: SqlColumn
    forward: bool

    def phrase(self) -> str:
        return f"{self.key.fwd if self.forward else self.key.back} {self.dst.plural}"

    def on(self, a: str, b: str) -> str:
        if self.forward:
            return f"{a}.{self.key.name} = {b}.id"
        return f"{b}.{self.key.name} = {a}.id"


def steps_from(schema: SqlSchema, table: SqlTable) -> list[Step]:
    out = [
        Step(table, schema.table(c.references), c, True) for c in table.columns if c.kind == "fk"
    ]
    for other in schema.tables:
        out += [Step(table, other, c, False) for c in other.columns if c.references == table.name]
    return out


def paths(
    schema: SqlSchema, start: SqlTable, joins: int, forward_only: bool = False
) -> list[list[Step]]:
    """Simple key paths of exactly ``joins`` steps from ``start`` (no table twice)."""
    found: list[list[Step]] = []

    def walk(path: list[Step], seen: set[str]) -> None:
        if len(path) == joins:
            found.append(path)
            return
        here = path[-1].dst if path else start
        for step in steps_from(schema, here):
            if step.dst.name not in seen and (step.forward or not forward_only):
                walk([*path, step], seen | {step.dst.name})

    walk([], {start.name})
    return found


class Drawer:
    """Draws questions over one database's rows (values for filters come from the data)."""

    def __init__(self, schema: SqlSchema, distractors: Sequence[str], rows: Rows) -> None:
        self.schema, self.rows = schema, rows
        self.cols = {t.name: schema.visible(t, distractors) for t in schema.tables}

    def values(self, table: SqlTable, col: SqlColumn) -> list[Any]:
        i = [c.name for c in self.cols[table.name]].index(col.name)
        return [row[i] for row in self.rows[table.name]]

    def filterable(self, table: SqlTable) -> list[SqlColumn]:
        kinds = ("cat", "num", "int", "date")
        return [c for c in self.cols[table.name] if c.kind in kinds and c.phrase]

    def numbers(self, table: SqlTable) -> list[SqlColumn]:
        return [c for c in self.cols[table.name] if c.kind in ("num", "int") and c.phrase]

    # ---- pieces -------------------------------------------------------------------------
    def condition(self, table: SqlTable, alias: str, r: random.Random) -> tuple[str, str] | None:
        """``(phrase, sql)`` of a filter on one of ``table``'s columns, from its data."""
        options = self.filterable(table)
        if not options:
            return None
        col = r.choice(options)
        vals = sorted(self.values(table, col))
        ref = f"{alias}.{col.name}"
        if col.kind == "cat":
            v = r.choice(vals)
            return f"whose {col.phrase} is '{v}'", f"{ref} = '{v}'"
        if col.kind == "date":
            if r.random() < 0.5:
                year = r.choice(("2022", "2023"))
                return (
                    f"whose {col.phrase} is in {year}",
                    f"{ref} BETWEEN '{year}-01-01' AND '{year}-12-31'",
                )
            d = vals[r.randrange(len(vals) // 4, max(len(vals) // 4 + 1, 3 * len(vals) // 4))]
            return f"whose {col.phrase} is before {d}", f"{ref} < '{d}'"
        pivot = vals[r.randrange(len(vals) // 4, max(len(vals) // 4 + 1, 3 * len(vals) // 4))]
        if col.kind == "int":
            if r.random() < 0.5:
                return f"whose {col.phrase} is at least {pivot}", f"{ref} >= {pivot}"
            return f"whose {col.phrase} is at most {pivot}", f"{ref} <= {pivot}"
        x = int(pivot)
        if r.random() < 0.5:
            return f"whose {col.phrase} is greater than {x}", f"{ref} > {x}"
        return f"whose {col.phrase} is less than {x}", f"{ref} < {x}"

    @staticmethod
    def chain(start: SqlTable, path: list[Step], prefix: str = "t") -> tuple[str, str, str]:
        """``(phrase, FROM clause, alias of the last table)`` of walking ``path``."""
        phrase = " ".join(s.phrase() for s in path)
        sql = f"{start.name} AS {prefix}0"
        for i, s in enumerate(path):
            a, b = f"{prefix}{i}", f"{prefix}{i + 1}"
            sql += f" JOIN {s.dst.name} AS {b} ON {s.on(a, b)}"
        return phrase, sql, f"{prefix}{len(path)}"

    @staticmethod
    def misreadings(head: str, cond: str, tail: str = "") -> tuple[str, ...]:
        """``head WHERE cond tail`` read wrongly: without the filter, and an inclusive
        bound (``>=``, ``<=``) read as strict."""
        out = [f"{head}{tail}"]
        for op in (">=", "<="):
            if f" {op} " in cond:
                out.append(f"{head} WHERE {cond.replace(f' {op} ', f' {op[0]} ')}{tail}")
        return tuple(out)

    # ---- kinds --------------------------------------------------------------------------
    def draw(self, joins: int, agg: int, nest: int, r: random.Random) -> Question | None:
        if nest:
            kinds = ["above_avg"] if joins == 0 else ["not_in"]
        elif not agg:
            kinds = ["list", "top_k"] if joins == 0 else ["list"]
        else:
            kinds = {0: ["count", "agg_num", "group_count"], 2: ["count", "agg_num"]}.get(
                joins, ["count", "agg_num", "group_count", "having", "top_count"]
            )
        kind = r.choice(kinds)
        table = r.choice(self.schema.tables)
        make: Callable[[SqlTable, int, int, random.Random], Question | None]
        make = getattr(self, f"_{kind}")
        return make(table, joins, agg, r)

    def _path(self, table: SqlTable, joins: int, r: random.Random, fwd: bool = False) -> Any:
        options = paths(self.schema, table, joins, fwd)
        return r.choice(options) if options else None

    def _list(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        path = self._path(t, joins, r)
        if t.label is None or path is None:
            return None
        phrase, src, last = self.chain(t, path)
        end = path[-1].dst if path else t
        cond = self.condition(end, last, r)
        if cond is None:
            return None
        ordered = r.random() < 0.35
        lab = t.label
        text = f"List the distinct {lab.phrase}s of {t.plural} {phrase} {cond[0]}.".replace(
            "  ", " "
        )
        head = f"SELECT DISTINCT t0.{lab.name} FROM {src}"
        tail = f" ORDER BY t0.{lab.name}" if ordered else ""
        if ordered:
            text += f" Sort them by {lab.phrase} in alphabetical order."
        sql = f"{head} WHERE {cond[1]}{tail}"
        near = self.misreadings(head, cond[1], tail)
        if any(not s.forward for s in path):  # a parent's children repeat it
            near += (sql.replace("SELECT DISTINCT ", "SELECT ", 1),)
        return Question(text, sql, ordered, "list", t.name, near)

    def _top_k(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        nums = self.numbers(t)
        if t.label is None or not nums:
            return None
        col, k, lab = r.choice(nums), r.randint(2, 4), t.label
        text = (
            f"List the {lab.phrase} and {col.phrase} of the {k} {t.plural} with the highest "
            f"{col.phrase}, highest first (break ties by {lab.phrase} in alphabetical order)."
        )
        sql = (
            f"SELECT t0.{lab.name}, t0.{col.name} FROM {t.name} AS t0 "
            f"ORDER BY t0.{col.name} DESC, t0.{lab.name} LIMIT {k}"
        )
        return Question(text, sql, True, "top_k", t.name)

    def _count(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        path = self._path(t, joins, r)
        if path is None:
            return None
        phrase, src, last = self.chain(t, path)
        cond = self.condition(path[-1].dst if path else t, last, r)
        if cond is None:
            return None
        text = f"How many distinct {t.plural} {phrase} {cond[0]} are there? Return one number."
        head = f"SELECT COUNT(DISTINCT t0.id) FROM {src}"
        sql, near = f"{head} WHERE {cond[1]}", self.misreadings(head, cond[1])
        if any(not s.forward for s in path):  # a parent's children repeat it
            near += (sql.replace("COUNT(DISTINCT t0.id)", "COUNT(*)", 1),)
        return Question(text.replace("  ", " "), sql, False, "count", t.name, near)

    def _agg_num(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        nums = self.numbers(t)
        path = self._path(t, joins, r, fwd=True)
        if not nums or path is None:
            return None
        phrase, src, last = self.chain(t, path)
        cond = self.condition(path[-1].dst if path else t, last, r)
        col, fn = r.choice(nums), r.choice(sorted(AGG_WORDS))
        if cond is None or (not path and cond[1].startswith(f"t0.{col.name} ")):
            return None
        text = (
            f"What is the {AGG_WORDS[fn]} {col.phrase} of the {t.plural} {phrase} {cond[0]}? "
            "Return one number."
        )
        head = f"SELECT {fn}(t0.{col.name}) FROM {src}"
        sql, near = f"{head} WHERE {cond[1]}", self.misreadings(head, cond[1])
        return Question(text.replace("  ", " "), sql, False, "agg_num", t.name, near)

    def _group_count(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        path = self._path(t, joins, r, fwd=True)
        if path is None:
            return None
        end = path[-1].dst if path else t
        cats = [c for c in self.cols[end.name] if c.kind == "cat" and c.phrase]
        if not cats:
            return None
        g = r.choice(cats)
        phrase, src, last = self.chain(t, path)
        whose = f"{end.singular} {g.phrase}" if path else g.phrase
        link = f" are {phrase} with that {g.phrase}" if path else f" have that {g.phrase}"
        text = (
            f"For each {whose}, how many {t.plural}{link}? Return the {g.phrase} and the "
            f"count, one row per {g.phrase} that has at least one."
        )
        sql = f"SELECT {last}.{g.name}, COUNT(*) FROM {src} GROUP BY {last}.{g.name}"
        return Question(text, sql, False, "group_count", t.name)

    def _children(self, t: SqlTable, r: random.Random) -> Step | None:
        back = [s for s in steps_from(self.schema, t) if not s.forward]
        return r.choice(back) if back and t.label is not None else None

    def _having(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        step = self._children(t, r)
        if step is None or t.label is None:
            return None
        k = r.randint(2, 4)
        lab = t.label
        text = (
            f"List the {lab.phrase}s of {t.plural} {step.key.back} at least {k} {step.dst.plural}."
        )
        sql = (
            f"SELECT t0.{lab.name} FROM {t.name} AS t0 JOIN {step.dst.name} AS t1 ON "
            f"{step.on('t0', 't1')} GROUP BY t0.id HAVING COUNT(*) >= {k}"
        )
        near = (sql.replace(f"COUNT(*) >= {k}", f"COUNT(*) > {k}"),)
        return Question(text, sql, False, "having", t.name, near)

    def _top_count(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        step = self._children(t, r)
        if step is None or t.label is None:
            return None
        k, lab, kids = r.randint(2, 3), t.label, step.dst.plural
        text = (
            f"Which {k} {t.plural} have the most {kids}? Return the {lab.phrase} and the "
            f"number of {kids}, most first (break ties by {lab.phrase} in alphabetical order)."
        )
        sql = (
            f"SELECT t0.{lab.name}, COUNT(*) AS n FROM {t.name} AS t0 JOIN {step.dst.name} AS t1 "
            f"ON {step.on('t0', 't1')} GROUP BY t0.id ORDER BY n DESC, t0.{lab.name} LIMIT {k}"
        )
        return Question(text, sql, True, "top_count", t.name)

    def _above_avg(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        nums = self.numbers(t)
        if (t.label is None and not agg) or not nums:
            return None
        col, lab = r.choice(nums), t.label
        scope, inner = f"all {t.plural}", f"SELECT AVG({col.name}) FROM {t.name}"
        cond = self.condition(t, "s0", r)
        misread: tuple[str, ...] = ()
        if cond is not None and r.random() < 0.5 and not cond[1].startswith(f"s0.{col.name} "):
            scope = f"the {t.plural} {cond[0]}"
            head = f"SELECT AVG(s0.{col.name}) FROM {t.name} AS s0"
            inner = f"{head} WHERE {cond[1]}"
            misread = self.misreadings(head, cond[1])
        where = f"t0.{col.name} > ({inner})"
        average = f"the average {col.phrase} of {scope}"
        if agg:
            text = f"How many {t.plural} have a {col.phrase} above {average}?"
            sql = f"SELECT COUNT(*) FROM {t.name} AS t0 WHERE {where}"
        else:
            assert lab is not None
            text = f"List the {lab.phrase}s of {t.plural} whose {col.phrase} is above {average}."
            sql = f"SELECT t0.{lab.name} FROM {t.name} AS t0 WHERE {where}"
        near = tuple(sql.replace(inner, q) for q in misread)
        return Question(text, sql, False, "above_avg", t.name, near)

    def _not_in(self, t: SqlTable, joins: int, agg: int, r: random.Random) -> Question | None:
        path = self._path(t, joins, r)
        if path is None or (t.label is None and not agg):
            return None
        phrase, src, last = self.chain(t, path, prefix="s")
        cond = self.condition(path[-1].dst, last, r)
        if cond is None:
            return None
        where = f"t0.id NOT IN (SELECT s0.id FROM {src} WHERE {cond[1]})"
        inner = self.misreadings(f"SELECT s0.id FROM {src}", cond[1])
        among = f"not among the {t.plural} {phrase} {cond[0]}"
        if agg or t.label is None:
            text = f"How many {t.plural} are {among}? Return one number."
            sql = f"SELECT COUNT(*) FROM {t.name} AS t0 WHERE {where}"
        else:
            lab = t.label
            text = f"List the {lab.phrase}s of {t.plural} that are {among}."
            sql = f"SELECT t0.{lab.name} FROM {t.name} AS t0 WHERE {where}"
        near = tuple(sql.replace(where, f"t0.id NOT IN ({q})") for q in inner)
        return Question(text, sql, False, "not_in", t.name, near)
