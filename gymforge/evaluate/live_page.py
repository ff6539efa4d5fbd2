"""The pages of ``gymforge view``: a shell that polls, and the fragments it fetches.

The shell loads one same-origin script (the Content-Security-Policy allows nothing else)
that polls ``/api/state`` and, when the state's version changes, replaces the overview
with ``/fragment/overview`` and appends the newly finished episodes from
``/api/episodes?after=N`` to the trajectory browser; opening an episode fetches
``/fragment/episode/I``. Every fragment is server-rendered HTML built from the report's
own sections, plots and episode renderer, with all run data escaped.
"""

from __future__ import annotations

from html import escape
from typing import Any

from gymforge.evaluate.browser import render_episode
from gymforge.evaluate.follow import RunFollower, RunState
from gymforge.evaluate.report import (
    CSS,
    Run,
    analysis_section,
    num,
    pct,
    summary_section,
    table,
)
from gymforge.evaluate.report_plots import plots_section
from gymforge.rollout.live_progress import read_in_flight
from gymforge.version import __version__

CSP = (
    "default-src 'none'; script-src 'self'; connect-src 'self'; "
    "style-src 'unsafe-inline'; img-src data:"
)
LIVE_CSS = (
    CSS
    + """
.bar{background:#eee;height:14px;width:100%;max-width:600px;border-radius:3px}
.bar div{background:#3b7dd8;height:14px;border-radius:3px}
table.episodes tr.ep{cursor:pointer}table.episodes tr.ep:hover{background:#f6f9ff}
#episode-view{margin-top:12px}
"""
)

SCRIPT = """
"use strict";
let version = -1, shown = 0, busy = false;
const $ = (id) => document.getElementById(id);
async function getJSON(url) { const r = await fetch(url); return r.json(); }
async function getText(url) { const r = await fetch(url); return r.text(); }
function row(e) {
  const tr = document.createElement("tr");
  tr.className = "ep"; tr.dataset.index = e.index;
  for (const v of [e.index, e.task_id, e.family, e.rollout,
                   e.success ? "success" : ("fail: " + (e.failure_reason || "")),
                   e.reward.toFixed(3), e.steps]) {
    const td = document.createElement("td"); td.textContent = String(v); tr.appendChild(td);
  }
  tr.addEventListener("click", () => openEpisode(e.index));
  return tr;
}
async function openEpisode(i) {
  $("episode-view").innerHTML = await getText("/fragment/episode/" + i);
  const d = $("episode-view").querySelector("details"); if (d) d.open = true;
}
async function tick() {
  if (busy) return; busy = true;
  try {
    const s = await getJSON("/api/state");
    $("status").textContent = s.status;
    $("finished").textContent = String(s.finished);
    $("expected").textContent = s.expected === null ? "?" : String(s.expected);
    $("in-flight").textContent = String(s.in_flight);
    $("bar").style.width = (s.expected ? Math.min(100, 100 * s.finished / s.expected) : 0) + "%";
    if (s.version !== version) {
      version = s.version;
      if (s.finished < shown) { $("episodes").replaceChildren(); shown = 0; }
      $("overview").innerHTML = await getText("/fragment/overview");
      const page = await getJSON("/api/episodes?after=" + shown);
      const body = $("episodes");
      for (const e of page.episodes) { body.prepend(row(e)); shown = e.index + 1; }
    }
  } catch (err) {
    $("status").textContent = "view server unreachable";
  } finally { busy = false; }
}
tick(); setInterval(tick, POLL_MS);
"""


def shell(title: str, poll_ms: int) -> str:
    """The page itself: progress, an overview filled in by the script, the browser."""
    return (
        "<!doctype html><html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{escape(title)}</title><style>{LIVE_CSS}</style></head><body>"
        f"<h1>{escape(title)}</h1><p class='muted'>live view · gymforge {__version__} · "
        f"refreshes every {poll_ms / 1000:g} s</p>"
        "<section><h2>Progress</h2><p><b id='status'>loading</b>: "
        "<span id='finished'>0</span> of <span id='expected'>?</span> episodes finished, "
        "<span id='in-flight'>0</span> in flight</p><div class='bar'><div id='bar' "
        "style='width:0%'></div></div></section>"
        "<div id='overview'></div>"
        "<section><h2>Trajectory browser</h2><p class='muted'>Newest first; click an "
        "episode to open it.</p><table class='episodes'><thead><tr><th>#</th><th>task</th>"
        "<th>family</th><th>rollout</th><th>outcome</th><th>reward</th><th>steps</th></tr>"
        "</thead><tbody id='episodes'></tbody></table><div id='episode-view'></div></section>"
        "<script src='/app.js'></script></body></html>\n"
    )


def script(poll_ms: int) -> str:
    return SCRIPT.replace("POLL_MS", str(int(poll_ms)))


def state_json(follower: RunFollower) -> dict[str, Any]:
    """Progress counters and the state version the script compares."""
    with follower.lock:
        s = follower.state
        if s.done:
            status = "finished"
        elif s.finished or s.open_episodes:
            status = "running"
        else:
            status = "waiting for episodes"
        return {
            "version": s.version,
            "status": status,
            "finished": len(s.finished),
            "expected": s.expected,
            "in_flight": len(s.open_episodes) if s.done else in_flight(follower, s),
            "problems": list(s.problems),
        }


def in_flight(follower: RunFollower, s: RunState) -> int:
    """Episodes being played now: what the running run publishes (``live.json``; the
    trajectory file holds an episode only once it ended), else the episodes whose records
    are in the file without their end."""
    published = read_in_flight(follower.run_dir)
    return published if published is not None else len(s.open_episodes)


def episodes_json(follower: RunFollower, after: int, limit: int = 500) -> dict[str, Any]:
    """Rows of the finished episodes from index ``after`` on (at most ``limit``)."""
    with follower.lock:
        chosen = follower.state.finished[max(0, after) : max(0, after) + limit]
        first = max(0, after)
    return {
        "episodes": [
            {
                "index": first + i,
                "episode_id": f.stats.episode_id,
                "task_id": f.stats.task_id,
                "family": f.stats.family,
                "rollout": f.stats.rollout,
                "success": f.stats.success,
                "failure_reason": f.stats.failure_reason,
                "reward": f.stats.reward,
                "steps": f.stats.steps,
            }
            for i, f in enumerate(chosen)
        ]
    }


def _family_table(metrics: dict[str, Any]) -> str:
    rows = [
        [
            escape(str(r["key"])),
            str(r["episodes"]),
            pct((r.get("success") or {}).get("rate")),
            num(r.get("mean_reward")),
            num(r.get("mean_steps"), 1),
        ]
        for r in metrics.get("by_family", [])
    ]
    head = ["family", "episodes", "success", "mean reward", "mean steps"]
    return table(head, rows) if rows else "<p class='muted'>No finished episode yet.</p>"


def _components_table(metrics: dict[str, Any]) -> str:
    comps = (metrics.get("reward") or {}).get("components") or {}
    rows = [[escape(name), num(v)] for name, v in sorted(comps.items())]
    return table(["component", "mean per episode"], rows) if rows else ""


def overview(follower: RunFollower, name: str) -> str:
    """Summary, per-family and component tables, failure reasons and the report's plots
    for the episodes finished so far."""
    doc = follower.document()
    with follower.lock:
        problems = list(follower.state.problems)
    run = Run(name, follower.run_dir, doc, None)
    parts = [
        "<section><h2>Summary</h2>",
        summary_section([run]),
        "</section><section><h2>Success and reward per family</h2>",
        _family_table(doc["metrics"]),
        "<h3>Reward components</h3>",
        _components_table(doc["metrics"]) or "<p class='muted'>None yet.</p>",
        "</section><section><h2>Failure reasons</h2>",
        analysis_section([run]),
        "</section><section><h2>Plots</h2>",
        plots_section([run]),
        "</section>",
    ]
    if problems:
        items = "".join(f"<li>{escape(p)}</li>" for p in problems)
        parts.append(f"<section><h2>Problems</h2><ul class='warn'>{items}</ul></section>")
    return "".join(parts)


def episode_fragment(follower: RunFollower, index: int) -> str | None:
    records = follower.episode(index)
    if records is None:
        return None
    return render_episode(records, f"episode #{index}")
