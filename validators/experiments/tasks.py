"""The experiments' cells as executor tasks: ``reproduce … --executor dask|slurm``.

Each experiment names its cells (key and cell), how they group (figure 1 trains the widths of a
seed together, the T sweep those of a (seed, T), figure 2 a seed group of one (model, L): a group
is never split between tasks, so ``--cells-per-task`` packs whole groups) and a picklable top-level
generator that computes given cells in any process, from the run's config alone, with the torch
threads of ``--jobs 1`` (:func:`~.experiment.threads_of`) and the same seeds and per-cell
computation as the ``processes`` path, so every executor writes the same numbers.
:func:`.engine.run_on_executor` opens the run like the experiment's own ``run_*`` function (same
config, same outputs) and computes the missing cells on the engine
(:func:`boundcalc.execution.engines.run_tasks`). Each experiment's registry row
(:mod:`boundcalc.experiments.experiment_registry`) names these functions.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

import torch

from boundcalc.runs.directory import RunDirectory

from . import figure1, figure2, table1, tsweep

__all__ = ["figure1_describe", "figure1_groups", "figure1_stored_config", "figure1_task",
           "figure2_describe", "figure2_groups", "figure2_task", "table1_describe",
           "table1_groups", "table1_task", "tsweep_groups", "tsweep_task"]


def _config(cls: type, values: dict[str, Any]) -> Any:
    """The config dataclass from its ``asdict`` (lists back to tuples)."""
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: tuple(v) if isinstance(v, list) else v for k, v in values.items()
                  if k in names})


def figure1_task(cells: tuple[tuple[str, Any], ...], context: dict[str, Any]
                 ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Figure 1's (seed, m) cells: per seed, the teacher built once and the widths asked for
    trained together (:func:`figure1.compute_cells`)."""
    torch.set_num_threads(context["threads"])
    cfg = _config(figure1.Figure1Config, context["config"])
    by_seed: dict[int, list[tuple[str, int]]] = {}
    for key, (seed, m) in cells:
        by_seed.setdefault(int(seed), []).append((key, int(m)))
    for seed, wanted in by_seed.items():
        data = figure1.seed_data(seed, cfg)
        records = figure1.compute_cells(seed, [m for _, m in wanted], data, cfg)
        for (key, _), record in zip(wanted, records, strict=True):
            yield key, record


def tsweep_task(cells: tuple[tuple[str, Any], ...], context: dict[str, Any]
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """The T sweep's (seed, T, m) cells: per (seed, T), the teacher built once and the widths
    asked for trained together (:func:`tsweep.compute_cells`)."""
    torch.set_num_threads(context["threads"])
    cfg = _config(tsweep.TSweepConfig, context["config"])
    groups: dict[tuple[int, int], list[tuple[str, int]]] = {}
    for key, (seed, T, m) in cells:
        groups.setdefault((int(seed), int(T)), []).append((key, int(m)))
    for (seed, T), wanted in groups.items():
        data = figure1.seed_data(seed, cfg.figure1(T))
        records = tsweep.compute_cells(seed, T, [m for _, m in wanted], data, cfg)
        for (key, _), record in zip(wanted, records, strict=True):
            yield key, record


def tsweep_groups(cfg: Any, run: RunDirectory) -> list[list[tuple[str, Any]]]:
    """One group per (seed, T) with missing cells (its widths share the teacher)."""
    groups: dict[tuple[int, int], list[tuple[str, Any]]] = {}
    for c in tsweep.all_cells(cfg):
        if not tsweep.is_done(run, c):
            groups.setdefault(c[:2], []).append((tsweep.tsweep_cell_key(*c), c))
    return list(groups.values())


def figure2_task(cells: tuple[tuple[str, Any], ...], context: dict[str, Any]
                 ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Figure 2's (model, L, seed) cells: each trained in its whole work unit (its seed group
    trained together, as the ``processes`` path does), the cells asked for returned."""
    torch.set_num_threads(context["threads"])
    cfg = _config(figure2.Figure2Config, context["config"])
    wanted = {tuple(cell): key for key, cell in cells}
    for model, L, group in figure2.work_units(cfg):
        asked = [s for s in group if (model, L, s) in wanted]
        if not asked:
            continue
        for record in figure2.train_group(model, L, group, cfg):
            if record["seed"] in asked:
                yield wanted[(model, L, record["seed"])], record


def table1_task(cells: tuple[tuple[str, Any], ...], context: dict[str, Any]
                ) -> Iterator[tuple[str, dict[str, Any]]]:
    """Table 1's (d_m, N) cells: the data set loaded once per task."""
    torch.set_num_threads(context["threads"])
    cfg = _config(table1.Table1Config, context["config"])
    data = table1.load_digit_tokens(cfg.data, Ns=cfg.Ns, seed=cfg.seed, n_test=cfg.n_test,
                                    n_generated=cfg.n_generated, digits=cfg.digits,
                                    patch=cfg.patch, scale=cfg.scale)
    for key, (d_m, N) in cells:
        yield key, table1.train_cell(d_m, N, data, cfg)


def figure1_groups(cfg: Any, run: RunDirectory) -> list[list[tuple[str, Any]]]:
    """One group per seed with missing cells: its widths share the teacher and train together
    (one fused pass per step), as on the ``processes`` path."""
    groups: dict[int, list[tuple[str, Any]]] = {}
    for c in figure1.all_cells(cfg):
        if not figure1.is_done(run, c):
            groups.setdefault(c[0], []).append((figure1.cell_key(*c), c))
    return list(groups.values())


def figure2_groups(cfg: Any, run: RunDirectory) -> list[list[tuple[str, Any]]]:
    groups = []
    for model, L, group in figure2.work_units(cfg):
        cells = [(model, L, s) for s in group]
        if not all(figure2.is_done(run, c) for c in cells):
            groups.append([(figure2.cell_key(*c), c) for c in cells])
    return groups


def table1_groups(cfg: Any, run: RunDirectory) -> list[list[tuple[str, Any]]]:
    return [[(table1.cell_key(*c), c)] for c in table1.all_cells(cfg)
            if not table1.is_done(run, c)]


def figure1_describe(key: str, r: dict[str, Any]) -> str:
    return (f"lin={r['lin_error']:.3g} app={r['app_error']:.3g} "
            f"train={r['min_train_loss']:.3g} ({r['wall_s']:.1f} s)")


def figure2_describe(key: str, r: dict[str, Any]) -> str:
    return f"max J={r['max_jacobian']:.3g} ({r['wall_s_per_seed']:.1f} s)"


def table1_describe(key: str, r: dict[str, Any]) -> str:
    return (f"lowest test loss {r['lowest_test_loss']:.4g} at epoch {r['lowest_test_epoch']}, "
            f"bound {r['theorem5_bound']:.4g} ({r['wall_s']:.1f} s)")


def figure1_stored_config(cfg: Any) -> dict[str, Any]:
    # as run_figure1: the CPU kernel is built (or its absence noted) before config.json is written
    from ..model import get_activation
    from ..train import kernel_for

    kernel_for(get_activation(cfg.activation), getattr(torch, cfg.dtype),
                torch.device(cfg.device), cfg.d)
    return {**asdict(cfg), "eta": cfg.eta}
