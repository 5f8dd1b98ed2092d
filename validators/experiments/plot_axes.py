"""Axes of the experiments' figures: which scale each axis gets and how its ticks read.

The rules every figure of :mod:`validators.experiments.plots` follows, in one place so that the
caption can state them (:func:`axis_scales`) and tests can check them:

* **scales** — an axis (x or y) whose values span less than a decade is linear, else logarithmic
  (:func:`log_x`, :func:`value_axis`): a log axis over 8–64 or 0.7–1.3 is read as a linear one;
* **tick labels** — plain digits at the data's x values, y labels at 1, 2 and 5 times each power
  of ten under two decades (``0.02`` within 0.001–10⁴, else ``2×10⁻⁴``), never on minor ticks;
  x labels that would run into a neighbour are left out (:func:`thin_tick_labels`);
* **bounds off scale** — a bound more than :data:`OFF_SCALE` times above every measurement of a
  panel is not drawn there (:func:`bound_on_scale`): the ratio panel shows it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["OFF_SCALE", "axis_scales", "bound_on_scale", "drawn_values", "log_x",
           "thin_tick_labels", "value_axis", "x_axis"]


def drawn_values(ax) -> np.ndarray:
    """Every finite positive y value drawn on ``ax`` (lines, and the bands' outlines)."""
    values = [np.asarray(line.get_ydata(), dtype=float) for line in ax.get_lines()]
    for collection in ax.collections:
        for path in collection.get_paths():
            values.append(np.asarray(path.vertices[:, 1], dtype=float))
    flat = np.concatenate(values) if values else np.array([])
    return flat[np.isfinite(flat) & (flat > 0)]


def _plain_number(value: float, _position: Any = None) -> str:
    text = np.format_float_positional(value, trim="-", precision=6)
    return text.replace("-", "\u2212")


def _power_number(value: float, _position: Any = None) -> str:
    """A tick label ``2×10⁻⁴`` in mathtext (``10⁻³`` for a mantissa of 1)."""
    exponent = math.floor(math.log10(value) + 1e-9)
    mantissa = round(value / 10.0 ** exponent, 6)
    power = f"10^{{{exponent}}}"
    return f"${power}$" if mantissa == 1 else f"${mantissa:g}\\times{power}$"


def value_axis(ax) -> None:
    """The y axis of a panel from what it shows: linear when everything drawn lies within one
    decade (a log axis over 0.7–1.3 reads as noise), else logarithmic — under two decades with
    labels at 1, 2 and 5 times each power of ten, plain (0.02, 0.05, 0.1) within 0.001–10⁴, else
    2×10⁻⁴; never labels on the minor ticks."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    values = drawn_values(ax)
    if values.size and values.max() < 10 * values.min():
        ax.set_yscale("linear")
        ax.set_ylim(bottom=0, top=values.max() * 1.08)
        return
    ax.set_yscale("log")
    ax.yaxis.set_minor_formatter(NullFormatter())   # labels on the major ticks only
    if values.size and values.max() < 100 * values.min():
        plain = values.min() >= 1e-3 and values.max() < 1e4
        ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(_plain_number if plain else _power_number))


def log_x(x: Sequence[float] | np.ndarray) -> bool:
    """Whether an x axis over ``x`` is logarithmic: where the values span a decade or more (as a
    y axis, :func:`value_axis`); a log axis over 8–64 would be read as a linear one."""
    x = np.asarray(x, dtype=float)
    x = x[np.isfinite(x) & (x > 0)]
    return bool(x.size) and bool(x.max() >= 10 * x.min())


def x_axis(ax, x_ticks: Sequence[float], base: int = 2) -> None:
    """A tick at every value of ``x_ticks`` labelled with plain digits, on a log axis (base
    ``base``) where they span a decade or more, else a linear one (:func:`log_x`)."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    if log_x(x_ticks):
        ax.set_xscale("log", base=base)
    else:
        ax.set_xscale("linear")
    ax.xaxis.set_major_locator(FixedLocator(list(x_ticks)))
    ax.xaxis.set_major_formatter(ScalarFormatter())
    ax.xaxis.set_minor_locator(NullLocator())
    ax.grid(alpha=0.3, which="major")
    ax.tick_params(which="both", direction="out")


def _labels_overlap(boxes: Sequence[Any], pad: float = 2.0) -> bool:
    """Whether two of ``boxes`` (display bounding boxes of tick labels) come within ``pad``
    pixels of each other horizontally."""
    spans = sorted((b.x0, b.x1) for b in boxes)
    return any(b0 < a1 + pad for (_, a1), (b0, _) in zip(spans, spans[1:], strict=False))


def thin_tick_labels(fig) -> None:
    """Leave out x tick labels that would run into a neighbour (the paper's widths 8 … 256 in five
    panels of 6.75 in, or 8 and 16 on a linear axis to 64): the ticks stay, and from the left a
    label is kept only where it clears the last one kept. Call once the panels are drawn (the
    figure is laid out to measure the labels)."""
    from matplotlib.ticker import FixedFormatter

    fig.canvas.draw()   # lays out the tick labels, whose extents are measured
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes:
        items = [t for t in ax.get_xticklabels() if t.get_text()]
        if len(items) < 2:
            continue
        boxes = [t.get_window_extent(renderer) for t in items]
        kept = [0]
        for i in range(1, len(items)):
            if not _labels_overlap([boxes[kept[-1]], boxes[i]]):
                kept.append(i)
        if len(kept) < len(items):
            ax.xaxis.set_major_formatter(FixedFormatter(
                [t.get_text() if i in kept else "" for i, t in enumerate(items)]))


def axis_scales(axes: Mapping[str, Any]) -> str:
    """The axis scales of the panels ``{letter: Axes}`` in words, as the caption states them:
    ``log–log`` where every panel is, else which panels have which axis."""
    kinds: dict[str, list[str]] = {}
    for letter, ax in axes.items():
        x, y = ax.get_xscale(), ax.get_yscale()
        kind = "log–log" if (x, y) == ("log", "log") else \
            f"x {'logarithmic' if x == 'log' else 'linear'}, y " \
            f"{'logarithmic' if y == 'log' else 'linear'}"
        kinds.setdefault(kind, []).append(letter)
    if len(kinds) == 1:
        return next(iter(kinds))
    return "; ".join(f"{kind} in {', '.join(letters)}" for kind, letters in kinds.items())


#: A bound more than this factor above every measurement of its panel is left off that panel
#: (its axis would put the data into a sliver at the bottom): the ratio panel shows it.
OFF_SCALE = 100.0


def bound_on_scale(ax, bound: np.ndarray) -> bool:
    """Whether ``bound`` lies within :data:`OFF_SCALE` of the highest value drawn on ``ax``."""
    drawn = drawn_values(ax)
    ok = bound[np.isfinite(bound) & (bound > 0)]
    return bool(ok.size) and bool(drawn.size) and ok.min() <= OFF_SCALE * drawn.max()
