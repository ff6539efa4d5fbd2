"""Reuse the QA suite from pytest, in the spirit of dm_env's ``EnvironmentTestMixin``.

    from gymforge.qa.testing import EnvironmentQA

    class TestMyEnv(EnvironmentQA):
        env = "my_pkg.my_env:MyEnv"      # or: make_env = staticmethod(MyEnv)

Each of the ten checks becomes a test method; a failure shows the check's details.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from gymforge.core.env import Environment
from gymforge.qa.checks.common import CheckResult, QAOptions
from gymforge.qa.suite import run_check
from gymforge.qa.target import QATarget


class EnvironmentQA:
    """Mixin for a pytest class. Set ``env`` (id or import path) or ``make_env``."""

    env: ClassVar[str | None] = None
    make_env: ClassVar[Callable[[], Environment] | None] = None
    qa_options: ClassVar[QAOptions] = QAOptions()
    _targets: ClassVar[dict[type, QATarget]] = {}

    def qa_target(self) -> QATarget:
        cls = type(self)
        if cls not in EnvironmentQA._targets:
            if cls.make_env is not None:
                EnvironmentQA._targets[cls] = QATarget.from_factory(cls.make_env)
            elif cls.env is not None:
                EnvironmentQA._targets[cls] = QATarget.load(cls.env)
            else:
                raise TypeError(f"{cls.__name__} must set `env` or `make_env`")
        return EnvironmentQA._targets[cls]

    def assert_check(self, name: str) -> CheckResult:
        result = run_check(name, self.qa_target(), self.qa_options)
        assert result.passed, f"QA check {name} failed: {result.details}"
        return result

    def test_replay_determinism(self) -> None:
        self.assert_check("replay_determinism")

    def test_reset_isolation(self) -> None:
        self.assert_check("reset_isolation")

    def test_scripted_baselines(self) -> None:
        self.assert_check("scripted_baselines")

    def test_verifier_redteam(self) -> None:
        self.assert_check("verifier_redteam")

    def test_error_paths(self) -> None:
        self.assert_check("error_paths")

    def test_truncation_accounting(self) -> None:
        self.assert_check("truncation_accounting")

    def test_distribution_audit(self) -> None:
        self.assert_check("distribution_audit")

    def test_throughput(self) -> None:
        self.assert_check("throughput")

    def test_trajectory_schema(self) -> None:
        self.assert_check("trajectory_schema")

    def test_heldout_exclusion(self) -> None:
        self.assert_check("heldout_exclusion")
