"""``gymforge report``: one self-contained HTML file, checked as text and in headless
Chromium (rendered, screenshot saved, no console errors), plus the demo that writes one."""

from __future__ import annotations

import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from eval_helpers import CHROMIUM, chromium_args, run_cli

CONSOLE = re.compile(r":CONSOLE|Uncaught|Refused to")


@pytest.fixture(scope="module")
def report(eval_dir: Path, calibration_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("report")
    oracle = base / "oracle"
    res = run_cli(
        "eval", "ledger", "--policy", "oracle", "--split", "all", "-n", "4", "--out", oracle
    )
    assert res.code == 0, res.stderr
    out = base / "report.html"
    res = run_cli("report", eval_dir, oracle, calibration_dir, "-o", out, "--title", "test report")
    assert res.code == 0 and res.stdout == "", res.stderr
    assert f"wrote {out}" in res.stderr.replace("\n", "")
    return out


@pytest.mark.xdist_group("eval-runs")  # one worker: one report (and eval_dir)
def test_report_is_one_self_contained_file(report: Path) -> None:
    html = report.read_text()
    assert html.startswith("<!doctype html>")
    assert "<script" not in html and "<link" not in html and " src=" not in html
    external = re.findall(r"https?://[^\s\"'<>]+", html)
    assert set(external) <= {"http://www.w3.org/2000/svg"}  # an XML namespace, never fetched
    assert "Content-Security-Policy" in html
    for label in (
        "pass@k",
        "pass^k",
        "held-out",
        "Reward",
        "Step-count",
        "Tool error rates",
        "Difficulty vs success",
        "Per-task pass rate",
        "Trajectory browser",
    ):
        assert label.lower() in html.lower(), label
    svgs = re.findall(r"<svg.*?</svg>", html, flags=re.S)
    assert len(svgs) >= 8
    for svg in svgs:
        ET.fromstring(svg)  # each plot is well-formed XML
    assert 'class="band"' in html  # the pass-rate band is marked
    assert html.count("<details") >= 3  # the trajectory browser
    for run in ("skilled", "oracle", "cal"):
        assert f"<h3>{run}</h3>" in html  # runs side by side


def test_report_user_errors(tmp_path: Path) -> None:
    res = run_cli("report", tmp_path / "nope", "-o", tmp_path / "r.html")
    assert res.code == 2 and "not a directory" in res.stderr
    res = run_cli("report", tmp_path, "-o", tmp_path / "r.html")
    assert res.code == 2 and "no eval.json" in res.stderr


def chromium(url: str, tmp: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp / f"profile-{len(list(tmp.glob('profile-*')))}"
    return subprocess.run(
        [
            *chromium_args(profile),
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1280,2000",
            *extra,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium is not installed (scripts/setup.sh installs it: apt-get install chromium)",
)
@pytest.mark.xdist_group("eval-runs")  # one worker: one report (and eval_dir)
def test_report_renders_in_headless_chromium(report: Path, tmp_path: Path) -> None:
    shot = tmp_path / "report.png"
    proc = chromium(report.as_uri(), tmp_path, f"--screenshot={shot}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    errors = [line for line in proc.stderr.splitlines() if CONSOLE.search(line)]
    assert errors == [], errors
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    dom = chromium(report.as_uri(), tmp_path, "--dump-dom")
    assert dom.returncode == 0
    assert dom.stdout.count("<svg") >= 8 and "pass^k" in dom.stdout
    assert not [line for line in dom.stderr.splitlines() if CONSOLE.search(line)]
    print(f"screenshot: {shot}")


@pytest.mark.xdist_group("eval-runs")  # one worker: one report (and eval_dir)
@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
def test_console_capture_catches_a_blocked_external_asset(report: Path, tmp_path: Path) -> None:
    """The control: the same page with one external image must show a console error (the
    CSP refuses it before any network access), so a clean run above means something."""
    bad = tmp_path / "bad.html"
    bad.write_text(
        report.read_text().replace("<body>", "<body><img src='https://example.invalid/x.png'>")
    )
    proc = chromium(bad.as_uri(), tmp_path, "--dump-dom")
    assert [line for line in proc.stderr.splitlines() if CONSOLE.search(line)]


def test_demo_includes_an_eval_and_a_report(tmp_path: Path) -> None:
    res = run_cli("demo", "--out", tmp_path, "-n", "4")
    assert res.code == 0, res.stderr
    assert res.stdout == ""
    data = json.loads((tmp_path / "eval" / "eval.json").read_text())
    assert data["metrics"]["heldout_gap"]["gap"] is not None  # train and held-out tasks
    assert set(data["metrics"]["pass@k"]) >= {"1", "4"}
    for policy in ("oracle", "random", "noop"):
        assert json.loads((tmp_path / policy / "eval.json").read_text())["policy"] == policy
    html = (tmp_path / "report.html").read_text()
    assert "pass@k" in html and "<h3>noop</h3>" in html
    assert "held-out gap" in res.stderr and "report.html" in res.stderr
