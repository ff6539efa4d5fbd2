"""`gymforge run --policy openai:MODEL --base-url URL` end to end, then a trl export."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gymforge.testing import OpenAITestServer
from gymforge.testing.openai_server import echo_responder


def test_run_with_an_openai_policy_then_export_tokens(tmp_path: Path) -> None:
    with OpenAITestServer(echo_responder) as server:
        cli = [sys.executable, "-m", "gymforge.cli"]
        run = subprocess.run(
            [
                *cli,
                "run",
                "math",
                "--policy",
                "openai:tiny",
                "--base-url",
                server.base_url,
                "-n",
                "4",
                "--group",
                "2",
                "--out",
                str(tmp_path),
                "--json",
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["episodes"] == 8 and summary["infra_errors"] == 0
    steps = [
        json.loads(x)
        for x in (tmp_path / "trajectories.jsonl").read_text().splitlines()
        if '"record":"step"' in x
    ]
    turns = [s["policy"] for s in steps if s["policy"]]
    assert turns and all(
        t["capture_level"] == "tokens" and t["completion_token_ids"] for t in turns
    )
    exported = subprocess.run(
        [*cli, "export", str(tmp_path), "--format", "trl"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert exported.returncode == 0, exported.stderr
    rows = (tmp_path / "export.trl.jsonl").read_text().splitlines()
    assert len(rows) == 8 and json.loads(rows[0])["completion_ids"]


def test_run_eval_calibrate_with_a_vllm_policy_and_sampling_flags(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gymforge.cli import app

    runner = CliRunner()
    with OpenAITestServer(echo_responder) as server:
        flags = ["--policy", "vllm:tiny", "--base-url", server.base_url, "--max-tokens", "9"]
        flags += ["--temperature", "0.5", "--top-p", "0.8", "--tool-format", "hermes"]
        commands = [
            ["run", "math", "-n", "2", "--out", str(tmp_path / "run"), "--json", *flags],
            ["eval", "math", "-n", "2", "--out", str(tmp_path / "eval"), "--json", *flags],
            ["calibrate", "math", "-n", "2", "-K", "1", "--variants", "0", "--json", *flags],
        ]
        commands[2] += ["--out", str(tmp_path / "cal")]
        for args in commands:
            result = runner.invoke(app, args)
            assert result.exit_code == 0, result.output
        requests = [r for r in server.requests if "prompt" in r]
    assert len(requests) >= 6 and all(isinstance(r["prompt"], list) for r in requests)
    assert {(r["max_tokens"], r["temperature"], r["top_p"]) for r in requests} == {(9, 0.5, 0.8)}
    steps = [
        json.loads(x)
        for x in (tmp_path / "run" / "trajectories.jsonl").read_text().splitlines()
        if '"record":"step"' in x
    ]
    turns = [s["policy"] for s in steps if s["policy"]]
    assert turns and {t["finish_reason"] for t in turns} == {"length"}
    assert all(len(t["completion_token_ids"]) == 9 for t in turns)


def test_an_unloadable_tokenizer_fails_before_any_episode(tmp_path: Path) -> None:
    import pytest

    pytest.importorskip("transformers")
    from typer.testing import CliRunner

    from gymforge.cli import app

    args = ["run", "math", "-n", "2", "--out", str(tmp_path / "out"), "--policy", "vllm:m"]
    args += ["--base-url", "http://127.0.0.1:9/v1", "--tokenizer", str(tmp_path / "nope")]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot load tokenizer" in lines[0], result.output
    assert not (tmp_path / "out" / "trajectories.jsonl").exists()
