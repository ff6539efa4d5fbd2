"""``harness-cmd:`` confinement: where bubblewrap cannot confine the harness, the policy
refuses to start in one line naming what is missing; and what a confined harness sees."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.sandbox.backend import IsolationUnavailableError
from gymforge.sandbox.confine import confinement_problem
from gymforge.serve.harness.confine import gymforge_paths, harness_confinement
from gymforge.serve.harness.policy import harness_policy_factory


@pytest.fixture
def no_bwrap(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[str]:
    missing = str(tmp_path / "no-bwrap-here")
    monkeypatch.setenv("GYMFORGE_BWRAP", missing)
    confinement_problem.cache_clear()
    yield missing
    confinement_problem.cache_clear()


def test_no_bubblewrap_means_no_harness_cmd(no_bwrap: str) -> None:
    with pytest.raises(IsolationUnavailableError) as err:
        harness_policy_factory("harness-cmd:true", base_url="http://127.0.0.1:9/v1")
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("harness-cmd: cannot confine the harness here:")
    assert f"GYMFORGE_BWRAP={no_bwrap} is not an executable bubblewrap" in message
    # an in-process harness: (the user's own code, run by the runner) needs no sandbox
    harness_policy_factory("harness:json:dumps", base_url="http://127.0.0.1:9/v1")


def test_the_cli_refuses_in_one_line(no_bwrap: str, tmp_path: Path) -> None:
    args = ["run", "ledger", "-n", "1", "--policy", "harness-cmd:true", "--base-url"]
    r = CliRunner().invoke(app, [*args, "http://127.0.0.1:9/v1", "--out", str(tmp_path / "r")])
    assert r.exit_code != 0
    assert "cannot confine the harness here" in r.output
    assert "not an executable bubblewrap" in r.output
    assert not (tmp_path / "r" / "trajectories.jsonl").exists()


def test_a_harness_sees_only_what_it_is_given(tmp_path: Path) -> None:
    """The confinement of ``python agent.py``: the interpreter, the named file, its own
    episode directory; the seal key and gymforge hidden."""
    os.environ["GYMFORGE_SEAL_KEY"] = "never-in-a-harness"
    try:
        c = harness_confinement(
            f"{sys.executable} {tmp_path / 'agent.py'} --out={tmp_path}",
            tmp_path / "episode",
            {"OPENAI_API_KEY": "episode-token"},
        )
    finally:
        del os.environ["GYMFORGE_SEAL_KEY"]
    assert set(c.env) <= {"PATH", "LANG", "LC_ALL", "HOME", "OPENAI_API_KEY"}
    assert c.env["HOME"] == "/episode"
    assert str(tmp_path) in c.read_only  # named on the command line (--out=PATH)
    assert c.writable == ((str(tmp_path / "episode"), "/episode"),)
    import gymforge

    assert str(Path(gymforge.__path__[0]).resolve()) in c.hidden
    cmd = c.command(["/bin/true"])
    assert "--clearenv" in cmd and "never-in-a-harness" not in json.dumps(cmd)
    assert gymforge_paths([]) == [str(Path(p).resolve()) for p in gymforge.__path__]
