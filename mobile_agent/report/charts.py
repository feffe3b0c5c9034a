"""Small inline SVG charts for the run report: stacked horizontal bars and a histogram. No JavaScript."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = {
    "complete": "#2e9e5b",
    "finished (unverified)": "#8fbf5a",
    "partial": "#e0b400",
    "infeasible": "#7f8c9a",
    "failed": "#d64545",
    "other": "#c9ced6",
}
DEFAULT_COLOURS = ("#4a7bd0", "#d98c3f", "#8a5cc2", "#3aa6a6", "#c2588a", "#7a9a3a")


@dataclass(frozen=True)
class BarRow:
    label: str
    parts: dict[str, int]  # series name -> count, drawn left to right in the order given

    @property
    def total(self) -> int:
        return sum(self.parts.values())


def colour_for(series: str, index: int) -> str:
    return PALETTE.get(series, DEFAULT_COLOURS[index % len(DEFAULT_COLOURS)])


def stacked_bars(rows: Sequence[BarRow], *, title: str, width: int = 640, bar_height: int = 22) -> str:
    """One horizontal bar per row, split into coloured parts, with a legend. Empty string when nothing to draw."""
    if not rows:
        return ""
    series: list[str] = []
    for row in rows:
        series.extend(name for name in row.parts if name not in series)
    label_w, count_w, gap = 170, 48, 8
    plot_w = width - label_w - count_w
    top = 28
    legend_y = top + len(rows) * (bar_height + gap) + 6
    height = legend_y + 22
    biggest = max(row.total for row in rows) or 1
    out = [_open(width, height, title), _text(0, 16, title, weight="bold")]
    for i, row in enumerate(rows):
        y = top + i * (bar_height + gap)
        out.append(_text(label_w - 8, y + bar_height * 0.7, _short(row.label, 24), anchor="end"))
        x = float(label_w)
        for j, name in enumerate(series):
            count = row.parts.get(name, 0)
            if not count:
                continue
            w = plot_w * count / biggest
            out.append(
                f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{bar_height}" '
                f'fill="{colour_for(name, j)}"><title>{escape(row.label)}: {escape(name)} {count}</title></rect>'
            )
            x += w
        out.append(_text(x + 6, y + bar_height * 0.7, str(row.total)))
    x = float(label_w)
    for j, name in enumerate(series):
        out.append(f'<rect x="{x:.0f}" y="{legend_y}" width="12" height="12" fill="{colour_for(name, j)}"/>')
        out.append(_text(x + 16, legend_y + 10, name))
        x += 28 + 7 * len(name)
    out.append("</svg>")
    return "".join(out)


def histogram(
    values: Sequence[float], *, title: str, unit: str = "ms", bins: int = 12, width: int = 640
) -> str:
    """Counts of ``values`` in equal-width bins, with the range under the axis. Empty string without values."""
    if not values:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * bins
    for value in values:
        counts[min(bins - 1, int((value - low) / span * bins))] += 1
    height, top, bottom, left = 200, 28, 34, 36
    plot_h = height - top - bottom
    plot_w = width - left - 10
    bar_w = plot_w / bins
    biggest = max(counts)
    out = [_open(width, height, title), _text(0, 16, title, weight="bold")]
    for i, count in enumerate(counts):
        h = plot_h * count / biggest if biggest else 0
        x = left + i * bar_w
        lo = low + span * i / bins
        hi = low + span * (i + 1) / bins
        out.append(
            f'<rect x="{x + 1:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w - 2:.1f}" height="{h:.1f}" '
            f'fill="#4a7bd0"><title>{lo:.0f}-{hi:.0f} {unit}: {count}</title></rect>'
        )
        if count:
            out.append(_text(x + bar_w / 2, top + plot_h - h - 3, str(count), anchor="middle", size=10))
    axis_y = top + plot_h
    out.append(f'<line x1="{left}" y1="{axis_y}" x2="{left + plot_w}" y2="{axis_y}" stroke="#888"/>')
    out.append(_text(left, axis_y + 16, f"{low:.0f} {unit}", size=11))
    out.append(_text(left + plot_w, axis_y + 16, f"{high:.0f} {unit}", anchor="end", size=11))
    out.append(_text(left + plot_w / 2, axis_y + 30, f"{len(values)} steps", anchor="middle", size=11))
    out.append("</svg>")
    return "".join(out)


def _open(width: int, height: int, title: str) -> str:
    return (
        f'<svg class="chart" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{escape(title)}">'
    )


def _text(
    x: float, y: float, text: str, *, anchor: str = "start", size: int = 12, weight: str = "normal"
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" font-weight="{weight}" text-anchor="{anchor}" '
        f'font-family="sans-serif" fill="#222">{escape(text)}</text>'
    )


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


__all__ = ["BarRow", "histogram", "stacked_bars"]
