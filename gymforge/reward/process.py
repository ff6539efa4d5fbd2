"""Process rewards: per-step credit from declarative rule checks.

``RuleCredit`` re-checks its rules over the action log after every step and charges each
violation, once, at the step where it is first seen, as the component ``process``. Rules
that can only be decided later (an obligation never met) are charged when they become
visible. The component is kept apart from ``task``: a trainer can weight process and
outcome separately, and the final verifier still judges the whole log on its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from gymforge.verify.rules import Event, Rule, Violation, check_rules


@dataclass
class RuleCredit:
    rules: Sequence[Rule]
    penalty: float = -0.05
    component: str = "process"
    _charged: set[tuple[str, int]] = field(default_factory=set, repr=False)

    def reset(self) -> None:
        """Forget what was charged: call at every episode reset."""
        self._charged = set()

    def new_violations(self, events: Sequence[Event]) -> list[Violation]:
        fresh = [
            v for v in check_rules(self.rules, events) if (v.rule, v.step) not in self._charged
        ]
        self._charged.update((v.rule, v.step) for v in fresh)
        return fresh

    def __call__(self, events: Sequence[Event]) -> dict[str, float]:
        """This step's component: ``penalty`` per newly visible violation."""
        fresh = self.new_violations(events)
        return {self.component: self.penalty * len(fresh)} if fresh else {}
