"""The progress bar of ``run``, ``eval`` and ``calibrate`` (on stderr).

It counts every episode of the run against the total, resumed ones included (the bar of a
resumed run starts where the file left off, and its label says how many were resumed), and
shows the success rate and mean reward as the summary table will: the same
``rollout.summary.Tally`` over the same episodes, the same ``core.wording`` rounding.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gymforge.rollout.summary import Tally
from gymforge.wording import decimal, percent


class EpisodeProgress:
    """The runner's ``on_episode`` (call it) and ``on_resumed`` (:meth:`resumed`)."""

    def __init__(self, progress: Progress, label: str, total: int) -> None:
        self.progress, self.label = progress, label
        self.tally = Tally()
        self.tokens = 0
        self.start = time.perf_counter()
        self.bar = progress.add_task(label, total=total, rate="-", reward="-", tps="0")
        self._show()

    def _show(self, advance: int = 0, description: str | None = None) -> None:
        tps = self.tokens / max(time.perf_counter() - self.start, 1e-9)
        self.progress.update(
            self.bar,
            advance=advance,
            description=description,
            rate=percent(self.tally.success_rate),
            reward=decimal(self.tally.mean_reward),
            tps=f"{tps:,.0f}",
        )

    def resumed(self, episodes: list[dict[str, Any]]) -> None:
        """Count the episodes a resumed run already holds (no tokens per second: they were
        played before this process started)."""
        for e in episodes:
            self.tally.add(e)
        if episodes:
            self._show(len(episodes), f"{self.label} ({len(episodes)} resumed)")

    def __call__(self, episode: dict[str, Any]) -> None:
        self.tally.add(episode)
        self.tokens += episode.get("tokens", 0)
        self._show(1)


@contextmanager
def progress_bar(
    label: str, total: int, quiet: bool, console: Console | None = None
) -> Iterator[EpisodeProgress]:
    """A stderr progress bar with success rate, mean reward and tokens per second."""
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(
            "success {task.fields[rate]}  reward {task.fields[reward]}  {task.fields[tps]} tok/s"
        ),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
    ) as progress:
        yield EpisodeProgress(progress, label, total)
