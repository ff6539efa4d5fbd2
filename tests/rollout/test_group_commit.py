"""The group commit: episodes written in the order handed over, each future settled once its
episode is on disk (or refused), and the loop yielded to the episodes in flight while a
batch is encoded, once per ``SLICE_S`` held."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from gymforge.rollout.output import GroupCommit


class _Writer:
    """``encode_episode`` and ``write_lines``, as the group commit uses them: an episode is
    its list of line strings; one named ``bad`` is refused."""

    def __init__(self) -> None:
        self.encoded = 0
        self.written: list[list[str]] = []

    def encode_episode(self, records: list[dict[str, Any]]) -> list[str]:
        if any(r.get("bad") for r in records):
            raise ValueError("refused")
        self.encoded += 1
        return [str(r["n"]) for r in records]

    def write_lines(self, lines: list[str]) -> None:
        self.written.append(list(lines))


async def _commit(slice_s: float, episodes: int) -> tuple[_Writer, list[int]]:
    """Hand ``episodes`` over at once and, beside the commit, note how many were encoded
    each time the loop ran another task, until all are on disk."""
    writer = _Writer()
    commit = GroupCommit(writer)  # type: ignore[arg-type]
    commit.SLICE_S = slice_s
    futures = [commit.submit([{"n": i}]) for i in range(episodes)]
    seen: list[int] = []

    async def watch() -> None:
        while not all(f.done() for f in futures):
            seen.append(writer.encoded)
            await asyncio.sleep(0)

    await asyncio.gather(watch(), *futures)
    await commit.drain()
    return writer, seen


def test_a_batch_yields_between_episodes_once_it_has_held_the_loop_its_slice() -> None:
    writer, seen = asyncio.run(_commit(0.0, 20))  # every episode is past the slice
    assert writer.written == [[str(i) for i in range(20)]]  # one batch, in order, one write
    assert len({n for n in seen if 0 < n < 20}) >= 10, seen  # others ran in between


def test_a_batch_within_its_slice_is_encoded_without_yielding() -> None:
    writer, seen = asyncio.run(_commit(math.inf, 20))
    assert writer.written == [[str(i) for i in range(20)]]
    assert not [n for n in seen if 0 < n < 20], seen  # encoded in one go, then written


@pytest.mark.parametrize("slice_s", [0.0, math.inf])
def test_a_refused_episode_fails_alone_and_the_rest_are_written_in_order(
    slice_s: float,
) -> None:
    async def go() -> tuple[_Writer, list[BaseException | None]]:
        writer = _Writer()
        commit = GroupCommit(writer)  # type: ignore[arg-type]
        commit.SLICE_S = slice_s
        futures = [commit.submit([{"n": i, "bad": i == 3}]) for i in range(6)]
        await asyncio.gather(*futures, return_exceptions=True)
        await commit.drain()
        return writer, [f.exception() for f in futures]

    writer, errors = asyncio.run(go())
    assert [line for batch in writer.written for line in batch] == ["0", "1", "2", "4", "5"]
    assert [type(e).__name__ if e else None for e in errors] == [
        None,
        None,
        None,
        "ValueError",
        None,
        None,
    ]
