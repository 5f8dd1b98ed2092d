"""``boundcalc table --figures``: a stored run's figure redrawn from its cells, nothing retrained.

The tables of a run (:mod:`boundcalc.tables`) need neither torch nor matplotlib; its figure is drawn
by the plotting function the experiment itself uses (:func:`.plots.draw_figure1`,
:func:`.plots.draw_figure2`, :func:`.plots.draw_tsweep`, which take the run's stored parameters)
from the same per-cell statistics the tables show, so a figure made from stored cells is the one the
run itself wrote. Redrawing needs matplotlib only, imported when a figure is drawn: never torch (the
experiment modules are not imported), so a machine with the stored runs and matplotlib can redraw
them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from boundcalc.runs import StoredRun
from boundcalc.summaries import (
    figure1_slopes,
    summarize_figure1,
    summarize_figure2,
    summarize_tsweep,
    tsweep_slopes,
)

from .plots import draw_figure1, draw_figure2, draw_tsweep

__all__ = ["regenerate_figures"]


def regenerate_figures(run: StoredRun, directory: str | os.PathLike | None = None,
                       width: str | None = None) -> list[Path]:
    """Redraw the run's figure (PNG, PDF and its caption text) from its stored cells into
    ``directory`` (default: the run directory), with the plotting function the experiment uses,
    ``width`` ``single`` or ``double`` (None: the figure's default); nothing is retrained. Each
    file is drawn into a temporary folder first and moved into place. table1 has no figure (an
    empty list); a run without finished cells draws nothing either. Needs matplotlib (imported
    only here), never torch.

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
            summary = summarize_figure1(run)
            drawn = draw_figure1(summary, figure1_slopes(summary), run.params,
                                 scratch / "figure1", run.records, width)
        elif run.kind == "tsweep":
            summary = summarize_tsweep(run)
            drawn = draw_tsweep(summary, tsweep_slopes(run.records, summary, run.params),
                                run.params, scratch / "tsweep", run.records, width)
        else:
            drawn = draw_figure2(summarize_figure2(run), run.params, scratch / "figure2",
                                 run.records, width)
        written = []
        for path in drawn:
            final = target / Path(path).name
            os.replace(path, final)
            written.append(final)
        return written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
