"""``sql``: the answer is one SELECT query; its result must equal the gold query's result.

Contract (``SqlVerifier.verify(reply, gold_sql, fixtures, ordered=..., match_columns=...)``):

- **Extraction**: the last fenced ```` ```sql ```` (or untagged) block outside reasoning,
  nothing after it, several different blocks a ``hedge``; else the whole visible reply
  (see ``gymforge.verify.answer_block.extract_block``). A trailing ``;`` is dropped.
- **Refused before running** (``reason``): over ``max_sql_chars`` (``too_long``); not
  starting with ``SELECT``, ``WITH`` or ``VALUES`` (``not_a_select``: ``INSERT``,
  ``PRAGMA``, ``ATTACH``...); a ``'now'`` literal or a date function without a time value
  (``nondeterministic``: the result would change with the clock, and replay must not;
  a ``now`` or time-zone argument computed at run time is refused too: ``sql_clock``).
- **Read-only execution** on each fixture (``gymforge.verify.sql.run_query``: its module
  docstring has the locks and limits).
- **Comparison** (``sql_compare``) on every fixture: the candidate's rows against the gold
  query's rows, as a multiset, or in order when ``ordered``. Cells compare by type class
  (numbers as floats rounded to ``float_digits`` significant digits, so ``2`` equals
  ``2.0``; text; blobs; NULL). Column names are compared only with ``match_columns``; column
  order is free unless ``column_order`` (a permutation of the gold's columns is accepted).
  Several fixtures (databases with the same schema and different rows) make a query that
  hard-codes one database's answer fail on the others.

Failure ``reason``s: ``REASONS``. Facts: ``reason``, ``fixtures`` (checked), ``rows`` and
``gold_rows`` (on the fixture that decided), ``failed_fixture``, ``missing``/``extra``
(multiset differences) and ``detail``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from gymforge.core.errors import VerifierError
from gymforge.core.verdict import Verdict
from gymforge.verify.answer_block import extract_block
from gymforge.verify.sql import QueryRefused, SqlFixture, SqlLimits, precheck, run_query
from gymforge.verify.sql_compare import compare_results

VERSION = "1.0.0"
VERIFIER_ID = f"sql@{VERSION}"
REASONS = frozenset((
    "no_answer", "too_long", "unclosed_block", "hedge", "text_after_answer", "not_a_select",
    "nondeterministic", "multiple_statements", "refused", "too_slow", "too_many_rows",
    "too_large", "sql_error", "wrong_columns", "wrong_result",
))  # fmt: skip
"""``refused``: the authorizer denied an action (write, pragma, attach, function...);
``too_slow``: the operation or wall-clock budget ran out; ``too_large``: a string or blob
over the length limit; ``sql_error``: a syntax error, an unknown table or column..."""


class SqlVerifier:
    """Run a reply's query and the gold query read-only on each fixture and compare."""

    def __init__(self, limits: SqlLimits | None = None, digits: int = 9) -> None:
        self.limits = limits or SqlLimits()
        self.digits = digits

    def verify(
        self,
        reply: str,
        gold_sql: str,
        fixtures: Sequence[SqlFixture] | Callable[[], Sequence[SqlFixture]],
        *,
        ordered: bool = False,
        match_columns: bool = False,
        column_order: bool = False,
    ) -> Verdict:
        """The verdict on ``reply``. ``fixtures`` may be a zero-argument callable, called
        only once the answer has passed extraction and the lexical checks (building
        databases is then skipped for replies that are not queries at all). A gold query
        that fails is the author's bug: ``VerifierError``."""
        ex = extract_block(reply, frozenset({"sql", "sqlite", ""}))
        if ex.text is None:
            return self._verdict(ex.reason or "no_answer", {"fixtures": 0})
        try:
            precheck(ex.text, self.limits)
        except QueryRefused as err:
            return self._verdict(err.reason, {"fixtures": 0, "detail": err.detail})
        if callable(fixtures):
            fixtures = fixtures()
        if not fixtures:
            raise ValueError("SqlVerifier.verify needs at least one fixture")
        for i, fixture in enumerate(fixtures):
            try:
                want = run_query(fixture, gold_sql, self.limits)
            except QueryRefused as err:
                raise VerifierError(f"the gold query failed on fixture {i}: {err}") from None
            try:
                got = run_query(fixture, ex.text, self.limits)
            except QueryRefused as err:
                facts = {"fixtures": i + 1, "failed_fixture": i, "detail": err.detail}
                return self._verdict(err.reason, facts)
            options = {"match_columns": match_columns, "column_order": column_order}
            diff = compare_results(got, want, ordered=ordered, digits=self.digits, **options)
            if diff is not None:
                reason = diff.pop("reason")
                facts = {"fixtures": i + 1, "failed_fixture": i, "rows": len(got.rows)}
                facts.update(gold_rows=len(want.rows), **diff)
                return self._verdict(reason, facts)
        facts = {"fixtures": len(fixtures), "rows": len(got.rows), "gold_rows": len(want.rows)}
        return self._verdict(None, facts)

    def _verdict(self, reason: str | None, facts: dict[str, Any]) -> Verdict:
        return Verdict(
            passed=reason is None,
            score=1.0 if reason is None else 0.0,
            reason=reason,
            facts={"reason": reason, **facts},
            verifier=VERIFIER_ID,
        )
