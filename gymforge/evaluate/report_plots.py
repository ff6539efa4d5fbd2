"""The plots of the report: one inline SVG per figure, every run a series in its own colour.

Figures: pass@k and pass^k against k; mean reward by component; difficulty against success
(Wilson whiskers); train against held-out success; the step-count distribution; tool error
rates (all tools, then the most called ones); the per-task pass-rate histogram with the band
shaded (from a calibration run, else the default 2%-70%); per-task pass rate by difficulty
for calibration runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gymforge.evaluate import plots

if TYPE_CHECKING:
    from gymforge.evaluate.report import Run

DEFAULT_BAND = (0.02, 0.70)
RATE_EDGES = [i / 20 for i in range(21)]
MAX_TOOLS = 8


def _union(lists: list[list[Any]]) -> list[Any]:
    seen: dict[Any, None] = {}
    for values in lists:
        for v in values:
            seen.setdefault(v, None)
    return sorted(seen, key=lambda v: (str(type(v)), v))


def plots_section(runs: list[Run]) -> str:
    evals = [r for r in runs if r.eval is not None]
    palette = {r.name: plots.color(i) for i, r in enumerate(runs)}
    figs: list[str] = []
    if evals:
        ks = _union([[int(j) for j in r.metrics.get("pass@k", {})] for r in evals])
        for key, label in (
            ("pass@k", "pass@k (at least one of k succeeds)"),
            ("pass^k", "pass^k (all k succeed)"),
        ):
            figs.append(
                plots.line_chart(
                    [str(j) for j in ks],
                    {r.name: [r.metrics.get(key, {}).get(str(j)) for j in ks] for r in evals},
                    colors=palette,
                    title=label,
                    xlabel="k",
                    ylabel=key,
                    percent=True,
                    ymax=1.0,
                )
            )
        comps = _union([list(r.metrics.get("reward", {}).get("components", {})) for r in evals])
        figs.append(
            plots.bar_chart(
                comps,
                {r.name: [r.metrics["reward"]["components"].get(c) for c in comps] for r in evals},
                colors=palette,
                title="Mean reward by component",
                ylabel="reward per episode",
            )
        )
        levels = _union([[row["key"] for row in r.metrics.get("by_difficulty", [])] for r in evals])
        by = {
            r.name: {row["key"]: row["success"] for row in r.metrics["by_difficulty"]}
            for r in evals
        }
        figs.append(
            plots.line_chart(
                [str(v) for v in levels],
                {n: [d.get(v, {}).get("rate") for v in levels] for n, d in by.items()},
                errors={
                    n: [(d[v]["lo"], d[v]["hi"]) if v in d else None for v in levels]
                    for n, d in by.items()
                },
                colors=palette,
                title="Difficulty vs success (95% Wilson CI)",
                xlabel="difficulty level",
                ylabel="success",
                percent=True,
                ymax=1.0,
            )
        )
        gaps = {r.name: r.metrics.get("heldout_gap", {}) for r in evals}
        figs.append(
            plots.bar_chart(
                ["train", "held-out"],
                {
                    n: [g.get("train", {}).get("rate"), g.get("heldout", {}).get("rate")]
                    for n, g in gaps.items()
                },
                errors={n: [_iv(g.get("train")), _iv(g.get("heldout"))] for n, g in gaps.items()},
                colors=palette,
                title="Train vs held-out success (95% Wilson CI)",
                ylabel="success",
                percent=True,
                ymax=1.0,
            )
        )
        hist = {
            r.name: r.metrics.get("steps", {}).get("histogram", {}).get("all", {}) for r in evals
        }
        top = max([int(s) for h in hist.values() for s in h] + [1])
        width = max(1, -(-(top + 1) // 25))
        edges = [float(x) for x in range(0, top + width + 1, width)]
        figs.append(
            plots.histogram(
                {n: [float(s) for s, c in h.items() for _ in range(c)] for n, h in hist.items()},
                edges,
                colors=palette,
                title="Step-count distribution",
                xlabel="steps per episode",
                ylabel="episodes",
            )
        )
        calls: dict[str, int] = {}
        for r in evals:
            for tool, d in r.metrics.get("tools", {}).get("per_tool", {}).items():
                calls[tool] = calls.get(tool, 0) + d["calls"]
        tools = sorted(sorted(calls), key=lambda t: -calls[t])[:MAX_TOOLS]
        cats = ["all tools", *tools]
        figs.append(
            plots.bar_chart(
                cats,
                {
                    r.name: [
                        r.metrics["tools"].get("tool_error_rate"),
                        *[
                            r.metrics["tools"]["per_tool"].get(t, {}).get("error_rate")
                            for t in tools
                        ],
                    ]
                    for r in evals
                },
                colors=palette,
                title="Tool error rates (errors / calls)",
                ylabel="error rate",
                percent=True,
            )
        )
    figs.extend(_pass_rate_figures(runs))
    return "<div class='grid'>" + "".join(figs) + "</div>"


def _iv(d: dict[str, Any] | None) -> tuple[float, float] | None:
    return (d["lo"], d["hi"]) if d and d.get("n") else None


def _pass_rate_figures(runs: list[Run]) -> list[str]:
    palette = {r.name: plots.color(i) for i, r in enumerate(runs)}
    rates: dict[str, list[float]] = {}
    band = DEFAULT_BAND
    for r in runs:
        if r.calibration is not None:
            band = (float(r.calibration["band"][0]), float(r.calibration["band"][1]))
            rows = [x for x in r.calibration["rows"] if x["n"]]
        else:
            rows = [x for x in r.metrics.get("pass_rates", []) if x["n"] > 1]
        if rows:
            rates[r.name] = [x["pass_rate"] for x in rows]
    if not rates:
        return []
    label = f"band {band[0] * 100:g}% to {band[1] * 100:g}%"
    figs = [
        plots.histogram(
            rates,
            RATE_EDGES,
            colors=palette,
            title="Per-task pass rate",
            xlabel="pass rate over the task's rollouts",
            ylabel="tasks",
            band=band,
            band_label=label,
            percent_x=True,
        )
    ]
    for r in runs:
        if r.calibration is not None:
            points = [
                (float(x["difficulty"]), x["pass_rate"]) for x in r.calibration["rows"] if x["n"]
            ]
            figs.append(
                plots.scatter(
                    {r.name: points},
                    colors=palette,
                    title=f"{r.name}: per-task pass rate by difficulty",
                    xlabel="difficulty level",
                    ylabel="pass rate",
                    percent_y=True,
                    ylim=(0.0, 1.0),
                )
            )
    return figs
