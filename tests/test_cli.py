"""The command line: machine output alone on stdout, readable one-line user errors."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from typer.testing import CliRunner

from gymforge.cli import app
from gymforge.core import canonical_json
from gymforge.trajectory.schema import chain_digest, trajectory_json_schema

SUMMARY_KEYS = {
    "episodes",
    "success_rate",
    "mean_reward",
    "mean_reward_components",
    "terminated",
    "truncated",
    "mean_steps",
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


class Out:
    def __init__(self, code: int, stdout: str, stderr: str, exception: Any = None) -> None:
        self.code, self.stdout, self.stderr, self.exception = code, stdout, stderr, exception

    @property
    def text(self) -> str:
        return self.stdout + self.stderr


def cli(*args: str | Path) -> Out:
    """Run the app in-process; Click >= 8.2 keeps stdout and stderr apart."""
    result = CliRunner(env={"FORCE_COLOR": None, "NO_COLOR": "1"}).invoke(
        app, [str(a) for a in args]
    )
    return Out(
        result.exit_code,
        ANSI.sub("", result.stdout),
        ANSI.sub("", result.stderr),
        result.exception,
    )


def assert_user_error(out: Out, *fragments: str) -> None:
    assert out.code == 2, out.text
    assert "Traceback" not in out.text
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("error:"), lines[0]
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(scope="module")
def oracle_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cli") / "oracle"
    result = cli("run", "ledger", "--policy", "oracle", "-n", "5", "--seed", "3", "--out", out)
    assert result.code == 0, result.text
    return out


def test_cli_runner_separates_streams() -> None:
    # guards the assumption this file relies on
    result = CliRunner().invoke(app, ["list", "--json"])
    assert result.stderr == "" and result.stdout.startswith("[")


def test_list_json() -> None:
    out = cli("list", "--json")
    assert out.code == 0, out.text
    rows = json.loads(out.stdout)
    ledger = next(r for r in rows if r["id"] == "ledger")
    assert ledger["families"] == ["ledger.transfer"]
    assert ledger["version"] == "1.0.0"
    assert set(ledger) >= {"id", "version", "renderer_version", "description", "families"}
    assert out.stderr == ""


def test_list_table_goes_to_stderr() -> None:
    out = cli("list")
    assert out.code == 0
    assert out.stdout == ""
    assert "ledger" in out.stderr


def test_schema_trajectory_alone_on_stdout() -> None:
    out = cli("schema", "trajectory")
    assert out.code == 0, out.text
    schema = json.loads(out.stdout)
    Draft202012Validator.check_schema(schema)
    assert schema == trajectory_json_schema()
    assert out.stderr == ""


def test_schema_unknown_is_user_error() -> None:
    assert_user_error(cli("schema", "nope"), "nope")


def test_run_oracle_writes_files(oracle_run: Path) -> None:
    lines = (oracle_run / "trajectories.jsonl").read_text().splitlines()
    summary = json.loads((oracle_run / "summary.json").read_text())
    assert set(summary) >= SUMMARY_KEYS
    assert summary["episodes"] == 5
    assert summary["success_rate"] >= 0.95
    assert summary["terminated"] + summary["truncated"] == 5
    assert summary["mean_steps"] > 1
    assert summary["mean_reward_components"]["task"] >= 0.95
    episodes = [json.loads(line) for line in lines if '"record":"episode"' in line]
    assert len(episodes) == 5
    assert all(e["policy_checkpoint"] == "oracle" for e in episodes)


def test_run_json_summary_on_stdout(tmp_path: Path) -> None:
    out = cli("run", "ledger", "-p", "noop", "-n", "3", "--out", tmp_path, "--json")
    assert out.code == 0, out.text
    summary = json.loads(out.stdout)
    assert summary == json.loads((tmp_path / "summary.json").read_text())
    assert summary["success_rate"] == 0.0
    assert summary["failure_reasons"] == {"no_change": 3}


def test_run_without_json_prints_nothing_on_stdout(tmp_path: Path) -> None:
    out = cli("run", "ledger", "-p", "noop", "-n", "2", "--out", tmp_path)
    assert out.code == 0
    assert out.stdout == ""
    assert "summary.json" in out.stderr


def test_run_random_policy_rarely_succeeds(tmp_path: Path) -> None:
    out = cli("run", "ledger", "--policy", "random", "-n", "20", "--seed", "1", "--out", tmp_path)
    assert out.code == 0, out.text
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["episodes"] == 20
    assert summary["success_rate"] < 0.2


def test_run_heldout_split(tmp_path: Path) -> None:
    out = cli("run", "ledger", "-n", "3", "--split", "heldout", "--out", tmp_path, "--json")
    assert out.code == 0, out.text
    episodes = [
        json.loads(line)
        for line in (tmp_path / "trajectories.jsonl").read_text().splitlines()
        if '"record":"episode"' in line
    ]
    assert [e["split"] for e in episodes] == ["heldout"] * 3


def test_replay_ok(oracle_run: Path) -> None:
    out = cli("replay", oracle_run / "trajectories.jsonl")
    assert out.code == 0, out.text
    assert out.stdout == ""
    assert "replay ok: 5 episodes" in out.stderr


def tamper_and_reseal(src: Path, dst: Path) -> int:
    """Change one transfer amount in the first episode and recompute its digest chain."""
    records = [json.loads(line) for line in src.read_text().splitlines()]
    first = records[0]["episode_id"]
    target = next(
        r
        for r in records
        if r["episode_id"] == first and (r.get("action") or {}).get("name") == "transfer"
    )
    target["action"]["arguments"]["amount_cents"] += 7
    previous = ""
    for r in records:
        if r["episode_id"] == first:
            r["digest"] = previous = chain_digest(previous, r)
    dst.write_text("".join(canonical_json(r) + "\n" for r in records))
    return target["step"]


def test_replay_tampered_file_diverges(oracle_run: Path, tmp_path: Path) -> None:
    tampered = tmp_path / "tampered.jsonl"
    step = tamper_and_reseal(oracle_run / "trajectories.jsonl", tampered)
    assert cli("verify-log", tampered).code == 0  # the forged chain is valid
    out = cli("replay", tampered)
    assert out.code == 1, out.text
    assert f"diverges at step {step}" in out.stderr
    assert out.stderr.startswith("error:")
    assert "Traceback" not in out.text
    assert out.exception is None or isinstance(out.exception, SystemExit)


def test_verify_log_ok_and_edited(oracle_run: Path, tmp_path: Path) -> None:
    path = oracle_run / "trajectories.jsonl"
    ok = cli("verify-log", path)
    assert ok.code == 0, ok.text
    assert "log ok: 5 episodes" in ok.stderr
    edited = tmp_path / "edited.jsonl"
    lines = path.read_text().splitlines()
    record = json.loads(lines[2])
    record["reward_components"]["step_cost"] = 1.0
    lines[2] = canonical_json(record)
    edited.write_text("\n".join(lines) + "\n")
    out = cli("verify-log", edited)
    assert out.code == 1, out.text
    assert "integrity check failed" in out.stderr and "digest mismatch" in out.stderr
    assert "Traceback" not in out.text
    # replay refuses the broken chain the same way
    assert cli("replay", edited).code == 1


def test_verify_log_truncated_file(oracle_run: Path, tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    text = (oracle_run / "trajectories.jsonl").read_text()
    cut.write_text(text[: len(text) - 40])
    out = cli("verify-log", cut)
    assert out.code == 1
    assert "line" in out.stderr and "Traceback" not in out.text


@pytest.mark.parametrize(
    "args, fragment",
    [
        (("run", "nosuchenv", "--out", "{tmp}/o"), "unknown environment"),
        (("run", "gymforge.nope:make", "--out", "{tmp}/o"), "cannot import"),
        (("run", "ledger", "--policy", "bogus", "--out", "{tmp}/o"), "unknown policy"),
        (("run", "ledger", "--split", "dev", "--out", "{tmp}/o"), "--split"),
        (("replay", "{tmp}/missing.jsonl"), "missing.jsonl"),
        (("verify-log", "{tmp}/missing.jsonl"), "missing.jsonl"),
        (("replay", "{tmp}"), ""),
    ],
)
def test_user_mistakes_are_one_line(args: tuple[str, ...], fragment: str, tmp_path: Path) -> None:
    out = cli(*(a.format(tmp=tmp_path) for a in args))
    assert_user_error(out, fragment)


def test_replay_not_jsonl_is_integrity_error(tmp_path: Path) -> None:
    path = tmp_path / "notes.jsonl"
    path.write_text("hello\n")
    out = cli("replay", path)
    assert out.code == 1
    assert out.stderr.startswith("error:") and "line 1" in out.stderr
    assert "Traceback" not in out.text


@pytest.mark.parametrize(
    "args", [("verify-log", "{tmp}/run[/x].jsonl"), ("run", "[/x]", "-o", "o")]
)
def test_user_error_with_markup_characters(args: tuple[str, ...], tmp_path: Path) -> None:
    out = cli(*(a.format(tmp=tmp_path) for a in args))
    assert_user_error(out, "[/x]")


def test_demo(tmp_path: Path) -> None:
    out = cli("demo", "--out", tmp_path, "-n", "5")
    assert out.code == 0, out.text
    assert out.stdout == ""
    for policy in ("oracle", "random", "noop"):
        summary = json.loads((tmp_path / policy / "summary.json").read_text())
        assert summary["episodes"] == 5 and summary["policy"] == policy
        assert (tmp_path / policy / "trajectories.jsonl").stat().st_size > 0
    assert json.loads((tmp_path / "oracle" / "summary.json").read_text())["success_rate"] >= 0.8
    assert json.loads((tmp_path / "noop" / "summary.json").read_text())["success_rate"] == 0.0
    assert "replay of the oracle run: ok" in out.stderr


def test_real_process_keeps_stdout_clean(tmp_path: Path) -> None:
    """The installed module entry point, in a real process with real pipes."""
    proc = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "schema", "trajectory"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == trajectory_json_schema()
    assert proc.stderr == ""
    proc = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "verify-log", str(tmp_path / "nope.jsonl")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith("error:") and len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_qa_keeps_hypothesis_caches_out_of_the_working_directory(tmp_path: Path) -> None:
    work, cache = tmp_path / "work", tmp_path / "cache"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "HYPOTHESIS_STORAGE_DIRECTORY"}
    env["XDG_CACHE_HOME"] = str(cache)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1])
    proc = subprocess.run(
        [sys.executable, "-m", "gymforge.cli", "qa", "ledger", "--check", "error_paths"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (work / ".hypothesis").exists()
    assert (cache / "gymforge" / "hypothesis").is_dir()
