"""``boundcalc table --figures``: a stored run's figure redrawn from its cells, nothing retrained.

The tables of a run (:mod:`boundcalc.tables`) need neither torch nor matplotlib; its figure is drawn
by the experiment's own plotting function (:func:`figure1.plot_figure`, :func:`figure2.plot_figure`)
from the same per-cell statistics the tables show, so a figure made from stored cells is the one the
run itself wrote. The experiment modules (torch, matplotlib) are imported only when a figure is
drawn, so a ``table1`` run or a run without finished cells needs neither.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from boundcalc.runs import StoredRun
from boundcalc.summaries import figure1_slopes, summarize_figure1, summarize_figure2

__all__ = ["regenerate_figures"]


def _config(cls: type, params: Mapping[str, Any]) -> Any:
    """The experiment's config dataclass from stored parameters (lists back to tuples)."""
    names = {f.name for f in dataclasses.fields(cls)}
    values = {k: tuple(v) if isinstance(v, list) else v for k, v in params.items()
              if k in names}
    return cls(**values)


def regenerate_figures(run: StoredRun, directory: str | os.PathLike | None = None,
                       width: str | None = None) -> list[Path]:
    """Redraw the run's figure (PNG and PDF) from its stored cells into ``directory`` (default:
    the run directory), with the experiment's own plotting function, ``width`` ``single`` or
    ``double`` (None: the figure's default); nothing is retrained. Each
    file is drawn into a temporary folder first and moved into place. table1 has no figure (an
    empty list); a run without finished cells draws nothing either. Needs matplotlib and torch
    (the ``validators`` extra), imported only here.

    Example:
        >>> regenerate_figures(StoredRun("r", Path("."), "table1", {}))
        []
    """
    if run.kind == "table1" or not run.records:
        return []
    target = Path(directory) if directory is not None else run.path
    target.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".figures.", dir=target))
    try:
        if run.kind == "figure1":
            from . import figure1

            summary = summarize_figure1(run)
            drawn = figure1.plot_figure(summary, figure1_slopes(summary),
                                        _config(figure1.Figure1Config, run.params),
                                        scratch / "figure1", run.records, width)
        elif run.kind == "tsweep":
            from boundcalc.summaries import summarize_tsweep, tsweep_slopes

            from . import tsweep

            summary = summarize_tsweep(run)
            drawn = tsweep.plot_figure(summary, tsweep_slopes(run.records, summary, run.params),
                                       _config(tsweep.TSweepConfig, run.params),
                                       scratch / "tsweep", run.records)
        else:
            from . import figure2

            drawn = figure2.plot_figure(summarize_figure2(run),
                                        _config(figure2.Figure2Config, run.params),
                                        scratch / "figure2", run.records, width)
        written = []
        for path in drawn:
            final = target / Path(path).name
            os.replace(path, final)
            written.append(final)
        return written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
