"""Progress lines of ``boundcalc validate`` on stderr: per cell, with an ETA, and a heartbeat.

A validation run may take hours, so every finished (or loaded) cell prints a
``[validate i/N]`` line with the estimated time left, and a cell still computing prints a
``running for`` line every :data:`PROGRESS_HEARTBEAT_S` seconds. The estimate of a cell still to
run is the mean wall time of its statement's finished cells (loaded ones included), else of all
(:class:`CellTiming`).

Example:
    >>> timing = CellTiming()
    >>> timing.add("lemma2", 30.0)
    >>> timing.eta_text(["lemma2", "lemma3"])
    'ETA 60 s for the 2 cell(s) left'
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["PROGRESS_HEARTBEAT_S", "CellTiming", "cell_seconds", "duration", "heartbeat"]

#: Seconds between the "running for" lines of a cell still computing (``validate`` progress).
PROGRESS_HEARTBEAT_S = 15.0


def duration(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def cell_seconds(cell: list[dict]) -> float | None:
    """Wall time a loaded cell took when it was computed (its records' ``seconds``), if known."""
    for rec in cell:
        value = rec.get("seconds")
        if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
            return float(value)
    return None


class CellTiming:
    """Wall times of the finished cells, by statement, for the progress lines' ETA: a cell still
    to run is estimated by the mean time of its statement's finished cells, else of all."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {}

    def add(self, statement: str, seconds: float | None) -> None:
        """Record a finished cell's wall time (None: unknown, ignored)."""
        if seconds is not None:
            self.seconds.setdefault(statement, []).append(seconds)

    def estimate(self, statement: str) -> float | None:
        """Estimated seconds of one cell of ``statement`` (None before any cell finished)."""
        own = self.seconds.get(statement)
        every = [t for times in self.seconds.values() for t in times]
        times = own or every
        return sum(times) / len(times) if times else None

    def remaining(self, statements: list[str]) -> float | None:
        """Estimated seconds of the cells of ``statements`` (None before any cell finished)."""
        estimates = [self.estimate(s) for s in statements]
        return None if any(e is None for e in estimates) else sum(estimates)  # type: ignore[misc]

    def eta_text(self, statements: list[str], extra: float = 0.0) -> str:
        """``ETA 12 min for the 3 cell(s) left`` (``extra`` seconds added)."""
        if not statements and not extra:
            return "no cell left"
        total = self.remaining(statements)
        if total is None:
            return "no ETA before a cell has finished"
        count = len(statements)
        what = f" for the {count} cell(s) left" if count else ""
        return f"ETA {duration(total + extra)}{what}"


@contextmanager
def heartbeat(progress: Callable[[str], None] | None, tag: str, started: float,
               timing: CellTiming, statement: str, left: list[str], *,
               clock: Callable[[], float] = time.perf_counter,
               every: float | None = None) -> Iterator[None]:
    """While a cell computes, every ``every`` seconds (None: :data:`PROGRESS_HEARTBEAT_S`) a
    ``running for`` line with the ETA of this cell and the ones after it (from the finished
    cells' times); nothing without ``progress``. The time the cell has run is
    ``clock() - started`` (``started`` read from the same clock), so a test that passes a clock
    of its own gets figures that do not depend on the machine's speed.

    >>> import threading
    >>> timing, lines, said = CellTiming(), [], threading.Event()
    >>> timing.add("lemma3", 30.0)
    >>> def progress(line):
    ...     lines.append(line)
    ...     said.set()
    >>> with heartbeat(progress, "lemma3-seed1", 0.0, timing, "lemma3", ["lemma2"],
    ...                clock=lambda: 10.0, every=0.01):
    ...     said.wait(60)
    True
    >>> lines[0]
    'lemma3-seed1: running for 10 s, ETA 50 s'
    """
    if progress is None:
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(PROGRESS_HEARTBEAT_S if every is None else every):
            elapsed = clock() - started
            own = timing.estimate(statement)
            line = f"{tag}: running for {duration(elapsed)}"
            if own is not None:
                rest = timing.remaining(left)
                if rest is not None:
                    line += f", ETA {duration(max(own - elapsed, 0.0) + rest)}"
            else:
                line += ", no ETA before a cell has finished"
            progress(line)

    thread = threading.Thread(target=beat, name="validate-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
