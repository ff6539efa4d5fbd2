"""Console tables of an eval (rich, written to stderr by the CLI). The verifier-error rate
sits right under success: those episodes are failures in it (``trajectory.outcome``)."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def eval_tables(data: dict[str, Any]) -> list[Table]:
    """The headline table and the per-family/difficulty/split breakdown, for stderr."""
    m = data["metrics"]
    head = Table("metric", "value", title=f"gymforge eval {data['env']} / {data['policy']}")

    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v:.1%}"

    s = m["success"]
    v = m["verifier_error"]
    unscored = f" ({m['unscored']} unscored)" if m.get("unscored") else ""
    head.add_row("episodes / tasks", f"{m['episodes']} / {m['tasks']}{unscored}")
    head.add_row("success [95% CI]", f"{pct(s['rate'])} [{pct(s['lo'])}, {pct(s['hi'])}]")
    head.add_row(
        "verifier error rate [95% CI]",
        f"{pct(v['rate'])} [{pct(v['lo'])}, {pct(v['hi'])}] ({m['verifier_errors']} counted "
        "as failures)",
    )
    for key in ("pass@k", "pass^k"):
        head.add_row(key, "  ".join(f"k={j}: {pct(v)}" for j, v in m[key].items()))
    comps = ", ".join(f"{c} {v:+.3f}" for c, v in m["reward"]["components"].items())
    head.add_row("mean reward", f"{m['reward']['mean'] or 0:.3f} ({comps})")
    eff = m["steps"]["efficiency"]
    head.add_row("steps (mean / median)", f"{m['steps']['mean'] or 0:.1f} / {m['steps']['median']}")
    head.add_row("step efficiency vs oracle", "-" if eff["mean"] is None else f"{eff['mean']:.2f}")
    t = m["tools"]
    head.add_row(
        "tool calls / episode",
        "-" if t["tool_calls_per_episode"] is None else f"{t['tool_calls_per_episode']:.1f}",
    )
    head.add_row("tool error rate", pct(t["tool_error_rate"]))
    head.add_row("invalid call rate", pct(t["invalid_call_rate"]))
    head.add_row("truncation rate", pct(m["truncation"]["rate"]))
    g = m["heldout_gap"]
    head.add_row(
        "held-out gap (train - held-out)",
        g.get("reason", "")
        if g["gap"] is None
        else f"{g['gap']:+.1%} [{g['lo']:+.1%}, {g['hi']:+.1%}]"
        + (" significant" if g["significant"] else ""),
    )
    reasons = data["failures"]["reasons"][:3]
    head.add_row("top failure reasons", ", ".join(f"{r['reason']} {r['count']}" for r in reasons))
    head.add_row("flagged for review", str(data["review"]["flagged"]))
    kk = f"pass@{m['k']}"
    parts = Table(
        "breakdown", "key", "episodes", "success [95% CI]", "verifier errors", kk, "mean reward"
    )
    for by in ("by_split", "by_family", "by_difficulty"):
        for row in m[by]:
            r = row["success"]
            parts.add_row(
                by[3:],
                str(row["key"]),
                str(row["episodes"]),
                f"{pct(r['rate'])} [{pct(r['lo'])}, {pct(r['hi'])}]",
                pct(row.get("verifier_error_rate")),
                pct(row["pass@k"]),
                f"{row['mean_reward']:.3f}",
            )
    return [head, parts]
