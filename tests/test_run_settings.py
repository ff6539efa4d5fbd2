"""Configuration is passed, not set: two runs in one process do not share configuration or
resources.

The CLI used to set ``GYMFORGE_SANDBOX``, ``GYMFORGE_TOKEN`` and
``GYMFORGE_UNSAFE_NO_ISOLATION`` in ``os.environ`` for deep layers to read, and the math pool
and the code judge's sandbox were process-wide singletons; so a second command or run in the
same process (a notebook, a test session, a training loop calling ``run`` twice) inherited the
first one's sandbox choice, token, unsafe mode and pools. Now a command's flags become a
``Settings`` object passed down, and a run owns its ``RunServices`` (closed at its end).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core.errors import ConfigError
from gymforge.envs.ledger import LedgerEnv
from gymforge.rollout.executors import LocalExecutor
from gymforge.rollout.runner import run
from gymforge.rollout.scripted import OraclePolicy
from gymforge.rollout.spec import RunSpec
from gymforge.verify.math import MathVerifier

VARS = ("GYMFORGE_SANDBOX", "GYMFORGE_TOKEN", "GYMFORGE_UNSAFE_NO_ISOLATION")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # recorded by monkeypatch, so whatever a command leaves behind is undone after the test
    for name in VARS:
        monkeypatch.setenv(name, "")


def cli(*args: str | Path) -> tuple[int, str]:
    result = CliRunner(env={"NO_COLOR": "1"}).invoke(app, [str(a) for a in args])
    return result.exit_code, result.stderr


def test_command_flags_leave_the_process_environment_as_it_was(tmp_path: Path) -> None:
    before = dict(os.environ)
    cli("run", "ws://127.0.0.1:9", "--token", "s3cret", "--policy", "oracle", "-n", "1",
        "--out", tmp_path / "remote")  # fmt: skip
    cli("grade", "code", "--answers", tmp_path / "missing.jsonl", "--out", tmp_path / "v.jsonl",
        "--unsafe-no-isolation")  # fmt: skip
    cli("qa", "ws://127.0.0.1:9", "--token", "s3cret", "--check", "baselines")
    changed = {k for k in {*before, *os.environ} if before.get(k) != os.environ.get(k)}
    # (a third-party library's own variable, such as hypothesis's cache directory, may be
    # given a default: gymforge.settings.library_default; never a gymforge setting)
    assert {k for k in changed if k.startswith("GYMFORGE_")} == set()


def test_a_sandbox_choice_does_not_reach_the_next_run(tmp_path: Path) -> None:
    def recorded_sandbox(out: Path, *flags: str) -> Any:
        code, err = cli("run", "ledger", "--policy", "oracle", "-n", "1", "--out", out, *flags)
        assert code == 0, err
        return json.loads((out / "manifest.json").read_text())["sandbox"]["kind"]

    assert recorded_sandbox(tmp_path / "one", "--sandbox", "docker") == "docker"
    assert recorded_sandbox(tmp_path / "two") == "local"


def test_a_token_does_not_reach_the_next_client(tmp_path: Path) -> None:
    from gymforge.serve.http import resolve_token

    code, _ = cli("run", "ws://127.0.0.1:9", "--token", "s3cret", "--policy", "oracle",
                  "-n", "1", "--out", tmp_path / "remote")  # fmt: skip
    assert code != 0  # nothing listens there: the command fails, after taking the token
    assert resolve_token(None) is None  # a later client in this process has no token


def test_two_runs_do_not_share_a_math_pool() -> None:
    seen: list[tuple[int, Any]] = []

    async def two_runs() -> None:
        jobs = [(LedgerEnv.tasks.sample(1, 5, "train")[0], 0)]
        for n in (1, 2):
            spec = RunSpec(env="ledger", policy="oracle", jobs=jobs, out=None)

            def note(_record: dict[str, Any], n: int = n) -> None:
                seen.append((n, MathVerifier().pool))  # the pool a verifier here would use

            await run(spec, LocalExecutor(LedgerEnv, OraclePolicy), on_episode=note)

    asyncio.run(two_runs())
    (first_run, first), (second_run, second) = seen
    assert (first_run, second_run) == (1, 2)
    assert first is not second
    assert first.closed  # closed by the run that owned it, at its end


# ---- the settings object and the services (what the tests above rest on) -----------------
def test_settings_from_the_environment_and_back() -> None:
    from gymforge.settings import Settings

    env = {
        "GYMFORGE_SANDBOX": " Docker ",
        "GYMFORGE_UNSAFE_NO_ISOLATION": "1",
        "GYMFORGE_TOKEN": "tok-123",
        "GYMFORGE_SEAL_KEY": "key-456",
        "GYMFORGE_SANDBOX_WORKERS": "3",
        "GYMFORGE_MATH_WORKERS": "",
    }
    s = Settings.from_environ(env)
    assert (s.sandbox, s.unsafe_no_isolation, s.token, s.seal_key) == (
        "docker",
        True,
        "tok-123",
        b"key-456",
    )
    assert (s.sandbox_workers, s.math_workers) == (3, None)
    assert Settings.from_environ({"GYMFORGE_UNSAFE_NO_ISOLATION": "0"}).unsafe_no_isolation is False
    # what a child process gets: the same settings, without the secrets
    assert Settings.from_environ(s.child_vars()) == replace(s, seal_key=None, token=None)
    assert "tok-123" not in repr(s) and "key-456" not in repr(s)  # secrets are never printed
    with pytest.raises(ConfigError, match="GYMFORGE_MATH_WORKERS='two'"):
        Settings.from_environ({"GYMFORGE_MATH_WORKERS": "two"})
    with pytest.raises(ConfigError, match="unknown sandbox backend 'vm'"):
        Settings.from_environ({"GYMFORGE_SANDBOX": "vm"})


def test_run_services_belong_to_their_run() -> None:
    from gymforge.settings import Settings
    from gymforge.verify.services import RunServices, active, current, run_services

    outer = Settings(math_workers=1)
    with RunServices(outer) as mine:
        assert current() is mine and active() is mine
        pool = mine.math_pool()
        with run_services() as same:  # a run inside a command uses the command's services
            assert same is mine
        with run_services(Settings(math_workers=2)) as other:  # other settings: its own
            assert other is not mine and other.math_pool() is not pool
        assert other.closed and not mine.closed and current() is mine
    assert mine.closed and pool.closed and active() is None
    with pytest.raises(RuntimeError, match="closed"):
        mine.math_pool()


def test_outside_any_run_the_library_default_follows_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from gymforge.verify.services import current

    monkeypatch.setenv("GYMFORGE_MATH_WORKERS", "1")
    first = current()
    assert first.settings.math_workers == 1 and current() is first
    monkeypatch.setenv("GYMFORGE_MATH_WORKERS", "2")
    second = current()
    assert second is not first and first.closed and second.settings.math_workers == 2
