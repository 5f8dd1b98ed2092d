"""``boundcalc table --figures``: a stored run's figure redrawn from its cells, nothing retrained.

The tables of a run (:mod:`boundcalc.runs.tables`) need neither torch nor matplotlib; its figure is
drawn by the plotting function the experiment itself uses (its registry row's ``figure``, e.g.
:func:`.plots.draw_figure1`, which takes the run's stored parameters)
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

from boundcalc.experiments.experiment_registry import experiment, load
from boundcalc.runs.stored import StoredRun

__all__ = ["regenerate_figures"]


def regenerate_figures(run: StoredRun, directory: str | os.PathLike | None = None,
                       width: str | None = None) -> list[Path]:
    """Redraw the run's figure (PNG, PDF and its caption text) from its stored cells into
    ``directory`` (default: the run directory), with the plotting function the experiment uses,
    ``width`` ``single`` or ``double`` (None: the figure's default); nothing is retrained. Each
    file is drawn into a temporary folder first and moved into place. An experiment without a
    figure (table1) draws nothing (an empty list); a run without finished cells draws nothing
    either. Needs matplotlib (imported only here), never torch.

    Example:
        >>> regenerate_figures(StoredRun("r", Path("."), "table1", {}))
        []
    """
    row = experiment(run.kind)
    if row.figure is None or not run.records:
        return []
    target = Path(directory) if directory is not None else run.path
    target.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=".figures.", dir=target))
    try:
        summary = load(row.summarize)(run)
        fits = load(row.slopes)(run, summary) if row.slopes is not None else []
        drawn = load(row.figure)(summary, fits, run.params, scratch / run.kind, run.records,
                                 width or row.figure_width)
        written = []
        for path in drawn:
            final = target / Path(path).name
            os.replace(path, final)
            written.append(final)
        return written
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
