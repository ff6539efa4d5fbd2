"""Reward components a ``ToolEnv`` adds to a step beyond its reward function's.

Two sources, both summed into the step's named components by ``ToolEnv``:

- ``shape(component, value)`` calls during the step (a tool that pays for a useful
  question) and the ``extra_reward()`` hook at its end (process credit from rule checks).
  These are free-form: nothing stops them from changing which policy is best.
- Potential-based shaping (Ng, Harada and Russell, 1999), opted into by defining the
  ``potential()`` hook: every step gets ``shaping = gamma * phi(s') - phi(s)``, ``phi`` being
  the hook's value on the current state and ``gamma`` the ``shaping_gamma`` declaration.
  On a *terminal* step ``phi(s')`` is taken as 0.

The guarantee of the second: for any episode that terminates at step T, the shaping
components sum to ``sum_t gamma^t F_t = -phi(s_0)``, which depends only on the start state.
Every policy's return shifts by the same constant, so the optimal policy (and the ranking of
any two policies from the same start) is unchanged; looping through high-potential states
pays back what it collected. A truncated step keeps ``phi(s')``: a budget end is not a
terminal state, and zeroing it there would change the optimal policy near the budget.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gymforge.core.errors import UserError

SHAPING = "shaping"
"""The reward component that carries potential-based shaping."""


def check_gamma(gamma: float) -> None:
    """Refuse a discount outside (0, 1] (a ``UserError``: the class declared it)."""
    if not (isinstance(gamma, int | float) and 0 < gamma <= 1):
        raise UserError(f"shaping_gamma must be in (0, 1], got {gamma!r}")


def finite(phi: float) -> float:
    """``phi`` as a float; a ValueError when it is not finite."""
    value = float(phi)
    if not math.isfinite(value):
        raise ValueError(f"potential() returned {value}; it must be finite")
    return value


class PotentialShaping:
    """One episode's potential: ``F = gamma * phi(s') - phi(s)`` per step."""

    def __init__(self, gamma: float, phi0: float) -> None:
        check_gamma(gamma)
        self.gamma = gamma
        self.phi = finite(phi0)

    def step(self, phi_next: float | None, terminated: bool) -> float:
        """The step's shaping term; ``phi_next`` is ignored on a terminal step (taken as 0)."""
        if terminated:
            nxt = 0.0
        elif phi_next is None:
            raise ValueError("potential() returned None during an episode it shaped")
        else:
            nxt = finite(phi_next)
        term = self.gamma * nxt - self.phi
        self.phi = nxt
        return term


def add_components(into: dict[str, float], extra: Mapping[str, float]) -> None:
    """Add ``extra``'s values to ``into``'s, by name (a new name is a new component)."""
    for name, value in extra.items():
        into[name] = into.get(name, 0.0) + value
