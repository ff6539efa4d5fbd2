"""``rollout.summary.Tally``: the progress bar asks for the success rate and the mean reward
after every episode, so each answer folds in only the episodes added since the last one
(a whole-list pass per episode made a 100,000-episode run spend most of its time there),
and every answer is the whole-list computation's, to the bit."""

from __future__ import annotations

import math
from collections.abc import Callable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gymforge.rollout import summary
from gymforge.rollout.summary import Tally, summarize
from gymforge.trajectory.outcome import VERIFIER_ERROR, classify_outcome, count_outcomes
from tests.episode_rows import episode_row


def episode(i: int, success: bool, reason: str | None, steps: int, reward: float) -> dict[str, Any]:
    return episode_row(
        i,
        success=success,
        reason=reason,
        steps=steps,
        reward=reward,
        components={"task": 1.0},
        seed=i % 2,
    )


REWARDS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # huge, tiny, subnormal, -0.0
    st.floats(-1.0, 1.0),
    st.sampled_from(
        [
            0.0,
            1.0,
            0.1,
            1e16,
            -1e16,
            5e-324,
            2.0**512,
            1.7e308,
            -1.7e308,
            math.inf,
            -math.inf,
            math.nan,
        ]
    ),
)
ROWS = st.lists(
    st.tuples(
        st.booleans(),
        st.sampled_from(["wrong", VERIFIER_ERROR, "verifier_error: KeyError", None]),
        st.integers(0, 2),
        REWARDS,
        st.booleans(),  # ask for the figures after this episode
    ),
    max_size=40,
)


def whole_list(episodes: list[dict[str, Any]]) -> tuple[float, Callable[[], float]]:
    """The figures as a single pass over every episode gives them (the mean to be computed).
    With a reward that is not finite the mean is what IEEE makes of those rewards alone
    (inf, -inf or nan), as fsum gives it when it does not raise. Where fsum raises for
    finite rewards (a sum or partial sum past the largest float) the mean is the exact
    sum's float divided by their number, or the exact mean rounded once when that sum
    itself has no float."""
    outcomes = [classify_outcome(e) for e in episodes]
    rewards = [float(e["reward"]) for e, o in zip(episodes, outcomes, strict=True) if o.counted]
    rate = count_outcomes(outcomes).success_rate or 0.0

    def mean() -> float:
        if not rewards:
            return 0.0
        special = [r for r in rewards if not math.isfinite(r)]
        if special:
            return sum(special) / len(rewards)
        try:
            return math.fsum(rewards) / len(rewards)
        except OverflowError:
            exact = sum(map(Fraction, rewards))
            try:
                return float(exact) / len(rewards)
            except OverflowError:
                return float(exact / len(rewards))

    return rate, mean


def exactly(figure: Callable[[], float]) -> str:
    """The figure to the bit (repr tells -0.0 from 0.0), or the error it raises."""
    try:
        return repr(figure())
    except OverflowError:  # fsum's, past the largest float
        return "OverflowError"


@given(ROWS)
def test_every_answer_is_the_whole_lists(
    rows: list[tuple[bool, str | None, int, float, bool]],
) -> None:
    tally = Tally()
    seen: list[dict[str, Any]] = []
    for i, (success, reason, steps, reward, ask) in enumerate(rows):
        seen.append(episode(i, success, reason, steps, reward))
        tally.add(seen[-1])
        if ask:
            assert tally.success_rate == whole_list(seen)[0]
            assert exactly(lambda: tally.mean_reward) == exactly(whole_list(seen)[1])
            assert tally.counts == count_outcomes(tally.outcomes)
    expected = exactly(whole_list(seen)[1])
    assert exactly(lambda: Tally(seen).mean_reward) == expected
    assert Tally(seen).success_rate == whole_list(seen)[0]
    if seen:
        assert exactly(lambda: summarize(seen)["mean_reward"]) == expected


def test_sums_that_round_differently_one_by_one_are_exact() -> None:
    """A running float sum would drift here; the tally stays fsum's."""
    rewards = [1e16, 1.0, -1e16, 0.1] * 50 + [1e-300, 3.0, -3.0]
    tally = Tally()
    for i, r in enumerate(rewards):
        tally.add(episode(i, False, "wrong", 1, r))
        assert tally.mean_reward == math.fsum(rewards[: i + 1]) / (i + 1)
    assert sum(rewards) / len(rewards) != tally.mean_reward  # the drift this guards against


def test_finite_rewards_always_have_a_mean() -> None:
    """fsum refuses a sum whose partial overflows although the total would not, and a total
    past the largest float; the mean of finite rewards is finite either way, and the tally
    gives it (a progress bar that raised here would stop the run)."""
    for rewards, expected in [
        ([1.7e308, 1.7e308, -1.7e308], 1.7e308 / 3),
        ([1.7e308, 1.7e308], 1.7e308),
        ([1.7e308, 1.7e308, 1.0], float((2 * Fraction(1.7e308) + 1) / 3)),
    ]:
        with pytest.raises(OverflowError):
            math.fsum(rewards)
        tally = Tally()
        for i, r in enumerate(rewards):
            tally.add(episode(i, False, "wrong", 1, r))
            assert math.isfinite(tally.mean_reward)
        assert tally.mean_reward == expected
        assert (
            summarize([episode(i, False, "wrong", 1, r) for i, r in enumerate(rewards)])[
                "mean_reward"
            ]
            == expected
        )


class CountingList(list[Any]):
    """A list that counts the items its slices hand out."""

    handed = 0

    def __getitem__(self, key: Any) -> Any:
        got = super().__getitem__(key)
        if isinstance(key, slice):
            CountingList.handed += len(got)
        return got

    def __iter__(self) -> Any:
        CountingList.handed += len(self)
        return super().__iter__()


def test_asking_after_every_episode_reads_each_episode_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    n = 2_000
    read = 0
    real = count_outcomes

    def counting(outcomes: Any) -> Any:
        nonlocal read
        outcomes = list(outcomes)
        read += len(outcomes)
        return real(outcomes)

    monkeypatch.setattr(summary, "count_outcomes", counting)
    tally = Tally()
    tally.outcomes, tally.rewards = CountingList(), CountingList()
    CountingList.handed = 0
    for i in range(n):
        tally.add(episode(i, i % 3 == 0, "wrong", 1, (i % 7) / 7))
        assert tally.success_rate >= 0.0 and tally.mean_reward >= 0.0
    assert read == n  # a whole-list count per answer reads n * (n + 1) / 2
    assert CountingList.handed == 2 * n  # each outcome once, each reward once
    assert tally.success_rate == (n + 2) // 3 / n
