"""The report's trajectory browser: a few chosen episodes as nested ``<details>`` elements.

Chosen per run: the episodes flagged for review, one failure per distinct failure reason,
and a couple of successes (at most ``limit`` in all). Each step shows the action, the tool
result or error, new observation text, and the reward components, all escaped and cut to
a readable length. Pure HTML: it opens and closes without JavaScript.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from html import escape
from pathlib import Path
from typing import Any

from gymforge.trajectory.schema import load_line
from gymforge.wording import decimal, plural

TEXT_LIMIT = 600


def _cut(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more chars]"


def choose_episodes(data: dict[str, Any], limit: int = 10) -> list[tuple[str, str]]:
    """``(episode_id, why)`` pairs from an ``eval.json``: flagged, failures, successes."""
    chosen: dict[str, str] = {}
    for f in data.get("review", {}).get("episodes", [])[:4]:
        chosen.setdefault(f["episode_id"], "flagged: " + "; ".join(f["reasons"]))
    for r in data.get("failures", {}).get("reasons", [])[:4]:
        chosen.setdefault(r["example"], f"failure: {r['reason']}")
    return list(chosen.items())[:limit]


def read_selected(
    path: Path, wanted: Iterable[str], extra_successes: int = 2
) -> dict[str, list[dict[str, Any]]]:
    """Raw records of the ``wanted`` episodes, plus the first ``extra_successes``
    successful episodes, read line by line (no other episode is kept in memory)."""
    want = set(wanted)
    found: dict[str, list[dict[str, Any]]] = {}
    pending: dict[str, list[dict[str, Any]]] = {}
    successes = 0
    if not path.exists():
        return found
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            try:
                rec = load_line(line)
            except json.JSONDecodeError:
                break  # a torn tail
            eid = rec.get("episode_id")
            pending.setdefault(eid, []).append(rec)
            if rec.get("record") != "episode":
                continue
            records = pending.pop(eid)
            if eid in want:
                found[eid] = records
            elif rec.get("success") and successes < extra_successes:
                successes += 1
                found[eid] = records
    return found


def _action(action: dict[str, Any] | None) -> str:
    if not action:
        return "<em>reset</em>"
    kind = action.get("kind")
    if kind == "tool_call":
        args = json.dumps(action.get("arguments", {}), ensure_ascii=False)
        return f"<code>{escape(str(action.get('name')))}</code>({escape(_cut(args, 300))})"
    if kind == "reply":
        return "reply: " + escape(_cut(str(action.get("text", ""))))
    return "malformed: " + escape(_cut(str(action.get("raw", "")), 300))


def _outcome(rec: dict[str, Any]) -> str:
    result = rec.get("tool_result")
    bits = []
    if result:
        if result.get("ok"):
            bits.append('<span class="ok">ok</span>')
        else:
            err = result.get("error") or {}
            bits.append(
                f'<span class="bad">error {escape(str(err.get("kind")))}</span>: '
                + escape(_cut(str(err.get("message", "")), 200))
            )
        if result.get("fault"):
            bits.append(f"fault {escape(str(result['fault']))}")
    verdict = (rec.get("info") or {}).get("verdict")
    if verdict:
        mark = "passed" if verdict.get("passed") else f"failed ({verdict.get('reason')})"
        facts = escape(json.dumps(verdict.get("facts", {}))[:300])
        bits.append(f"verdict {escape(mark)} {facts}")
    if rec.get("truncated"):
        bits.append('<span class="bad">truncated</span>')
    return "; ".join(bits)


def _observation(rec: dict[str, Any]) -> str:
    messages = (rec.get("observation") or {}).get("rendered") or []
    text = "\n".join(f"[{m.get('role')}] {m.get('content', '')}" for m in messages)
    return f"<pre>{escape(_cut(text))}</pre>" if text else ""


def render_episode(records: Sequence[dict[str, Any]], why: str) -> str:
    """One ``<details>`` element for one episode."""
    end = records[-1]
    status = "success" if end.get("success") else f"fail: {end.get('failure_reason')}"
    summary = (
        f"{escape(str(end.get('task_id')))} · rollout {end.get('rollout', 0)} · "
        f"{escape(status)} · reward {decimal(end.get('reward', 0))} · "
        f"{plural(int(end.get('steps') or 0), 'step')}"
        f" — <em>{escape(why)}</em>"
    )
    rows = []
    for rec in records[:-1]:
        comps = ", ".join(f"{k} {v:+.2f}" for k, v in (rec.get("reward_components") or {}).items())
        rows.append(
            f"<tr><td>{rec.get('step')}</td><td>{_action(rec.get('action'))}</td>"
            f"<td>{_outcome(rec)}</td><td>{escape(comps)}</td>"
            f"<td>{_observation(rec)}</td></tr>"
        )
    return (
        f'<details class="episode"><summary>{summary}</summary>'
        f"<p>episode <code>{escape(str(end.get('episode_id')))}</code>, split "
        f"{escape(str(end.get('split')))}, difficulty {end.get('difficulty')}</p>"
        '<table class="steps"><tr><th>step</th><th>action</th><th>outcome</th>'
        "<th>reward</th><th>observation</th></tr>" + "".join(rows) + "</table></details>"
    )


def browser_section(run_name: str, run_dir: Path, data: dict[str, Any], limit: int = 10) -> str:
    """The browser block of one run: its chosen episodes, or a note when there are none."""
    chosen = choose_episodes(data, limit)
    found = read_selected(run_dir / "trajectories.jsonl", [e for e, _ in chosen])
    reasons = dict(chosen)
    items = [render_episode(found[e], reasons[e]) for e, _ in chosen if e in found]
    items += [
        render_episode(recs, "a successful episode")
        for eid, recs in found.items()
        if eid not in reasons
    ][: max(0, limit - len(items))]
    body = "".join(items) or "<p>No trajectories found for this run.</p>"
    return f"<h3>{escape(run_name)}</h3>{body}"
