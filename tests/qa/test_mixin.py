"""The pytest mixin: a one-line class turns the ten QA checks into ten tests."""

from __future__ import annotations

import pytest
from broken_envs import HackableVerifierEnv

from gymforge.envs.ledger import LedgerEnv
from gymforge.qa import CHECK_NAMES, QAOptions
from gymforge.qa.testing import EnvironmentQA


class TestLedgerFactoryViaMixin(EnvironmentQA):
    """``make_env`` instead of an id, with lighter options: the ten checks as ten tests, end
    to end. (Ledger's full report is judged once, in test_qa_suite.)"""

    make_env = staticmethod(LedgerEnv)
    qa_options = QAOptions(episodes=12, fuzz_examples=20)


def test_mixin_env_id_loads_the_target_as_gymforge_qa_would() -> None:
    """The ``env = "id"`` form differs from ``make_env`` only in how the target is built."""

    class _ById(EnvironmentQA):
        env = "ledger"
        qa_options = QAOptions(episodes=12, fuzz_examples=20)

    target = _ById().qa_target()
    assert (target.ref, target.builtin, target.import_ref) == ("ledger", True, "ledger")
    assert target.env_type is LedgerEnv
    assert _ById().qa_target() is target  # one target per class, shared by its ten tests
    assert _ById().assert_check("heldout_exclusion").passed


def test_mixin_has_one_test_per_check() -> None:
    tests = sorted(n for n in dir(EnvironmentQA) if n.startswith("test_"))
    assert tests == sorted(f"test_{name}" for name in CHECK_NAMES)


class _HackableQA(EnvironmentQA):  # not collected: no Test prefix
    make_env = staticmethod(HackableVerifierEnv)
    qa_options = QAOptions(episodes=12, fuzz_examples=20)


def test_mixin_failure_shows_the_check_details() -> None:
    with pytest.raises(
        AssertionError, match=r"QA check verifier_redteam failed: .*judged a success"
    ):
        _HackableQA().test_verifier_redteam()


def test_mixin_without_env_is_a_type_error() -> None:
    class _Nothing(EnvironmentQA):
        pass

    with pytest.raises(TypeError, match="must set `env` or `make_env`"):
        _Nothing().test_reset_isolation()
