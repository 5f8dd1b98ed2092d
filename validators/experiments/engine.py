"""Any registered experiment's cells on an executor: this machine's processes, Dask or Slurm.

:func:`run_on_executor` reads the experiment's registry row
(:mod:`boundcalc.experiments.experiment_registry`): its ``make_config`` builds the config from the
preset, its ``groups`` (or, where the row names none, one group per missing cell,
:func:`missing_cells`) cut the missing cells into tasks of at most ``--cells-per-task`` cells that
never split a group, its ``task`` computes them on the engine
(:func:`boundcalc.execution.engines.run_tasks`; for ``processes``: ``--jobs`` worker processes, or
this process for one job) and its ``write_outputs`` writes the run's files, in the run frame of
:func:`.experiment.run_experiment` (one driver per run directory, ``config.json``, resumable). This
is how ``reproduce … --executor dask|slurm`` runs every experiment, and how an experiment whose row
names no ``run`` function of its own runs on the ``processes`` executor too. Nothing here imports
torch: an experiment that does not use it never loads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict
from pathlib import Path
from typing import Any

from boundcalc.execution.executors import ExecutorSettings
from boundcalc.experiments import experiment_registry as registry
from boundcalc.runs.directory import RunDirectory
from boundcalc.runs.stored import cell_checks

from .experiment import engine_cells, run_experiment, threads_of

__all__ = ["missing_cells", "run_on_executor"]


def run_on_executor(experiment: str, preset: str, executor: ExecutorSettings, *,
                    config_args: tuple[Any, ...] = (), out: str | Path | None = None,
                    progress: bool = True, threads: int | None = None,
                    device: str = "cpu", output_options: dict[str, Any] | None = None,
                    **overrides: Any) -> Path:
    """Run (or resume) the registered ``experiment`` with its cells on ``executor``'s engine
    (this machine's processes, Dask or Slurm) and write its outputs; returns the run
    directory. ``config_args`` and ``overrides`` go to the experiment's ``make_config`` after
    the preset (figure1 / figure2: ``(seeds,)``; table1: ``(data,)``), ``device`` too;
    ``output_options`` to its ``write_outputs`` (how the outputs are drawn, not parameters of
    the run)."""
    options = dict(output_options or {})
    row = registry.experiment(experiment)
    if row.task is None:
        raise ValueError(f"{experiment} has no task function: it runs on its own runner only")
    # ``cuda`` is where the workers run the cells (dask, slurm): this machine (a login node)
    # needs no GPU
    remote = executor.engine and str(device).startswith("cuda")
    cfg = registry.load(row.make_config)(preset, *config_args,
                                         device="cpu" if remote else device, **overrides)
    if remote:
        cfg = dataclasses.replace(cfg, device=str(device))
    context = {"config": asdict(cfg), "threads": threads_of(cfg.device, threads),
               "device": cfg.device}
    stored = asdict if row.stored_config is None else registry.load(row.stored_config)
    describe = None if row.describe is None else registry.load(row.describe)
    params = stored(cfg)

    def compute(run: RunDirectory) -> int:
        groups = (missing_cells(row, run) if row.groups is None
                  else registry.load(row.groups)(cfg, run))
        tasks = _packed(groups, executor.cells_per_task)
        return engine_cells(run, experiment, tasks, len(row.cell_keys(params)),
                            registry.load(row.task), context, executor, progress, describe)

    return run_experiment(experiment, preset, params, cfg.device, out, compute,
                          lambda run: registry.load(row.write_outputs)(run, cfg, **options),
                          progress=progress,
                          threads=threads, verb=row.verb, executor=executor)


def missing_cells(row: registry.Experiment, run: RunDirectory) -> list[list[tuple[str, Any]]]:
    """The cells of ``run`` not (soundly) stored yet, one group each: ``(key, what the key says
    the cell holds)`` (:meth:`~boundcalc.experiments.experiment_registry.Experiment.identity`),
    for an experiment whose row names no ``groups``."""
    return [[(key, row.identity(key))] for key in row.cell_keys(run.config)
            if not run.has_cell(key, **cell_checks(row.name, key))]


def _packed(groups: list[list[tuple[str, Any]]], per_task: int
            ) -> list[tuple[tuple[str, Any], ...]]:
    """Whole groups packed into tasks of at most ``per_task`` cells (a larger group alone)."""
    tasks: list[tuple[tuple[str, Any], ...]] = []
    current: list[tuple[str, Any]] = []
    for group in groups:
        if current and len(current) + len(group) > max(1, per_task):
            tasks.append(tuple(current))
            current = []
        current.extend(group)
    if current:
        tasks.append(tuple(current))
    return tasks
