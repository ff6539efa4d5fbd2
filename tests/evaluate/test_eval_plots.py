"""The SVG plotting kit: well-formed, self-contained SVG with the marks it promises."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from gymforge.evaluate import plots

NS = "{http://www.w3.org/2000/svg}"


def parse(svg: str) -> ET.Element:
    root = ET.fromstring(svg)
    assert root.tag == f"{NS}svg" and root.get("viewBox")
    assert "<script" not in svg and "href" not in svg  # no JS, no external asset
    return root


def marks(root: ET.Element, tag: str) -> list[ET.Element]:
    return list(root.iter(f"{NS}{tag}"))


def test_nice_ticks() -> None:
    assert plots.nice_ticks(0, 1) == [0, 0.2, 0.4, 0.6, 0.8, 1.0]
    assert plots.nice_ticks(0, 73) == [0, 20, 40, 60, 80]
    assert plots.nice_ticks(-0.3, 0.1)[0] <= -0.3
    assert plots.nice_ticks(5, 5)  # degenerate range still gives ticks


def test_bar_chart_draws_one_bar_per_value_and_skips_none() -> None:
    svg = plots.bar_chart(
        ["a", "b", "c"],
        {"run1": [0.5, None, 0.25], "run2": [0.1, 0.2, 0.3]},
        title="T <&> escaped",
        percent=True,
        errors={"run1": [(0.4, 0.6), None, (0.1, 0.4)]},
    )
    root = parse(svg)
    bars = [r for r in marks(root, "rect") if r.find(f"{NS}title") is not None]
    assert len(bars) == 5
    assert "T &lt;&amp;&gt; escaped" in svg
    assert len(marks(root, "path")) == 2  # two whiskers
    assert root.get("data-plot") == "bar"


def test_bar_chart_handles_negative_values() -> None:
    root = parse(plots.bar_chart(["x", "y"], {"r": [-0.5, 1.0]}, title="neg"))
    heights = [
        float(r.get("height", 0)) for r in marks(root, "rect") if r.find(f"{NS}title") is not None
    ]
    assert all(h > 0 for h in heights)


def test_histogram_counts_and_band() -> None:
    edges = [0.0, 0.25, 0.5, 0.75, 1.0]
    svg = plots.histogram(
        {"a": [0.0, 0.1, 0.3, 1.0, 1.0], "b": [0.6]},
        edges,
        title="rates",
        band=(0.02, 0.7),
        band_label="band 2% to 70%",
        percent_x=True,
    )
    root = parse(svg)
    titles = sorted(t.text or "" for r in marks(root, "rect") for t in r.findall(f"{NS}title"))
    assert titles == ["a: 1", "a: 2", "a: 2", "b: 1"]
    assert [r for r in marks(root, "rect") if r.get("class") == "band"]
    assert "band 2% to 70%" in svg


def test_line_chart_and_scatter() -> None:
    root = parse(
        plots.line_chart(
            ["1", "2", "4"],
            {"pass@k": [0.4, 0.55, None], "pass^k": [0.4, 0.3, 0.2]},
            title="k",
            errors={"pass^k": [(0.3, 0.5), None, None]},
        )
    )
    assert len(marks(root, "circle")) == 5
    root = parse(plots.scatter({"r": [(1, 0.5), (2, 0.25), (3, 1.0)]}, title="s"))
    assert len(marks(root, "circle")) == 3


def test_colours_follow_names() -> None:
    svg = plots.bar_chart(["a"], {"x": [1.0], "y": [2.0]}, title="c", colors={"y": "#123456"})
    assert "#123456" in svg and plots.color(0) in svg


@pytest.mark.parametrize("empty", [{}, {"a": []}])
def test_empty_inputs_still_render(empty: dict[str, list[float]]) -> None:
    parse(plots.histogram(empty, [0, 1], title="e"))
    parse(plots.line_chart([], {}, title="e"))
    parse(plots.bar_chart([], {}, title="e"))
