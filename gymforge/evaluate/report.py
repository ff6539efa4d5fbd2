"""``gymforge report``: one self-contained, offline HTML file comparing runs side by side.

Each run directory holds an ``eval.json`` (``gymforge eval``) and/or a ``calibration.json``
(``gymforge calibrate``), or is a plain run folder (``gymforge run``: its trajectories are
analysed in memory like an eval with k=1, nothing written). The page has no JavaScript
and loads nothing: plots are inline SVG (``plots``), the trajectory browser is
``<details>`` elements (``browser``), and a Content-Security-Policy forbids any fetch, so a
stray external reference would show up as a console error rather than a silent network
call. Metrics carry their usual names: "pass@k", "pass^k", "held-out".
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from gymforge.core.errors import UserError
from gymforge.evaluate.browser import browser_section
from gymforge.evaluate.folder import run_folder_document
from gymforge.evaluate.report_plots import plots_section
from gymforge.trajectory.documents import seal_warnings
from gymforge.version import __version__

CSS = """
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1240px;color:#222;padding:0 16px}
h1{margin-bottom:4px}h2{border-bottom:1px solid #ddd;padding-bottom:4px;margin-top:32px}
nav a{margin-right:12px}table{border-collapse:collapse;margin:8px 0;font-size:13px}
td,th{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f4f4f4}.grid{display:grid;grid-template-columns:repeat(auto-fit,minmax(480px,1fr));
gap:16px}.plot{width:100%;height:auto;border:1px solid #eee}.muted{color:#777}
.warn{color:#a15c00}.ok{color:#1b7a1b}.bad{color:#b00020}pre{white-space:pre-wrap;margin:0;
font-size:12px;max-height:220px;overflow:auto}details.episode{margin:6px 0;border:1px solid #ddd;
padding:4px 8px}details.episode summary{cursor:pointer}table.steps td{font-size:12px}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@dataclass
class Run:
    """One run directory as the report sees it."""

    name: str
    path: Path
    eval: dict[str, Any] | None
    calibration: dict[str, Any] | None
    seals: list[str] = field(default_factory=list)
    """Documents of the run its seal does not vouch for (``trajectory.documents``)."""

    @property
    def metrics(self) -> dict[str, Any]:
        metrics: dict[str, Any] = (self.eval or {}).get("metrics", {})
        return metrics


def load_runs(dirs: list[Path], key: bytes | None = None) -> list[Run]:
    """Read each directory's ``eval.json``/``calibration.json`` (or analyse its plain
    trajectories), and check its documents against the run seal with ``key``; UserError if
    it has none of them."""
    runs: list[Run] = []
    names: set[str] = set()
    for d in dirs:
        if not d.is_dir():
            raise UserError(f"{d} is not a directory")
        docs = {}
        for kind in ("eval", "calibration"):
            f = d / f"{kind}.json"
            if f.exists():
                try:
                    docs[kind] = json.loads(f.read_text())
                except json.JSONDecodeError as err:
                    raise UserError(f"{f} is not valid JSON: {err}") from err
        if not docs and (d / "trajectories.jsonl").exists():
            docs["eval"] = run_folder_document(d)
        if not docs:
            raise UserError(
                f"{d} has no eval.json, calibration.json or trajectories.jsonl "
                "(run gymforge run, eval or calibrate)"
            )
        name = d.name or str(d)
        if name in names:
            name = f"{d.parent.name}/{d.name}"
        names.add(name)
        runs.append(Run(name, d, docs.get("eval"), docs.get("calibration"), seal_warnings(d, key)))
    return runs


def pct(v: float | None, digits: int = 1) -> str:
    return "&ndash;" if v is None else f"{v * 100:.{digits}f}%"


def num(v: float | None, digits: int = 3) -> str:
    return "&ndash;" if v is None else f"{v:.{digits}f}"


def ci(d: dict[str, Any] | None) -> str:
    if not d or d.get("rate") is None:
        return "&ndash;"
    return f"{pct(d['rate'])} <span class='muted'>[{pct(d['lo'])}, {pct(d['hi'])}]</span>"


def table(head: list[str], rows: list[list[str]]) -> str:
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _top_k(m: dict[str, Any], key: str) -> tuple[str, float | None]:
    table_ = m.get(key) or {}
    if not table_:
        return "k", None
    k = str(m.get("k", 1)) if str(m.get("k", 1)) in table_ else max(table_, key=int)
    return k, table_[k]


def _verifier_errors(m: dict[str, Any]) -> str:
    """The verifier-error rate (failures in success, ``trajectory.outcome``); an
    ``eval.json`` written before they were counted has only a count, left out of success."""
    if "verifier_error" in m:
        return ci(m["verifier_error"])
    n = m.get("verifier_errors") or 0
    return f"<span class='bad'>{n} left out of success</span>" if n else "&ndash;"


def summary_section(runs: list[Run]) -> str:
    rows = []
    for r in runs:
        if r.eval is None:
            continue
        m, e = r.metrics, r.eval
        k, pk = _top_k(m, "pass@k")
        _, phk = _top_k(m, "pass^k")
        g = m.get("heldout_gap", {})
        gap = (
            f"{g['gap'] * 100:+.1f} pts <span class='muted'>[{g['lo'] * 100:+.1f}, "
            f"{g['hi'] * 100:+.1f}]</span>"
            if g.get("gap") is not None
            else "<span class='muted'>n/a</span>"
        )
        rows.append(
            [
                escape(r.name),
                escape(f"{e.get('env')} / {e.get('policy')}"),
                escape(str(e.get("config", {}).get("split"))),
                str(m.get("episodes")),
                ci(m.get("success")),
                _verifier_errors(m),
                f"{pct(pk)} <span class='muted'>(k={k})</span>",
                pct(phk),
                gap,
                num(m.get("reward", {}).get("mean")),
                num(m.get("steps", {}).get("mean"), 1),
                num(m.get("steps", {}).get("efficiency", {}).get("mean"), 2),
                pct(m.get("tools", {}).get("tool_error_rate")),
                pct(m.get("truncation", {}).get("rate")),
                str(e.get("review", {}).get("flagged", 0)),
            ]
        )
    head = [
        "run",
        "env / policy",
        "split",
        "episodes",
        "success [95% CI]",
        "verifier errors [95% CI]",
        "pass@k",
        "pass^k",
        "held-out gap (train &minus; held-out)",
        "mean reward",
        "mean steps",
        "step efficiency",
        "tool error rate",
        "truncated",
        "flagged",
    ]
    out = table(head, rows) if rows else "<p class='muted'>No eval runs.</p>"
    warnings = [
        f"<li><b>{escape(r.name)}</b>: {escape(w)}</li>"
        for r in runs
        for doc in (r.eval, r.calibration)
        if doc
        for w in doc.get("warnings", [])
    ]
    if warnings:
        out += "<p class='warn'>Warnings:</p><ul class='warn'>" + "".join(warnings) + "</ul>"
    return out


def analysis_section(runs: list[Run]) -> str:
    parts = []
    for r in runs:
        if r.eval is None:
            continue
        f, rv = r.eval.get("failures", {}), r.eval.get("review", {})
        reasons = [
            [
                escape(x["reason"]),
                str(x["count"]),
                pct(x["share"]),
                escape(", ".join(x.get("top_facts", []))),
            ]
            for x in f.get("reasons", [])
        ]
        flagged = [
            [
                escape(x["task_id"]),
                num(x["reward"]),
                str(x["steps"]),
                str(x.get("oracle_steps") or "&ndash;"),
                escape("; ".join(x["reasons"])),
            ]
            for x in rv.get("episodes", [])[:15]
        ]
        parts.append(
            f"<h3>{escape(r.name)}</h3><p>{f.get('failed', 0)} failed episodes; "
            f"{rv.get('flagged', 0)} of {rv.get('screened', 0)} high-reward episodes "
            "flagged for review (reward-hacking screen).</p>"
            + (
                table(["failure reason", "count", "share", "common verdict facts"], reasons)
                if reasons
                else ""
            )
            + (
                table(["flagged task", "reward", "steps", "oracle steps", "why"], flagged)
                if flagged
                else ""
            )
        )
    return "".join(parts) or "<p class='muted'>No eval runs.</p>"


def calibration_section(runs: list[Run]) -> str:
    parts = []
    for r in runs:
        c = r.calibration
        if c is None:
            continue
        cur, pool = c["curriculum"], c["hard_negatives"]
        moves = [
            [escape(m["family"]), f"{m['from']} → {m['to']}", pct(m["pass_rate"]), str(m["n"])]
            for m in cur["moves"]
        ]
        reasons = ", ".join(f"{k} {v}" for k, v in c["retired_by_reason"].items() if v)
        parts.append(
            f"<h3>{escape(r.name)}</h3><p>{escape(c['env'])} / {escape(c['policy'])}, "
            f"{c['config']['samples']} rollouts per task, band {pct(c['band'][0])}&ndash;"
            f"{pct(c['band'][1])}: <b>{c['in_band']}</b> of {c['tasks']} tasks in the band; "
            f"retired: {escape(reasons or 'none')}. Verifier errors: "
            f"{c.get('verifier_errors', 0)} of {c['episodes']} rollouts, counted as failures. "
            "Zero-variance groups: "
            f"{c['zero_variance']['groups']} ({c['zero_variance']['all_failed']} all failed, "
            f"{c['zero_variance']['all_succeeded']} all succeeded).</p>"
            f"<p>Curriculum: suggested levels {escape(json.dumps(cur['suggested_levels']))}; "
            + escape("; ".join(f"{k}: {v}" for k, v in cur["notes"].items()))
            + "</p>"
            + (table(["family", "level move", "pass rate", "n"], moves) if moves else "")
            + f"<p>Hard-negative pool: {pool['tasks']} tasks ({pool['failed_tasks']} failed, "
            f"{pool['variants_added']} variants) in <code>{escape(pool['path'])}</code>.</p>"
        )
    return "".join(parts)


def seals_notice(runs: list[Run]) -> str:
    """The warning at the top of the page: each document no seal vouches for."""
    items = "".join(f"<li>{escape(r.name)}: {escape(w)}</li>" for r in runs for w in r.seals)
    if not items:
        return ""
    head = "<strong>Not vouched for by a seal:</strong>"
    return f"<div class='bad' id='seals'>{head}<ul>{items}</ul></div>"


def render_report(
    dirs: list[Path], title: str = "gymforge report", key: bytes | None = None
) -> str:
    """The whole HTML document for the runs in ``dirs`` (their seals checked with ``key``)."""
    return render_runs(load_runs(dirs, key), title)


def render_runs(runs: list[Run], title: str) -> str:
    """The whole HTML document for ``runs``."""
    calib = calibration_section(runs)
    sections = [
        ("summary", "Summary", summary_section(runs)),
        ("plots", "Plots", plots_section(runs)),
        *([("calibration", "Calibration", calib)] if calib else []),
        ("analysis", "Failures and review flags", analysis_section(runs)),
        (
            "trajectories",
            "Trajectory browser",
            "".join(browser_section(r.name, r.path, r.eval) for r in runs if r.eval is not None)
            or "<p class='muted'>No eval runs.</p>",
        ),
    ]
    nav = "".join(f"<a href='#{sid}'>{escape(label)}</a>" for sid, label, _ in sections)
    body = "".join(
        f"<section id='{sid}'><h2>{escape(label)}</h2>{html}</section>"
        for sid, label, html in sections
    )
    names = ", ".join(escape(r.name) for r in runs)
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class='muted'>runs: {names} · generated "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} by gymforge {__version__}</p>"
        f"{seals_notice(runs)}<nav>{nav}</nav>{body}</body></html>\n"
    )


def write_report(
    dirs: list[Path],
    out: Path,
    title: str = "gymforge report",
    key: bytes | None = None,
    warn: Callable[[str], None] | None = None,
) -> Path:
    """Write the report; ``warn`` is told each document no seal vouches for."""
    runs = load_runs(dirs, key)
    for run in runs:
        for line in run.seals:
            if warn is not None:
                warn(f"{run.name}: {line}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_runs(runs, title), encoding="utf-8")
    return out
