"""Issue 34, finding 5: the progress bar counts resumed episodes and shows the summary
table's figures with the table's rounding; every message template touched reads as English
(one ``plural``); no Python tuple, "step step", "every all row", "(1 rows)" or "once" under
``--epochs 2``; building the project's and a scaffolded package's metadata warns nothing
about the licence.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from wf_helpers import cli

from gymforge.cli.common import dataset_note_text
from gymforge.registry.resolve import recorded_env
from gymforge.rollout.reproduce import episode_label
from gymforge.rollout.rundir import prepare_out
from gymforge.scaffold import scaffold_package
from gymforge.trajectory.seal import describe, record_label
from gymforge.wording import decimal, percent, plural, times

ROOT = Path(__file__).resolve().parents[2]
BAR = re.compile(
    r"^(?P<label>.*?) [━╸╺ ]*\s*(?P<done>\d+)/(?P<total>\d+) success (?P<rate>\S+)"
    r"\s+reward (?P<reward>\S+)"
)
BAD = [
    re.compile(r"\b1 (rows|episodes|steps|rollouts|tasks)\b"),
    re.compile(r"\b(0|[2-9]|\d\d+) (row|episode|step|rollout|task)\b(?!s| record| \d)"),
    re.compile(r"\bstep step\b"),
    re.compile(r"\bevery all\b"),
    re.compile(r"\('[^']*', \d+, \d+\)"),  # a Python tuple
]


def bar_line(stderr: str) -> re.Match[str]:
    for line in stderr.splitlines():
        m = BAR.match(line.strip())
        if m:
            return m
    raise AssertionError(f"no progress bar in:\n{stderr}")


def table_cells(stderr: str) -> list[str]:
    row = next(line for line in stderr.splitlines() if line.startswith("│ ledger"))
    return [c.strip() for c in row.strip("│").split("│")]


def test_the_bar_counts_resumed_episodes_and_agrees_with_the_table(tmp_path: Path) -> None:
    out = tmp_path / "r"
    first = cli("run", "ledger", "-p", "skilled:1=0.7,2=0.5,3=0.3", "-n", "6", "--out", out)
    assert first.code == 0, first.stderr
    bar, cells = bar_line(first.stderr), table_cells(first.stderr)
    assert (bar["done"], bar["total"]) == ("6", "6")
    assert bar["rate"] == cells[3] and bar["reward"] == cells[5], (bar.groupdict(), cells)

    again = cli(
        "run", "ledger", "-p", "skilled:1=0.7,2=0.5,3=0.3", "-n", "6", "--out", out, "--resume"
    )
    assert again.code == 0, again.stderr
    bar = bar_line(again.stderr)
    assert (bar["done"], bar["total"]) == ("6", "6"), again.stderr  # not 0/6
    assert "(6 resumed)" in bar["label"]
    cells = table_cells(again.stderr)
    assert bar["rate"] == cells[3] and bar["reward"] == cells[5], (bar.groupdict(), cells)

    grown = cli(
        "run", "ledger", "-p", "skilled:1=0.7,2=0.5,3=0.3", "-n", "8", "--out", out, "--resume"
    )
    bar = bar_line(grown.stderr)
    assert (bar["done"], bar["total"]) == ("8", "8") and "(6 resumed)" in bar["label"]


def test_plural_times_and_the_one_rounding() -> None:
    assert [plural(n, "row") for n in (0, 1, 2)] == ["0 rows", "1 row", "2 rows"]
    assert plural(2, "policy", "policies") == "2 policies"
    assert [times(n) for n in (1, 2, 3)] == ["once", "twice", "3 times"]
    assert percent(0.9995) == "100.0%" and percent(None) == "-" and decimal(0.9705) == "0.971"


def rendered_messages(tmp_path: Path) -> list[str]:
    """Every message template touched, rendered with the counts that used to read wrong."""
    out = []
    for split in ("train", "heldout", "all"):
        for n, count in ((None, 1), (None, 3), (1, 1), (2, 2)):
            for epochs, group in ((1, 1), (2, 1), (1, 2), (3, 4)):
                out.append(dataset_note_text("rows@0123456789ab", n, count, split, epochs, group))
    step = {"record": "step", "step": 2, "episode_id": "e"}
    out += [record_label(step), describe(5, step), describe(9, {"record": "episode"})]
    out.append(episode_label(("ledger.transfer/v1/d1/s5", 0, 1)))
    for env in ("fx", "fx.py:FxEnv"):
        with pytest.raises(Exception) as info:
            recorded_env(env, "run/trajectories.jsonl")
        out.append(str(info.value))
    (tmp_path / "held").mkdir()
    (tmp_path / "held" / "trajectories.jsonl").write_text("")
    for resumable in (True, False):
        with pytest.raises(Exception) as info:
            prepare_out(tmp_path / "held", {}, resume=False, overwrite=False, resumable=resumable)
        out.append(str(info.value))
    return out


def test_every_touched_message_reads_right(tmp_path: Path) -> None:
    messages = rendered_messages(tmp_path)
    for text in messages:
        for bad in BAD:
            assert not bad.search(text), f"{bad.pattern!r} in {text!r}"
    notes = [m for m in messages if m.startswith("running every")]
    assert "running every row of rows@0123456789ab once, in file order (1 row)" in notes
    assert any("twice" in m for m in notes) and not any(
        "once" in m for m in notes if "twice" in m or "3 times" in m
    )
    assert "line 5 (step 2 of episode e)" in messages
    assert "ledger.transfer/v1/d1/s5 seed 0 rollout 1" in messages
    assert "--resume" not in messages[-1] and "--resume" in messages[-2]


@pytest.mark.parametrize("which", ["project", "scaffold"])
def test_building_metadata_warns_nothing_about_the_licence(tmp_path: Path, which: str) -> None:
    if which == "project":
        src = tmp_path / "gymforge"
        src.mkdir()
        for name in ("pyproject.toml", "README.md"):
            (src / name).write_bytes((ROOT / name).read_bytes())
        (src / "gymforge").mkdir()
        (src / "gymforge" / "__init__.py").write_text("")
    else:
        scaffold_package("pk", tmp_path, "0.1.0")
        src = next(p for p in tmp_path.iterdir() if (p / "pyproject.toml").is_file())
    code = (
        "from setuptools import build_meta; import sys; "
        "build_meta.prepare_metadata_for_build_wheel(sys.argv[1])"
    )
    (tmp_path / "meta").mkdir()
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", code, str(tmp_path / "meta")],
        cwd=src,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "license" not in done.stderr.lower(), done.stderr


NOUNS = "episode|row|task|step|rollout|answer|error|variant|file|line|record|attack|check|call"
COUNTED = re.compile(rf"^ ({NOUNS})s\b")
CHECKED = [
    *sorted((ROOT / "gymforge" / "cli").glob("*.py")),
    ROOT / "gymforge" / "rollout" / "reproduce.py",
    ROOT / "gymforge" / "trajectory" / "seal.py",
    ROOT / "gymforge" / "evaluate" / "browser.py",
]


def counted_plurals(path: Path) -> list[str]:
    """f-strings of ``path`` that put a number straight before a plural noun ("{n} rows"),
    which reads "1 rows" when n is 1: ``plural(n, "row")`` says it right. "{a}/{b} rows" and
    "{a} of {b} rows" are left alone (the total is what the noun counts)."""
    import ast

    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.JoinedStr):
            continue
        parts = node.values
        for i, part in enumerate(parts[1:], 1):
            before = parts[i - 1]
            earlier = parts[i - 2] if i >= 2 else None
            if not (isinstance(before, ast.FormattedValue) and isinstance(part, ast.Constant)):
                continue
            if not COUNTED.match(str(part.value)):
                continue
            if isinstance(earlier, ast.Constant) and str(earlier.value).endswith((" of ", "/")):
                continue
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)[:90]}")
    return found


def test_no_message_puts_a_bare_count_before_a_plural_noun() -> None:
    found = [line for path in CHECKED for line in counted_plurals(path)]
    assert not found, "use core.wording.plural:\n" + "\n".join(found)
