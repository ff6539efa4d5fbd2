"""The CLI's error contract: gymforge's own errors print one line (exit 2, or 1 for a failed
integrity check); any other exception, a ``ValueError`` included, is a bug and keeps its
traceback. Bad input files are turned into gymforge errors where they are read."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gymforge.cli import app

ANSI = re.compile(r"\x1b\[[0-9;]*m")
ROOT = Path(__file__).resolve().parents[1]


def cli(*args: str | Path) -> tuple[int, str, BaseException | None]:
    result = CliRunner(env={"FORCE_COLOR": None, "NO_COLOR": "1"}).invoke(
        app, [str(a) for a in args]
    )
    return result.exit_code, ANSI.sub("", result.stderr), result.exception


def one_line_error(code: int, stderr: str, expected_code: int = 2) -> str:
    assert code == expected_code, stderr
    lines = [ln for ln in stderr.strip().splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in stderr, stderr
    return lines[0]


def test_a_library_value_error_is_a_bug_with_a_traceback() -> None:
    """Before, every ValueError became ``error: ...`` and exit 2, so a bug looked like a user
    mistake and lost its traceback."""
    code = (
        "import sys\n"
        "import gymforge.registry.listing as listing\n"
        "def broken(env_id):\n"
        "    raise ValueError('an internal invariant broke')\n"
        "listing.make_env = broken\n"
        "sys.argv = ['gymforge', 'list']\n"
        "from gymforge.cli import main\n"
        "main()\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", "COLUMNS": "120"},
        timeout=300,
    )
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" in proc.stderr and "in broken" in proc.stderr
    assert "ValueError: an internal invariant broke" in proc.stderr
    assert "error: an internal invariant broke" not in proc.stderr


def test_a_value_error_in_process_propagates_instead_of_exit_2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gymforge.registry.listing as listing

    def broken(env_id: str) -> None:
        raise ValueError("bug")

    monkeypatch.setattr(listing, "make_env", broken)
    code, _, exc = cli("list")
    assert code == 1 and isinstance(exc, ValueError)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("run") / "r"
    code, stderr, _ = cli("run", "ledger", "--policy", "oracle", "-n", "2", "--out", out)
    assert code == 0, stderr
    return out


def test_a_hand_edited_manifest_names_its_bad_field(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "r"
    copy.mkdir()
    for name in ("manifest.json", "trajectories.jsonl"):
        (copy / name).write_bytes((run_dir / name).read_bytes())
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["run"]["n"] = "lots"
    (copy / "manifest.json").write_text(json.dumps(manifest))
    code, stderr, _ = cli("reproduce", copy / "manifest.json", "--out", tmp_path / "again")
    line = one_line_error(code, stderr)
    assert "manifest.json: run.n: Input should be a valid integer" in line


def test_a_trajectory_line_that_is_not_utf8_is_an_integrity_failure(
    run_dir: Path, tmp_path: Path
) -> None:
    lines = (run_dir / "trajectories.jsonl").read_bytes().splitlines(keepends=True)
    bad = tmp_path / "t.jsonl"
    bad.write_bytes(b"".join(lines[:2]) + b'{"record": "\xff"}\n' + b"".join(lines[2:]))
    code, stderr, _ = cli("verify-log", bad)
    line = one_line_error(code, stderr, 1)
    assert line == "error: integrity check failed: line 3: not UTF-8 text"
    code, stderr, _ = cli("export", bad, "--format", "trl", "--out", tmp_path / "x.jsonl")
    assert "line 3: not UTF-8 text" in one_line_error(code, stderr, 1)


def test_a_labels_file_that_is_not_utf8_names_its_line(tmp_path: Path) -> None:
    labels = tmp_path / "labels.jsonl"
    row = {"id": "1", "question": "q", "answer": "a", "label": True}
    labels.write_bytes(json.dumps(row).encode() + b"\n\xff\xfe\n")
    code, stderr, _ = cli("judge", "calibrate", "--labels", labels)
    assert one_line_error(code, stderr) == f"error: {labels}:2: not UTF-8 text"


def test_a_bad_redis_url_is_a_user_error(tmp_path: Path) -> None:
    code, stderr, _ = cli(
        "run", "ledger", "--policy", "oracle", "-n", "1", "--backend", "redis",
        "--redis", "http://localhost:6379", "--out", tmp_path / "r",
    )  # fmt: skip
    assert "bad Redis URL 'http://localhost:6379'" in one_line_error(code, stderr)


@pytest.mark.parametrize("value", ["Infinity", "-Infinity", "NaN"])
def test_a_reward_json_cannot_carry_is_an_integrity_failure(
    run_dir: Path, tmp_path: Path, value: str
) -> None:
    """Python's JSON reader takes ``Infinity`` and ``NaN``; a record holding one has no
    canonical JSON, hence no digest: every command that checks the file names the record
    (it raised ValueError from inside the digest), and a resume keeps the file."""
    copy = tmp_path / "r"
    copy.mkdir()
    for name in ("manifest.json", "trajectories.jsonl"):
        (copy / name).write_bytes((run_dir / name).read_bytes())
    text = (copy / "trajectories.jsonl").read_text()
    first_end = next(ln for ln in text.splitlines() if '"record":"episode"' in ln)
    episode = json.loads(first_end)["episode_id"]
    edited = text.replace(first_end, re.sub(r'"reward":[^,]+', f'"reward":{value}', first_end))
    (copy / "trajectories.jsonl").write_text(edited)
    want = f"episode record of episode {episode} holds a value JSON cannot carry"
    for args in (("verify-log", copy / "trajectories.jsonl"), ("hacks", copy)):
        code, stderr, _ = cli(*args)
        assert want in one_line_error(code, stderr, 1), args
    code, stderr, _ = cli(
        "run", "ledger", "--policy", "oracle", "-n", "2", "--out", copy, "--resume"
    )
    assert want in one_line_error(code, stderr, 1)
    assert (copy / "trajectories.jsonl").read_text() == edited


def test_a_line_nested_too_deeply_to_read_is_an_integrity_failure(
    run_dir: Path, tmp_path: Path
) -> None:
    """Python's JSON reader raises RecursionError, not a decode error, on a line nested
    deeper than its recursion limit: a file whose last episode line is damaged that way is
    refused by name (verify-log, hacks), and a resume truncates it as any damaged tail,
    keeping the finished episodes before it, instead of a RecursionError traceback."""
    copy = tmp_path / "r"
    copy.mkdir()
    for name in ("manifest.json", "trajectories.jsonl"):
        (copy / name).write_bytes((run_dir / name).read_bytes())
    text = (copy / "trajectories.jsonl").read_text()
    nested = "[" * 200_000 + "]" * 200_000
    (copy / "trajectories.jsonl").write_text(text + nested + "\n")
    lines = len(text.splitlines()) + 1
    for args in (("verify-log", copy / "trajectories.jsonl"), ("hacks", copy)):
        code, stderr, _ = cli(*args)
        assert f"line {lines}: not JSON" in one_line_error(code, stderr, 1), args
    code, stderr, _ = cli(
        "run", "ledger", "--policy", "oracle", "-n", "2", "--out", copy, "--resume"
    )
    assert code == 0, stderr
    assert nested not in (copy / "trajectories.jsonl").read_text()
    assert (copy / "trajectories.jsonl").read_text().startswith(text)
