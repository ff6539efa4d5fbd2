"""Attack: a Verifiers rubric that reads the last line of the parsed ``<answer>`` field as
the answer (``tests/interop/vf_ex_last_line.py``) pays ``WRONG`` then ``RIGHT`` on two lines
of that field: a hedge with the right answer last. The adapter's red team put the right
answer first (``hedge_or``: ``RIGHT or WRONG``) or in the middle (``enumerate_candidates``),
so no case paid such a rubric and the environment passed ``verifier_redteam``. Success would
be that pass: a policy trained on it learns to list candidates with its best guess last.
The cases now put the right answer at each end of the answer field and of its lines (in
forms where the answer has a field of its own), so a rubric reading either end is caught.
"""

from __future__ import annotations

from interop_helpers import needs

pytestmark = needs("verifiers")


def test_a_rubric_reading_the_last_line_is_caught() -> None:
    from gymforge.qa import QAOptions, QATarget, run_check
    from gymforge.registry.resolve import resolve_factory

    factory = resolve_factory("verifiers:tests.interop.vf_ex_last_line")
    result = run_check(
        "verifier_redteam", QATarget.from_factory(factory), QAOptions(episodes=8, fuzz_examples=10)
    )
    assert not result.passed, result.details
    assert any("right_last" in name for name in result.metrics["breached"]), result.metrics
