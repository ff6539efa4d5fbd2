"""A tiny static-SVG plotting kit for the HTML report: no JavaScript, no external assets.

Every function returns one ``<svg>`` element as a string, sized by ``viewBox`` so it scales
with the page, with a ``<title>`` for screen readers and ``data-plot`` naming its kind.
Series are drawn in the Okabe-Ito colour-blind-safe palette, in the order given, so one run
keeps one colour across every plot of a report. Missing values (None) are simply not drawn.

- :func:`bar_chart`: grouped bars over categories, optional interval whiskers;
- :func:`histogram`: grouped counts over numeric bins, optional shaded band;
- :func:`line_chart`: lines with markers over categorical x, optional whiskers;
- :func:`scatter`: points over numeric x and y.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from html import escape

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#000")
Interval = tuple[float, float] | None
Margins = tuple[int, int, int, int]  # top, right, bottom, left


def color(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _colors(names: Sequence[str], given: Mapping[str, str] | None) -> list[str]:
    """Each series' colour: ``given[name]`` when set, else the palette in order."""
    return [(given or {}).get(name, color(i)) for i, name in enumerate(names)]


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values from at or below ``lo`` to at or above ``hi`` (steps of 1, 2 or 5
    times a power of 10)."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / max(1, count)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 5, 10) if m * mag >= raw)
    first = math.floor(lo / step + 1e-9) * step
    ticks = [round(first, 10)]
    while ticks[-1] < hi - step * 1e-9:
        ticks.append(round(ticks[-1] + step, 10))
    return ticks


def _fmt(v: float, percent: bool) -> str:
    if percent:
        return f"{v * 100:.0f}%"
    return f"{v:g}" if abs(v) >= 1e-3 or v == 0 else f"{v:.1e}"


class _Frame:
    """Plot area geometry and the SVG parts shared by every chart."""

    def __init__(
        self, title: str, width: int, height: int, margins: Margins = (42, 16, 48, 56)
    ) -> None:
        self.title, self.width, self.height = title, width, height
        self.top, self.right, self.bottom, self.left = margins
        self.parts: list[str] = []

    @property
    def x0(self) -> float:
        return self.left

    @property
    def x1(self) -> float:
        return self.width - self.right

    @property
    def y0(self) -> float:
        return self.height - self.bottom

    @property
    def y1(self) -> float:
        return self.top

    def yscale(self, lo: float, hi: float) -> Scale:
        return Scale(lo, hi, self.y0, self.y1)

    def text(
        self, x: float, y: float, s: str, *, anchor: str = "middle", size: int = 11, extra: str = ""
    ) -> None:
        self.parts.append(
            f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}"'
            f"{extra}>{escape(s)}</text>"
        )

    def y_axis(self, scale: Scale, label: str, percent: bool) -> None:
        for t in nice_ticks(scale.lo, scale.hi):
            if scale.lo - 1e-9 <= t <= scale.hi + 1e-9:
                y = scale(t)
                self.parts.append(
                    f'<line x1="{self.x0}" x2="{self.x1}" y1="{y:.1f}" y2="{y:.1f}" '
                    'stroke="#e3e3e3"/>'
                )
                self.text(self.x0 - 5, y + 4, _fmt(t, percent), anchor="end", size=10)
        self.parts.append(
            f'<line x1="{self.x0}" x2="{self.x0}" y1="{self.y0}" y2="{self.y1}" stroke="#555"/>'
            f'<line x1="{self.x0}" x2="{self.x1}" y1="{self.y0}" y2="{self.y0}" stroke="#555"/>'
        )
        if label:
            cy = (self.y0 + self.y1) / 2
            self.text(14, cy, label, extra=f' transform="rotate(-90 14 {cy:.1f})"')

    def x_label(self, label: str) -> None:
        if label:
            self.text((self.x0 + self.x1) / 2, self.height - 6, label)

    def legend(self, names: Sequence[str], cols: Sequence[str]) -> None:
        if len(names) < 2 and not (names and names[0]):
            return
        x = self.x0 + 4
        for i, name in enumerate(names):
            label = name if len(name) <= 28 else name[:27] + "…"
            self.parts.append(
                f'<rect x="{x:.1f}" y="{self.top - 22}" width="10" height="10" fill="{cols[i]}"/>'
            )
            self.text(x + 14, self.top - 13, label, anchor="start", size=10)
            x += 22 + 6.2 * len(label)

    def svg(self, kind: str) -> str:
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" class="plot" data-plot="{kind}" '
            f'viewBox="0 0 {self.width} {self.height}" role="img" '
            f'font-family="system-ui, sans-serif"><title>{escape(self.title)}</title>'
        )
        title = (
            f'<text x="{self.width / 2:.1f}" y="13" font-size="12" font-weight="600" '
            f'text-anchor="middle">{escape(self.title)}</text>'
        )
        return head + title + "".join(self.parts) + "</svg>"


class Scale:
    """Linear map from data ``[lo, hi]`` to pixels ``[p0, p1]``."""

    def __init__(self, lo: float, hi: float, p0: float, p1: float) -> None:
        self.lo, self.hi = lo, hi if hi > lo else lo + 1
        self.p0, self.p1 = p0, p1

    def __call__(self, v: float) -> float:
        v = min(max(v, self.lo), self.hi)
        return self.p0 + (v - self.lo) / (self.hi - self.lo) * (self.p1 - self.p0)


def _range(
    values: Sequence[float | None], ymin: float | None, ymax: float | None
) -> tuple[float, float]:
    finite = [v for v in values if v is not None and math.isfinite(v)]
    lo = min([*finite, 0.0]) if ymin is None else ymin
    hi = max([*finite, lo + 1e-9]) if ymax is None else ymax
    if ymax is None:
        hi = nice_ticks(lo, hi)[-1]
    return lo, hi


def _whisker(fr: _Frame, x: float, y_lo: float, y_hi: float) -> None:
    fr.parts.append(
        f'<path d="M{x:.1f},{y_lo:.1f}V{y_hi:.1f}M{x - 3:.1f},{y_lo:.1f}h6M{x - 3:.1f},'
        f'{y_hi:.1f}h6" stroke="#222" fill="none" stroke-width="1"/>'
    )


def bar_chart(
    categories: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    ylabel: str = "",
    xlabel: str = "",
    percent: bool = False,
    ymin: float | None = None,
    ymax: float | None = None,
    errors: Mapping[str, Sequence[Interval]] | None = None,
    colors: Mapping[str, str] | None = None,
    width: int = 560,
    height: int = 300,
) -> str:
    """Grouped bars: one group per category, one bar per series (with optional whiskers)."""
    fr = _Frame(title, width, height)
    values = [v for vs in series.values() for v in vs]
    lo, hi = _range(values, ymin, ymax)
    ys = fr.yscale(lo, hi)
    fr.y_axis(ys, ylabel, percent)
    names = list(series)
    cols = _colors(names, colors)
    slot = (fr.x1 - fr.x0) / max(1, len(categories))
    bar = slot * 0.8 / max(1, len(names))
    for ci, cat in enumerate(categories):
        cx = fr.x0 + slot * ci
        for si, name in enumerate(names):
            v = series[name][ci] if ci < len(series[name]) else None
            if v is None:
                continue
            x = cx + slot * 0.1 + bar * si
            top, base = ys(max(v, lo)), ys(max(min(0.0, hi), lo))
            y, h = min(top, base), abs(base - top)
            tip = f"{name} {cat}: {_fmt(v, percent) if percent else f'{v:.4g}'}"
            fr.parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{max(bar - 1, 1):.1f}" '
                f'height="{max(h, 0.5):.1f}" fill="{cols[si]}"><title>{escape(tip)}'
                "</title></rect>"
            )
            iv = (errors or {}).get(name)
            if iv and ci < len(iv) and iv[ci] is not None:
                a, b = iv[ci]  # type: ignore[misc]
                _whisker(fr, x + bar / 2, ys(a), ys(b))
        room = max(3, int(slot / 6.2))
        label = cat if len(cat) <= room else cat[: room - 1] + "…"
        fr.text(cx + slot / 2, fr.y0 + 14, label, size=10)
    fr.x_label(xlabel)
    fr.legend(names if len(names) > 1 else [], cols)
    return fr.svg("bar")


def histogram(
    series: Mapping[str, Sequence[float]],
    edges: Sequence[float],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "count",
    band: tuple[float, float] | None = None,
    band_label: str = "band",
    percent_x: bool = False,
    colors: Mapping[str, str] | None = None,
    width: int = 560,
    height: int = 300,
) -> str:
    """Counts of each series' values over bins ``edges`` (the last bin includes its right
    edge); ``band`` shades ``[lo, hi]`` on the x axis and labels it."""
    fr = _Frame(title, width, height)
    nb = len(edges) - 1
    counts = {name: [0] * nb for name in series}
    for name, values in series.items():
        for v in values:
            for b in range(nb):
                if edges[b] <= v < edges[b + 1] or (b == nb - 1 and v == edges[-1]):
                    counts[name][b] += 1
                    break
    top = max([c for cs in counts.values() for c in cs] + [1])
    ys = fr.yscale(0, nice_ticks(0, top)[-1])
    xs = Scale(edges[0], edges[-1], fr.x0, fr.x1)
    if band is not None:
        bx0, bx1 = xs(band[0]), xs(band[1])
        fr.parts.append(
            f'<rect class="band" x="{bx0:.1f}" y="{fr.y1}" width="{max(bx1 - bx0, 1):.1f}" '
            f'height="{fr.y0 - fr.y1}" fill="#2ca02c" fill-opacity="0.12" stroke="#2ca02c" '
            f'stroke-dasharray="4 3"/>'
        )
        fr.text((bx0 + bx1) / 2, fr.y1 + 12, band_label, size=10, extra=' fill="#1b7a1b"')
    fr.y_axis(ys, ylabel, False)
    names = list(series)
    cols = _colors(names, colors)
    for b in range(nb):
        left, right = xs(edges[b]), xs(edges[b + 1])
        w = (right - left) * 0.9 / max(1, len(names))
        for si, name in enumerate(names):
            c = counts[name][b]
            if c:
                y = ys(c)
                fr.parts.append(
                    f'<rect x="{left + (right - left) * 0.05 + w * si:.1f}" y="{y:.1f}" '
                    f'width="{max(w - 0.5, 0.5):.1f}" height="{fr.y0 - y:.1f}" '
                    f'fill="{cols[si]}"><title>{escape(name)}: {c}</title></rect>'
                )
    step = max(1, math.ceil(nb / 10))
    for i in range(0, nb + 1, step):
        fr.text(xs(edges[i]), fr.y0 + 14, _fmt(edges[i], percent_x), size=10)
    fr.x_label(xlabel)
    fr.legend(names if len(names) > 1 else [], cols)
    return fr.svg("histogram")


def line_chart(
    x: Sequence[str],
    series: Mapping[str, Sequence[float | None]],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "",
    percent: bool = False,
    ymin: float | None = 0.0,
    ymax: float | None = None,
    errors: Mapping[str, Sequence[Interval]] | None = None,
    colors: Mapping[str, str] | None = None,
    width: int = 560,
    height: int = 300,
) -> str:
    """One line with markers per series over evenly spaced categorical ``x``."""
    fr = _Frame(title, width, height)
    lo, hi = _range([v for vs in series.values() for v in vs], ymin, ymax)
    ys = fr.yscale(lo, hi)
    fr.y_axis(ys, ylabel, percent)
    slot = (fr.x1 - fr.x0) / max(1, len(x))
    cols = _colors(list(series), colors)

    def px(i: int) -> float:
        return fr.x0 + slot * (i + 0.5)

    for si, (name, values) in enumerate(series.items()):
        points = [(px(i), ys(v), v) for i, v in enumerate(values) if v is not None]
        if len(points) > 1:
            path = " ".join(
                f"{'M' if j == 0 else 'L'}{p[0]:.1f},{p[1]:.1f}" for j, p in enumerate(points)
            )
            fr.parts.append(f'<path d="{path}" fill="none" stroke="{cols[si]}" stroke-width="2"/>')
        iv = (errors or {}).get(name) or []
        for i, v in enumerate(values):
            if v is None:
                continue
            if i < len(iv) and iv[i] is not None:
                a, b = iv[i]  # type: ignore[misc]
                _whisker(fr, px(i), ys(a), ys(b))
            tip = f"{name} {x[i]}: {_fmt(v, percent) if percent else f'{v:.4g}'}"
            fr.parts.append(
                f'<circle cx="{px(i):.1f}" cy="{ys(v):.1f}" r="3.5" fill="{cols[si]}">'
                f"<title>{escape(tip)}</title></circle>"
            )
    for i, label in enumerate(x):
        fr.text(px(i), fr.y0 + 14, label, size=10)
    fr.x_label(xlabel)
    fr.legend(list(series) if len(series) > 1 else [], cols)
    return fr.svg("line")


def scatter(
    series: Mapping[str, Sequence[tuple[float, float]]],
    *,
    title: str,
    xlabel: str = "",
    ylabel: str = "",
    percent_y: bool = False,
    xlim: tuple[float, float] | None = None,
    ylim: tuple[float, float] | None = None,
    colors: Mapping[str, str] | None = None,
    width: int = 560,
    height: int = 300,
) -> str:
    """Points ``(x, y)`` per series on numeric axes."""
    fr = _Frame(title, width, height)
    xs_all = [p[0] for ps in series.values() for p in ps]
    ys_all = [p[1] for ps in series.values() for p in ps]
    xlo, xhi = xlim or (min(xs_all, default=0.0), max(xs_all, default=1.0))
    ylo, yhi = ylim or _range(ys_all, None, None)
    pad = (xhi - xlo) * 0.05 or 0.5
    xs = Scale(xlo - pad, xhi + pad, fr.x0, fr.x1)
    ys = fr.yscale(ylo, yhi)
    fr.y_axis(ys, ylabel, percent_y)
    cols = _colors(list(series), colors)
    for t in nice_ticks(xlo, xhi):
        if xlo - 1e-9 <= t <= xhi + 1e-9:
            fr.text(xs(t), fr.y0 + 14, _fmt(t, False), size=10)
    for si, (name, points) in enumerate(series.items()):
        for x, y in points:
            fr.parts.append(
                f'<circle cx="{xs(x):.1f}" cy="{ys(y):.1f}" r="3" fill="{cols[si]}" '
                f'fill-opacity="0.6"><title>{escape(name)}: ({x:g}, {y:.3g})</title></circle>'
            )
    fr.x_label(xlabel)
    fr.legend(list(series) if len(series) > 1 else [], cols)
    return fr.svg("scatter")
