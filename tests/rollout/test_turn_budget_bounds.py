"""``TurnBudget.max_tokens`` against the reference it replaced (every bound in one list, the
smallest sent, a budget or context without room refused, the budget's refusal first), for
every combination of the cap, the budget left, the observation's tokens and the context's
room."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.core.errors import ContextLengthExceeded
from gymforge.core.types import Observation
from gymforge.rollout.turn_budget import TurnBudget


def reference(
    budget: TurnBudget, context_room: int | None, observing: Observation | None
) -> int | None:
    left = budget.remaining()
    if left is not None and observing is not None:
        left -= observing.tokens
    bounds = {"the environment's token budget": left, "the model's context": context_room}
    for what, left in bounds.items():
        if left is not None and left < 1:
            raise ContextLengthExceeded(
                f"no room for a completion: {what} leaves {left} tokens (not sent)"
            )
    known = [n for n in (budget.cap, *bounds.values()) if n is not None]
    return min(known) if known else None


_N = st.none() | st.integers(-3, 12)


@given(cap=_N, limit=_N, used=st.integers(0, 6), room=_N, tokens=st.none() | st.integers(0, 6))
def test_max_tokens_is_the_reference(
    cap: int | None, limit: int | None, used: int, room: int | None, tokens: int | None
) -> None:
    budget = TurnBudget(cap)
    budget.limit, budget.used = limit, used
    observing = None if tokens is None else Observation(messages=(), tokens=tokens)
    try:
        want = reference(budget, room, observing)
    except ContextLengthExceeded as err:
        with pytest.raises(ContextLengthExceeded) as got:
            budget.max_tokens(room, observing)
        assert str(got.value) == str(err)
        return
    assert budget.max_tokens(room, observing) == want
