"""What ``run_tests`` and ``run_command`` return to the agent. The test runner's report
comes from a process the agent's code runs in: ``entries`` keeps only string records."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel


class TestsReport(BaseModel):
    __test__ = False  # not a pytest class

    collected: int
    passed: int
    failed: int
    errors: int
    tests: list[dict[str, str]]
    collection_errors: list[dict[str, str]]
    exit_code: int | None
    status: str
    output: str
    note: str | None = None


class CommandReport(BaseModel):
    status: str
    exit_code: int | None
    stdout: str
    stderr: str
    limits_hit: list[str]
    files_changed: list[str]
    note: str | None = None


def entries(report: dict[str, Any] | None, key: str) -> list[dict[str, str]]:
    """``report[key]`` as a list of string-valued records. The report comes from a process
    the agent's code runs in, so anything else in it is dropped, not trusted."""
    raw = (report or {}).get(key)
    out = []
    for entry in raw if isinstance(raw, list) else []:
        if isinstance(entry, dict):
            out.append({str(k)[:50]: str(v)[:1000] for k, v in list(entry.items())[:5]})
    return out
