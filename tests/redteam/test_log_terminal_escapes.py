"""Attack: rewrite what an engineer sees on the terminal with escape sequences in a file.

A trajectory file from elsewhere names its episodes (``episode_id``, ``task_id``), and the
CLI's integrity errors quote those names. A forger puts terminal escape sequences there:
erase the line, move the cursor to its start, print ``ok: 2 episodes verified`` and conceal
the rest. ``verify-log`` still exits 1, but on a terminal the error line reads as a pass:
the engineer who looks, rather than the script that checks the exit code, accepts the
forged file (and exports it for training). Success would mean text from a file steering
the terminal; the defence shows every control character of a failure message as an escape.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from redteam_logs import named_file
from typer.testing import CliRunner

from gymforge.cli import app

ESCAPES = "\x1b[2K\x1b[1Gok: 2 episodes verified\x1b[8m"
"""Erase the line, go to its first column, print a pass, conceal whatever follows."""


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return named_file(tmp_path_factory.mktemp("escapes"), ESCAPES)


@pytest.mark.parametrize("command", ["verify-log", "replay", "export"])
def test_failure_messages_show_control_characters_as_escapes(
    forged: Path, tmp_path: Path, command: str
) -> None:
    args = [command, str(forged)]
    if command == "export":
        args += ["--format", "sft", "--out", str(tmp_path / "sft.jsonl")]
    env = {"NO_COLOR": "1", "FORCE_COLOR": None, "GYMFORGE_SEAL_KEY": None}
    out = CliRunner(env=env).invoke(app, args)
    assert out.exit_code == 1, out.stderr
    assert "\x1b" not in out.stderr, repr(out.stderr)
    assert "integrity check failed" in out.stderr and "\\x1b[2K" in out.stderr, out.stderr


def test_log_warnings_show_control_characters_as_escapes() -> None:
    """The runner's warnings quote a server's error body, which may echo the agent's text:
    printed by the CLI, its escape sequences are shown, not obeyed."""
    import subprocess
    import sys

    code = (
        "import logging, gymforge.cli as cli; cli.visible_logs(); "
        "logging.getLogger('gymforge.runner').warning("
        "'job 3: attempt 1 failed: %s', 'HTTP 500: ' + chr(27) + '[2K' + chr(27) + '[1Gok')"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    assert done.stderr == "job 3: attempt 1 failed: HTTP 500: \\x1b[2K\\x1b[1Gok\n"
