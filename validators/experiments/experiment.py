"""The frame every experiment runs in: threads, a resumable run directory, outputs, a summary line.

``figure1``, ``figure2`` and ``table1`` differ in their cells and outputs; how a run is opened,
resumed and closed is the same and lives here once.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import torch

from boundcalc.rundir import RunDirectory


def run_experiment(name: str, preset: str, config: Mapping[str, Any], device: str,
                   out: str | Path | None, compute: Callable[[RunDirectory], int],
                   write_outputs: Callable[[RunDirectory], Any], *, progress: bool = True,
                   threads: int | None = None, verb: str = "trained") -> Path:
    """Open (or resume) ``runs/<name>-<preset>`` (or ``out``), compute the missing cells, write.

    Args:
        name: experiment name, stored in ``config.json`` and used for the default folder.
        preset: the preset's name, stored too.
        config: every parameter of the run (a resumed run must have the same ones).
        device: where the cells run; on the CPU torch uses ``threads`` threads (default 1: the
            experiments' small kernels lose more to thread synchronisation than they gain),
            restored afterwards.
        out: run directory, or None for the default.
        compute: computes the cells not yet in the run directory; returns how many it computed.
        write_outputs: writes the summary files from every finished cell.
        progress: one closing line on stderr.
        verb: how the closing line names the work ("trained", "computed").

    Returns:
        The run directory.
    """
    path = Path(out) if out is not None else Path("runs") / f"{name}-{preset}"
    started = time.perf_counter()
    previous = torch.get_num_threads()
    if threads is not None or device == "cpu":
        torch.set_num_threads(max(1, int(threads or 1)))
    try:
        run = RunDirectory(path, config={"experiment": name, "preset": preset, **config},
                           device=device)
        done = compute(run)
    finally:
        torch.set_num_threads(previous)
    write_outputs(run)
    if progress:
        print(f"[{name}] {done} cells {verb} in {time.perf_counter() - started:.1f} s; "
              f"outputs in {run.path}", file=sys.stderr, flush=True)
    return run.path


__all__ = ["run_experiment"]
