"""``doctor`` reports measured facts, as data and as a table."""

from __future__ import annotations

import json

import pytest

from gymforge.sandbox.doctor import bwrap_works, diagnose, doctor_cli, render
from gymforge.sandbox.landlock import landlock_abi


def test_diagnose_is_structured() -> None:
    report = diagnose(deep=False)
    names = {c["name"] for c in report["checks"]}
    for want in (
        "bwrap installed",
        "bwrap sandbox starts",
        "user namespaces",
        "network namespaces",
        "setpriv",
        "seccomp (libseccomp)",
        "cgroup memory",
        "cgroup pids",
        "docker engine",
        "language python",
    ):
        assert want in names
    assert all(set(c) == {"name", "ok", "detail"} for c in report["checks"])
    assert report["isolation"] == ("bwrap" if bwrap_works()[0] else "none")
    assert "python" in report["languages"]


@pytest.mark.skipif(not bwrap_works()[0], reason="bubblewrap sandbox unavailable")
def test_deep_probe_runs_a_job(capsys: pytest.CaptureFixture[str]) -> None:
    assert doctor_cli(as_json=True) == 0
    out, err = capsys.readouterr()
    report = json.loads(out)
    checks = {c["name"]: c for c in report["checks"]}
    for name in (
        "zygote job runs",
        "job uid unprivileged",
        "job capabilities empty",
        "job cannot write /etc",
        "job has no network",
        "job sees only its pids",
    ):
        assert checks[name]["ok"] is True, checks[name]
    assert checks["landlock"]["ok"] is (landlock_abi() >= 1)
    if landlock_abi() >= 1:
        assert checks["job files read-only on request"]["ok"] is True
    assert "gymforge sandbox doctor" in err and "isolated sandbox available" in err
    assert render(report).row_count == len(report["checks"])
