"""Attack: forge a line of the terminal with line breaks in a file's names.

Escape sequences in a trajectory file's names are shown as escapes in the CLI's failure line
(``test_log_terminal_escapes.py``), but a line break was kept: an ``episode_id`` that holds
fifty newlines and then ``ok: 2 episodes verified`` pushes the ``error:`` line off the
screen and prints a pass at the start of a line of its own, as gymforge prints it. A log
warning quoting a server's error body, which may echo the agent's text, did the same.
Unicode's line and paragraph separators (U+2028, U+2029), which many terminals and log
viewers break lines on, and the bidirectional marks (U+200E, U+200F, U+061C) went through
as they were. Success is a line of the failure message that gymforge did not write; the
defence keeps only a message's first few line breaks, each following line indented under
the error (``wording.visible_message``), shows the rest as ``\\n`` (a warning is one line),
and those characters as escapes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from redteam_logs import named_file
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.wording import MESSAGE_LINES

FORGED = "\n" * 50 + "ok: 2 episodes verified\u2028\u2029\u200e\u200f\u061c"
"""Push the error line away, print a pass at a line's start."""


@pytest.fixture(scope="module")
def forged(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return named_file(tmp_path_factory.mktemp("lines"), FORGED)


def test_a_failure_message_cannot_forge_a_line(forged: Path) -> None:
    # its first few line breaks are kept, each following line indented under the error
    # (a message may show a source line or a hint on a line of its own); the rest, and
    # Unicode's separators and marks, are escapes: no line starts with text gymforge did not
    # write, and the error stays within a few lines of the end
    env = {"NO_COLOR": "1", "FORCE_COLOR": None, "GYMFORGE_SEAL_KEY": None}
    out = CliRunner(env=env).invoke(app, ["verify-log", str(forged)])
    assert out.exit_code == 1, out.stderr
    assert out.stderr.startswith("error: integrity check failed")
    lines = out.stderr.splitlines()
    assert len(lines) <= 1 + MESSAGE_LINES, lines
    assert all(line.startswith("  ") or not line for line in lines[1:]), lines
    assert "\\nok: 2 episodes verified\\u2028\\u2029\\u200e\\u200f\\u061c" in lines[-1]


def test_a_log_warning_is_one_line() -> None:
    code = (
        "import logging, gymforge.cli as cli; cli.visible_logs(); "
        "logging.getLogger('gymforge.runner').warning("
        "'job 3: attempt 1 failed: %s', 'HTTP 500: ' + chr(10) * 50 + 'ok: run complete')"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True
    )
    assert done.stderr == "job 3: attempt 1 failed: HTTP 500: " + "\\n" * 50 + "ok: run complete\n"
