"""An environment file loaded from two threads at once (two Redis workers in one process
resolve the same ``file.py:Class`` with ``asyncio.to_thread``) is executed once, and no
thread sees it half-executed: a module published in ``sys.modules`` before its body ran
made the second thread report "has no callable" for a class the file defines."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

from gymforge.registry.resolve import load_module, resolve_factory

SLOW_ENV = """
import time
from pathlib import Path

Path({runs!r}).open("a").write("ran\\n")
time.sleep(0.3)  # the body is still running when the other thread asks for the module

from gymforge.envs.ledger import LedgerEnv


class SlowLedger(LedgerEnv):
    pass
"""


def test_a_file_loading_in_one_thread_is_never_seen_half_run_by_another(tmp_path: Path) -> None:
    source = tmp_path / "slow_env_threads.py"
    runs = tmp_path / "runs.log"
    source.write_text(SLOW_ENV.format(runs=str(runs)))
    ref = f"{source}:SlowLedger"
    failures: list[BaseException] = []

    def resolve() -> None:
        try:
            resolve_factory(ref)
        except BaseException as err:  # collected for the assertion below
            failures.append(err)

    first = threading.Thread(target=resolve)
    first.start()
    for _ in range(500):  # until the first thread is inside the file's body
        if runs.exists():
            break
        time.sleep(0.01)
    assert runs.exists(), "the first thread never started running the file"
    second = threading.Thread(target=resolve)
    second.start()
    first.join(30)
    second.join(30)
    try:
        assert failures == []
        assert runs.read_text().splitlines() == ["ran"]  # executed once
    finally:
        sys.modules.pop(source.stem, None)


def test_a_file_that_fails_to_load_is_not_left_in_sys_modules(tmp_path: Path) -> None:
    source = tmp_path / "broken_env_threads.py"
    source.write_text("raise RuntimeError('half a module')\n")
    for _ in range(2):  # the second load runs the file again and fails again
        try:
            load_module(str(source))
        except RuntimeError as err:
            assert "half a module" in str(err)
        else:
            raise AssertionError("a file that raises loaded")
    assert source.stem not in sys.modules
