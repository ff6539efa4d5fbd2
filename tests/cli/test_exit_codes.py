"""The CLI's exit-code rule (README, "Commands"; ``gymforge.rollout.failures``), across
commands: a mistake the same input always hits is one ``error:`` line and exit 2, never
retried; a transient failure is retried, and one that retries did not fix is exit 3 with the
``--resume`` command; 1 is kept for a failed integrity check."""

from __future__ import annotations

import json
import socket
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_helpers import cli, one_error_line, policy

from gymforge.cli.common import INFRA_EXIT

KEY = b"exit-codes-test-key-0123456789abcdef"


@pytest.fixture(scope="module")
def scripted_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished oracle run of the reference environment (two episodes)."""
    out = tmp_path_factory.mktemp("scripted") / "run"
    r = cli("run", "ledger", "--policy", "oracle", "-n", "2", "--out", out)
    assert r.code == 0, r.stderr
    return out


@pytest.fixture
def busy_port() -> Iterator[int]:
    """A port on 127.0.0.1 that another socket is listening on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


Args = Callable[[Path, Path, int], list[str | Path]]
"""(tmp_path, a finished scripted run, a busy port) -> the command line."""

MISTAKES: dict[str, tuple[Args, str]] = {
    "run: recorded:R holding none of the tasks": (
        lambda tmp, done, _: [
            "run", "ledger", "-n", "2", "--seed", "7", "--out", tmp / "r",
            "--policy", f"recorded:{done / 'trajectories.jsonl'}",
        ],
        "holds no episode for task",
    ),
    "run: a policy that cannot play the task": (
        lambda tmp, _, __: [
            "run", "ledger", "-n", "2", "--out", tmp / "r", "--policy", policy("cannot_play"),
        ],
        "cannot play",
    ),
    "run: --out is a file": (
        lambda tmp, done, _: ["run", "ledger", "-n", "1", "--out", done / "summary.json"],
        "is a file",
    ),
    "run: --out under a file": (
        lambda tmp, done, _: ["run", "ledger", "-n", "1", "--out", done / "summary.json" / "r"],
        "is a file",
    ),
    "report: --out is a directory": (
        lambda tmp, done, _: ["report", done, "--out", tmp],
        "is a directory",
    ),
    "qa: --report under a file, refused before any check runs": (
        lambda tmp, done, _: ["qa", "ledger", "--report", done / "summary.json" / "qa.json"],
        "is a file",
    ),
    "pack: --outdir is a file": (
        lambda tmp, done, _: ["pack", tmp, "--outdir", done / "summary.json"],
        "is a file",
    ),
    "run: unknown environment": (
        lambda tmp, _, __: ["run", "no-such-env", "-n", "1", "--out", tmp / "r"],
        "no-such-env",
    ),
    "verify-log: an empty file": (
        lambda tmp, _, __: ["verify-log", _empty(tmp)],
        "no episode",
    ),
    "replay: an empty file": (
        lambda tmp, _, __: ["replay", _empty(tmp)],
        "no episode",
    ),
    "export: trl of a scripted run": (
        lambda tmp, done, _: ["export", done, "--format", "trl", "--out", tmp / "x.jsonl"],
        "recorded no token ids",
    ),
    "export: --out is a directory": (
        lambda tmp, done, _: ["export", done, "--format", "sft", "--out", tmp],
        "is a directory",
    ),
    "export: a missing run": (
        lambda tmp, _, __: ["export", tmp / "nothing", "--format", "sft"],
        "does not exist",
    ),
    "hacks: --out under a file": (
        lambda tmp, done, _: ["hacks", done, "--out", done / "summary.json" / "h.md"],
        "is a file",
    ),
    "view: --port out of range": (
        lambda tmp, done, _: ["view", done, "--port", "70000"],
        "cannot bind 127.0.0.1:70000",
    ),
    "view: a busy --port": (
        lambda tmp, done, port: ["view", done, "--port", str(port)],
        "cannot bind",
    ),
    "proxy: a busy --port": (
        lambda tmp, _, port: ["proxy", "--upstream", "http://127.0.0.1:9/v1", "--port", str(port)],
        "cannot bind",
    ),
    "serve: a busy --port": (
        lambda tmp, _, port: ["serve", "ledger", "--port", str(port)],
        "cannot bind",
    ),
}  # fmt: skip


def _empty(tmp: Path) -> Path:
    path = tmp / "empty.jsonl"
    path.write_text("")
    return path


@pytest.mark.parametrize("case", list(MISTAKES))
def test_a_mistake_is_one_error_line_and_exit_2(
    case: str,
    tmp_path: Path,
    scripted_run: Path,
    busy_port: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CANNOT_PLAY_COUNT", str(tmp_path / "starts"))
    make_args, said = MISTAKES[case]
    line = one_error_line(cli(*make_args(tmp_path, scripted_run, busy_port)))
    assert said in line
    assert "--resume" not in line and "infrastructure" not in line


def test_a_mistake_in_an_episode_is_never_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before, a policy's UserError became an InfraError: retried 3 times, then exit 3."""
    starts = tmp_path / "starts"
    monkeypatch.setenv("CANNOT_PLAY_COUNT", str(starts))
    out = tmp_path / "r"
    r = cli("run", "ledger", "-n", "3", "--out", out, "--policy", policy("cannot_play"))
    one_error_line(r)
    assert starts.read_text() == "1"  # one attempt; the run stopped there


TRANSIENT: dict[str, list[str]] = {
    "run": ["run", "ledger", "-n", "2", "--max-retries", "1"],
    "eval": ["eval", "ledger", "-n", "2"],
    "calibrate": ["calibrate", "ledger", "-n", "2", "--samples", "2", "--variants", "0"],
}


@pytest.mark.parametrize("command", list(TRANSIENT))
def test_transient_failures_retries_did_not_fix_exit_3_with_resume(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAKY_TAG", f"{tmp_path}-down")
    monkeypatch.setenv("FLAKY_FAILURES", "100")  # the server stays down
    out = tmp_path / command
    r = cli(*TRANSIENT[command], "--policy", policy("flaky"), "--out", out)
    line = one_error_line(r, INFRA_EXIT)
    assert "infrastructure failures" in line and "--resume" in line


@pytest.mark.parametrize("command", list(TRANSIENT))
def test_transient_failures_a_retry_fixes_exit_0(
    command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FLAKY_TAG", f"{tmp_path}-blip")
    monkeypatch.setenv("FLAKY_FAILURES", "1")  # down for one attempt of each episode
    out = tmp_path / command
    r = cli(*TRANSIENT[command], "--policy", policy("flaky"), "--out", out)
    assert r.code == 0, r.stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["infra_errors"] == 0 and summary["infra_retries"] >= 2
