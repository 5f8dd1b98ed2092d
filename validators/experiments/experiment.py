"""The frame every experiment runs in: threads, a resumable run directory, outputs, a summary line.

``figure1``, ``figure2`` and ``table1`` differ in their cells and outputs; how a run is opened
(and locked: one driver per run directory), resumed, computed on an executor
(:mod:`boundcalc.execution.executors`: this machine's processes, Dask or Slurm) and closed is the
same and lives here once.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from boundcalc.execution.engines import run_tasks
from boundcalc.execution.executors import ExecutorSettings, cell_meta, owned
from boundcalc.runs.directory import RunDirectory

from .workers import worker_pool


def run_experiment(name: str, preset: str, config: Mapping[str, Any], device: str,
                   out: str | Path | None, compute: Callable[[RunDirectory], int],
                   write_outputs: Callable[[RunDirectory], Any], *, progress: bool = True,
                   threads: int | None = None, verb: str = "trained",
                   executor: ExecutorSettings | None = None) -> Path:
    """Open (or resume) ``runs/<name>-<preset>`` (or ``out``), compute the missing cells, write.

    Args:
        name: experiment name, stored in ``config.json`` and used for the default folder.
        preset: the preset's name, stored too.
        config: every parameter of the run (a resumed run must have the same ones).
        device: where the cells run; on the CPU torch uses ``threads`` threads (default 1: the
            experiments' small kernels lose more to thread synchronisation than they gain),
            restored afterwards (where the experiment has loaded torch: one that does not use
            it never loads it).
        out: run directory, or None for the default.
        compute: computes the cells not yet in the run directory; returns how many it computed.
        write_outputs: writes the summary files from every finished cell.
        progress: one closing line on stderr.
        verb: how the closing line names the work ("trained", "computed").
        executor: where the cells run (recorded in ``config.json`` with where each cell ran);
            None = this machine's processes.

    Returns:
        The run directory.
    """
    path = Path(out) if out is not None else Path("runs") / f"{name}-{preset}"
    started = time.perf_counter()
    torch = sys.modules.get("torch")   # an experiment that does not use torch never loads it
    previous = torch.get_num_threads() if torch is not None else None
    if torch is not None and (threads is not None or device == "cpu"):
        torch.set_num_threads(max(1, int(threads or 1)))
    executor = executor or ExecutorSettings()
    with owned(path):
        try:
            run = RunDirectory(path, config={"experiment": name, "preset": preset, **config},
                               device=device)
            before = {p.stem for p in run.cells.glob("*.json")}
            done = compute(run)
        finally:
            if torch is not None and previous is not None:
                torch.set_num_threads(previous)
        where = getattr(run, "where", {})
        here = cell_meta({"device": device})
        new = sorted({p.stem for p in run.cells.glob("*.json")} - before)
        run.record_execution(executor.as_dict(), {k: where.get(k, here) for k in new})
        write_outputs(run)
    if progress:
        print(f"[{name}] {done} cells {verb} in {time.perf_counter() - started:.1f} s; "
              f"outputs in {run.path}", file=sys.stderr, flush=True)
    return run.path


def threads_of(device: str, threads: int | None) -> int:
    """The torch threads a cell runs with, in this process or a worker: as :func:`run_experiment`
    sets them for ``--jobs 1`` (``threads``, else 1 on the CPU), so every engine gives the same
    numbers."""
    if threads is not None or device == "cpu":
        return max(1, int(threads or 1))
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None else 1


def pool_threads(device: str, jobs: int) -> int:
    """The torch threads of each of the ``jobs`` worker processes of ``--jobs``: on the CPU
    those of ``--jobs 1`` and of the Dask and Slurm tasks (:func:`threads_of`: 1), since the
    CPU training step splits its samples between that many threads and the split decides the
    order of the sums (so the numbers); on an accelerator, where the CPU only feeds the device,
    this machine's cores shared between the workers.

    Example:
        >>> pool_threads("cpu", 2), pool_threads("cpu", 1)
        (1, 1)
    """
    if str(device) == "cpu":
        return threads_of("cpu", None)
    return max(1, (os.cpu_count() or 1) // max(1, int(jobs)))


def engine_cells(run: RunDirectory, name: str, tasks: Sequence[Sequence[tuple[str, Any]]],
                 total: int, fn: Callable[..., Iterable[tuple[str, Any]]],
                 context: dict[str, Any], executor: ExecutorSettings, progress: bool,
                 describe: Callable[[str, Any], str] | None = None) -> int:
    """Compute the cells of ``tasks`` (tuples of (key, cell) pairs; ``total`` cells in the run)
    on a Dask or Slurm executor, or on this machine's processes (``--jobs`` workers of
    :func:`.workers.worker_pool`, or this process for one job)
    (:func:`boundcalc.execution.engines.run_tasks`); returns how many. Where
    each ran is kept on ``run.where`` for :func:`run_experiment` to record."""
    if not tasks:
        return 0
    write = (lambda line: print(line, file=sys.stderr, flush=True)) if progress else None
    if write is not None:
        write(f"[{name}] {sum(len(t) for t in tasks)} cell(s) in {len(tasks)} task(s) on "
              f"{executor.kind} (driver {socket.gethostname()})")
    where = run_tasks(run, fn, tasks, context, executor, name, total=total,
                      describe=describe, write=write, pool=worker_pool)
    run.where = {**getattr(run, "where", {}), **where}
    return len(where)


__all__ = ["engine_cells", "pool_threads", "run_experiment", "threads_of"]
