"""The zygote's handle on its fork template, outside any sandbox (plain processes of this
uid): a template that stops answering is given up within the timeout, with the job's part in
it recorded, and a fresh one serves."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from gymforge.sandbox import template as tm


@pytest.fixture
def tpl(tmp_path: Path) -> Iterator[tm.ForkTemplate]:
    t = tm.ForkTemplate({"jobdir": str(tmp_path), "preimport": []})
    t.start()
    yield t
    t.stop()


@contextlib.contextmanager
def spawn_one(t: tm.ForkTemplate) -> Iterator[int]:
    """A child from ``t`` on fresh pipes, waiting for a job that never comes; killed after."""
    pipes = {n: os.pipe() for n in tm.NAMES}
    theirs = {n: p[1] if n in ("stdout", "stderr", "ctl") else p[0] for n, p in pipes.items()}
    pid = 0
    try:
        pid = t.spawn(theirs)
        yield pid
    finally:
        if pid:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        for r, w in pipes.values():
            os.close(r)
            os.close(w)


def test_a_template_forks_children_that_are_not_itself(tpl: tm.ForkTemplate) -> None:
    assert tpl.usable() and tpl.damaged() is None
    with spawn_one(tpl) as pid:
        assert pid not in (tpl.pid, os.getpid())
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
        assert b"template.py" in cmd  # a fork of the template, not of this process


def test_a_stopped_template_is_given_up_blamed_and_replaced(
    tpl: tm.ForkTemplate, monkeypatch: pytest.MonkeyPatch
) -> None:
    os.kill(tpl.pid, signal.SIGSTOP)
    # Pending, then the stopped state; in the instant the template takes the signal (it is
    # no longer pending, the template not yet stopped: seen once on a loaded machine),
    # neither shows, so the test looks again, a bounded number of times.
    for _ in range(500):
        if tpl.damaged() is not None:
            break
        time.sleep(0.01)
    assert tpl.damaged() == "the fork template was killed or stopped"
    monkeypatch.setattr(tm, "SPAWN_TIMEOUT", 0.2)
    with pytest.raises(tm.TemplateDown), spawn_one(tpl):
        pass
    assert not tpl.usable() and tpl.fault == "the fork template was killed or stopped"
    tpl.restart()
    assert tpl.usable() and tpl.fault is None and tpl.restarts == 1
    with spawn_one(tpl) as pid:
        assert pid > 0


def test_a_killed_template_is_seen_at_once(tpl: tm.ForkTemplate) -> None:
    os.kill(tpl.pid, signal.SIGKILL)
    assert tpl.damaged() is not None  # pending or dead: either way, before it is reaped
    with pytest.raises(tm.TemplateDown), spawn_one(tpl):
        pass
    assert not tpl.usable() and tpl.fault is not None
