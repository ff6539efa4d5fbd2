"""A Verifiers environment with an oracle gets a verifier red team that QA can run.

Before, the adapter's ``QAProfile`` declared no verifier kinds and no red-team cases, so
``verifier_redteam`` failed every Verifiers environment with a working oracle with "nothing
to test: declare QAProfile.verifier_kinds and/or redteam cases", a profile its user cannot
declare. Now the cases are written in the oracle's reply form: a strict rubric rejects them
all, and a lenient one (``answer in parsed``) is caught by the hedges.
"""

from __future__ import annotations

from interop_helpers import needs

pytestmark = needs("verifiers")


def _redteam(module: str) -> object:
    from gymforge.qa import QAOptions, QATarget, run_check
    from gymforge.registry.resolve import resolve_factory

    target = QATarget.from_factory(resolve_factory(f"verifiers:tests.interop.{module}"))
    return run_check("verifier_redteam", target, QAOptions(episodes=8, fuzz_examples=10))


def test_strict_rubric_rejects_every_case() -> None:
    result = _redteam("vf_ex_xml_think")
    assert result.passed, result.details  # type: ignore[attr-defined]
    assert "nothing to test" not in result.details  # type: ignore[attr-defined]
    metrics = result.metrics  # type: ignore[attr-defined]
    assert metrics["exercised"] >= 9 and metrics["breached"] == []


def test_lenient_rubric_is_caught() -> None:
    result = _redteam("vf_ex_lenient")
    assert not result.passed  # type: ignore[attr-defined]
    breached = result.metrics["breached"]  # type: ignore[attr-defined]
    assert {"env.hedge_or", "env.enumerate_candidates"} <= set(breached)
