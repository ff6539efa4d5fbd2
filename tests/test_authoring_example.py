"""The authoring guide's example environment: one file that ``docs/authoring.md`` includes
verbatim, at most 70 lines, importing from ``gymforge.authoring`` only, and passing every QA
check (issue 33: a newcomer's two-tool environment needed 15 names from 6 modules)."""

from __future__ import annotations

import re
from pathlib import Path

from gymforge.qa import QATarget, run_qa

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "authoring" / "shelves.py"
GUIDE = ROOT / "docs" / "authoring.md"
MAX_LINES = 70


def test_the_guide_includes_the_example_verbatim() -> None:
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    assert EXAMPLE.read_text() in blocks, "docs/authoring.md's example differs from the file"


def test_the_example_is_short() -> None:
    lines = EXAMPLE.read_text().splitlines()
    assert len(lines) <= MAX_LINES, f"{len(lines)} lines"


def test_the_example_passes_every_qa_check() -> None:
    target = QATarget.load(f"{EXAMPLE}:ShelvesEnv")
    report = run_qa(target)
    failed = {c.name: c.details for c in report.checks if not c.passed}
    assert not failed, failed
    assert all(c.applicable for c in report.checks)
    assert len(report.checks) == 10
