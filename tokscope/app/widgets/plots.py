"""Plots drawn with text: bar charts of eighth blocks and scatter plots of braille dots.

No images and no plotting library. A bar chart of eighth blocks (``▁▂▃▄▅▆▇█``) and a scatter
plot of braille dots (2x4 dots per cell) on linear or log axes, coloured with the 16 ANSI colours
so they read the same in a 16-colour terminal and over SSH. Without colour (``NO_COLOR``) they
switch to ASCII: ``#`` bars and one mark per series (``* o + x``). The geometry (bar heights,
axis placement, dots) is pure and tested in :mod:`tokscope.core.insights.stats`; the widgets lay it out.
A series of a single point (a built-in encoding on the training screen's sweep) is drawn as a
labelled marker, not as one dot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

from ...core.insights import stats as geo

#: Series colours (ANSI names, so a 16-colour terminal shows them as they are).
SERIES_COLOURS = ("cyan", "yellow", "magenta", "green", "red", "blue", "bright_white")
#: ASCII marks per series when there is no colour.
SERIES_MARKS = ("*", "o", "+", "x", "%", "@", "&")


def _fmt(value: float) -> str:
    """A short axis label: 1234 -> '1.2k', 0.5 -> '0.5'.

    >>> [_fmt(v) for v in (3, 1234, 2_500_000, 0.5, 12.25)]
    ['3', '1.2k', '2.5M', '0.5', '12.2']
    """
    if abs(value) >= 1e6:
        return f"{value / 1e6:.1f}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:.0f}k"
    if abs(value) >= 1e3:
        return f"{value / 1e3:.1f}k"
    if value == int(value):
        return str(int(value))
    return f"{value:.1f}" if abs(value) >= 1 else f"{value:.2g}"


def fit(title: str, width: int) -> str:
    """``title`` cut to ``width`` cells with an ellipsis, and a cell left free after it.

    >>> fit("Rank-frequency", 20), fit("Lengths in bytes · mean 3.35", 12)
    ('Rank-frequency', 'Lengths in…')
    """
    if len(title) < width:
        return title
    return title[: max(0, width - 2)] + "…"


class PlotWidget(Widget):
    """A widget that draws a list of rows (each a list of ``(text, style)``) with the Line API."""

    DEFAULT_CSS = """
    PlotWidget { height: 12; min-height: 5; }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._rows: list[list[tuple[str, Style | None]]] | None = None
        self._rows_for: tuple[int, int] = (0, 0)

    @property
    def ascii_only(self) -> bool:
        try:
            return bool(self.app.no_color)
        except Exception:  # noqa: BLE001 - not in an app (a plot built on its own)
            return False

    def invalidate(self) -> None:
        self._rows = None
        self.refresh()

    def on_resize(self) -> None:
        self.invalidate()

    def build(self, width: int, height: int) -> list[list[tuple[str, Style | None]]]:  # pragma: no cover
        raise NotImplementedError

    def render_line(self, y: int) -> Strip:
        width, height = self.size.width, self.size.height
        if self._rows is None or self._rows_for != (width, height):
            self._rows = self.build(width, height) if width > 0 and height > 0 else []
            self._rows_for = (width, height)
        base = self.rich_style
        if y >= len(self._rows):
            return Strip.blank(width, base)
        segments = [Segment(text, base + style if style else base) for text, style in self._rows[y] if text]
        return Strip(segments).adjust_cell_length(width, base)


class BarChart(PlotWidget):
    """Vertical bars for ``(label, value)`` pairs, the tallest filling the plot, labels below."""

    def __init__(self, title: str = "", **kwargs) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.bars: list[tuple[str, float]] = []
        self.note = ""

    def set_data(self, bars: Sequence[tuple[str, float]], title: str | None = None, note: str = "") -> None:
        self.bars = list(bars)
        if title is not None:
            self.title = title
        self.note = note
        self.invalidate()

    def build(self, width: int, height: int) -> list[list[tuple[str, Style | None]]]:
        bold = Style(bold=True)
        dim = Style(dim=True)
        rows: list[list[tuple[str, Style | None]]] = [[(fit(self.title, width), bold)]]
        if not self.bars or height < 4:
            rows.append([(self.note or "no data", dim)])
            return rows
        top = max(v for _, v in self.bars)
        ylabel = _fmt(top)
        yw = len(ylabel) + 1
        plot_h = max(1, height - 2 - (1 if self.note else 0))
        n = len(self.bars)
        slot = max(1, min(4, (width - yw) // max(n, 1)))
        bars = self.bars[: max(1, (width - yw) // slot)]
        bar_w = slot - 1 if slot >= 2 else 1
        cells = geo.bar_rows([v for _, v in bars], plot_h, ascii_only=self.ascii_only)
        colour = None if self.ascii_only else Style(color="cyan")
        for r, line in enumerate(cells):
            label = ylabel if r == 0 else ("0" if r == plot_h - 1 and plot_h > 1 else "")
            row: list[tuple[str, Style | None]] = [(label.rjust(yw - 1) + " ", dim)]
            row.append(("".join(ch * bar_w + " " * (slot - bar_w) for ch in line), colour))
            rows.append(row)
        labels = [" " * yw]
        pos = 0
        for i, (label, _) in enumerate(bars):
            start = i * slot
            if start < pos + (1 if i else 0):
                continue
            labels.append(" " * (start - pos) + label)
            pos = start + len(label)
        rows.append([("".join(labels)[:width], dim)])
        if self.note:
            rows.append([(self.note[:width], dim)])
        return rows


@dataclass(frozen=True)
class Series:
    """One set of points on a scatter plot, with its legend name."""

    name: str
    points: tuple[tuple[float, float], ...]


class ScatterPlot(PlotWidget):
    """Points of one or more series on linear or log axes, in braille dots, with a legend.

    ``fit`` (a :class:`~tokscope.core.insights.stats.LineFit` in natural logs) draws a fitted line when
    both axes are logarithmic.
    """

    def __init__(self, title: str = "", *, x_title: str = "", y_title: str = "", log_x: bool = False,
                 log_y: bool = False, **kwargs) -> None:
        super().__init__(**kwargs)
        self.title = title
        self.x_title = x_title
        self.y_title = y_title
        self.log_x = log_x
        self.log_y = log_y
        self.series: list[Series] = []
        self.fit: geo.LineFit | None = None
        self.note = ""

    def set_data(self, series: Sequence[Series], *, fit: geo.LineFit | None = None, title: str | None = None,
                 note: str = "") -> None:
        self.series = list(series)
        self.fit = fit
        if title is not None:
            self.title = title
        self.note = note
        self.invalidate()

    def _legend(self) -> list[tuple[str, Style | None]]:
        if len(self.series) < 2:
            return []
        out: list[tuple[str, Style | None]] = [("  ", None)]
        for i, s in enumerate(self.series):  # noqa: B007
            mark = SERIES_MARKS[i % len(SERIES_MARKS)] if self.ascii_only else "⣿"
            colour = None if self.ascii_only else Style(color=SERIES_COLOURS[i % len(SERIES_COLOURS)])
            out += [(mark, colour), (f" {s.name}  ", None)]
        return out

    def build(self, width: int, height: int) -> list[list[tuple[str, Style | None]]]:
        bold, dim = Style(bold=True), Style(dim=True)
        legend = self._legend()
        rows: list[list[tuple[str, Style | None]]] = [[(fit(self.title, width), bold)]]
        points = [p for s in self.series for p in s.points]
        if not points or height < 5:
            rows.append([(self.note or "no data", dim)])
            return rows
        x = geo.axis_for([p[0] for p in points], log=self.log_x)
        y = geo.axis_for([p[1] for p in points], log=self.log_y)
        ytop, ybottom = _fmt(y.high), _fmt(y.low)
        yw = max(len(ytop), len(ybottom), len(self.y_title[:8])) + 1
        plot_w = max(2, width - yw - 1)
        plot_h = max(1, height - 2 - (1 if self.note else 0) - (1 if legend else 0))
        dots = geo.dot_grid([s.points for s in self.series], x, y, plot_w, plot_h)
        line = geo.line_dots(self.fit, x, y, plot_w, plot_h) if self.fit is not None else []
        # compose cells: series drawn over the fitted line; the last series wins a shared cell's colour
        cell_bits = [[0] * plot_w for _ in range(plot_h)]
        cell_owner = [[-2] * plot_w for _ in range(plot_h)]  # -2 empty, -1 fit line, else series index
        layers = [(-1, line)] + list(enumerate(dots))
        for owner, layer in layers:
            for dx, dy in layer:
                col, sub_x = divmod(dx, 2)
                row, sub_y = divmod(dy, 4)
                if 0 <= row < plot_h and 0 <= col < plot_w:
                    cell_bits[row][col] |= geo.BRAILLE_BITS[sub_x][sub_y]
                    if owner >= cell_owner[row][col]:
                        cell_owner[row][col] = owner
        for r in range(plot_h):
            if r == 0:
                label = ytop
            elif r == plot_h - 1:
                label = ybottom
            elif r == plot_h // 2 and self.y_title:
                label = self.y_title[: yw - 1]
            else:
                label = ""
            row: list[tuple[str, Style | None]] = [(label.rjust(yw - 1) + "│", dim)]
            for c in range(plot_w):
                owner = cell_owner[r][c]
                if owner == -2:
                    row.append((" ", None))
                elif self.ascii_only:
                    row.append(("." if owner == -1 else SERIES_MARKS[owner % len(SERIES_MARKS)], None))
                else:
                    style = dim if owner == -1 else Style(color=SERIES_COLOURS[owner % len(SERIES_COLOURS)])
                    row.append((chr(0x2800 + cell_bits[r][c]), style))
            rows.append(row)
        # a series of one point (a built-in encoding beside a sweep) is a labelled marker, not a dot
        for owner, (series, layer) in enumerate(zip(self.series, dots)):
            if len(series.points) != 1 or not layer:
                continue
            dx, dy = layer[0]
            col, row_index = min(dx // 2, plot_w - 1), min(dy // 4, plot_h - 1)
            style = None if self.ascii_only else Style(color=SERIES_COLOURS[owner % len(SERIES_COLOURS)], bold=True)
            mark = SERIES_MARKS[owner % len(SERIES_MARKS)] if self.ascii_only else "●"
            label = f"{mark} {series.name}"
            start = col if col + len(label) <= plot_w else max(0, col - len(label) + 1)
            if start != col:
                label = f"{series.name} {mark}"
            cells = rows[1 + row_index]
            cells[1 + col] = (mark, style)
            # the name only where nothing is drawn yet (close markers' names never overlap; the
            # legend names every series anyway)
            spots = [start + k for k, ch in enumerate(label) if start + k != col]
            if all(px < plot_w and cells[1 + px][0] == " " for px in spots):
                for px, ch in zip(spots, (c for k, c in enumerate(label) if start + k != col)):
                    cells[1 + px] = (ch, style)
        left, right = _fmt(x.low), _fmt(x.high)
        middle = self.x_title + (" (log)" if self.log_x else "")
        gap = plot_w - len(left) - len(right)
        if gap > len(middle) + 2:
            pad = gap - len(middle)
            axis = left + " " * (pad // 2) + middle + " " * (pad - pad // 2) + right
        else:
            axis = left + " " * max(1, gap) + right
        rows.append([(" " * yw + axis, dim)])
        if legend:
            rows.append([(" " * (yw - 2), None), *legend])
        if self.note:
            rows.append([(self.note[:width], dim)])
        return rows


class CurvePlot(ScatterPlot):
    """The scatter plot, drawn in fewer pieces: neighbouring cells of one style become one segment.

    A plain :class:`ScatterPlot` gives every cell its own segment (about 800 for this plot),
    and each costs Textual's line pipeline; merged, a row is a handful. The picture is the same.
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._merged: list[list[Segment]] | None = None
        self._merged_for: tuple[int, int, Style | None] = (0, 0, None)
        self._base: Style | None = None

    def invalidate(self) -> None:
        self._merged = None
        super().invalidate()

    def _segments(self, width: int, height: int, base: Style) -> list[list[Segment]]:
        """The plot's rows as segments, runs of one style merged (cached until the data or size change)."""
        if self._merged is None or self._merged_for != (width, height, base):
            merged = []
            for row in self.build(width, height) if width > 0 and height > 0 else []:
                segments: list[Segment] = []
                texts: list[str] = []
                style: Style | None = None
                for text, cell_style in row:
                    if not text:
                        continue
                    if texts and cell_style != style:
                        segments.append(Segment("".join(texts), base + style if style else base))
                        texts = []
                    style = cell_style
                    texts.append(text)
                if texts:
                    segments.append(Segment("".join(texts), base + style if style else base))
                merged.append(segments)
            self._merged, self._merged_for = merged, (width, height, base)
        return self._merged

    def render_lines(self, crop: Region) -> list[Strip]:
        self._base = self.rich_style  # once per pass (it walks the styles of every ancestor)
        try:
            return super().render_lines(crop)
        finally:
            self._base = None

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        base = self._base or self.rich_style
        rows = self._segments(width, self.size.height, base)
        if y >= len(rows):
            return Strip.blank(width, base)
        return Strip(rows[y]).adjust_cell_length(width, base)
