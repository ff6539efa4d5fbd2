"""`gymforge --version` and a command list whose summaries are not cut mid-sentence."""

from __future__ import annotations

import itertools
import subprocess
import sys

from wf_helpers import cli

import gymforge


def test_version() -> None:
    res = cli("--version")
    assert res.code == 0 and res.stdout == f"gymforge {gymforge.__version__}\n"
    out = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "--version"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0 and out.stdout.strip() == f"gymforge {gymforge.__version__}"


def test_command_summaries_wrap_only_where_the_column_is_full() -> None:
    res = cli("--help")
    assert res.code == 0
    panel = res.stdout.split("Commands", 1)[1]
    rows = [line.strip("│").rstrip(" │") for line in panel.splitlines() if line.startswith("│")]
    indent = min(len(r) - len(r.lstrip()) for r in rows if r.startswith("  "))
    texts = [(r[:indent].strip(), r[indent:].strip()) for r in rows]
    width = max(len(text) for _, text in texts)
    for (_, text), (name, following) in itertools.pairwise(texts):
        if name:  # the next row starts another command
            continue
        # the summary went on to a new row: the next word did not fit on this one
        assert len(text) + 1 + len(following.split()[0]) > width, (text, following)
