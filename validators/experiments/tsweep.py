"""The sequence-length sweep: Theorem 1's setting at fixed width m, T ∈ {4, 16, 64, 256, 1024}.

The paper's claim (ii) — the optimization error does not depend on the sequence length T — is
tested in the paper only outside Theorem 1's regime (Figure 2: no projection, against the IndRNN).
This experiment measures it in Theorem 1's setting (though at widths where its bound is above the
free yardstick min(B², Y², R̂(θ_0)), so vacuous; the summary says so per row,
``min_train_loss_verdict``): Figure 1's teacher–student protocol
(:mod:`boundcalc.validators.experiments.figure1`: transport teacher, clipped Gaussian tokens,
ProjGD on Ω_ρ, the gradient-aligned boundary point, the transported parameters), with the width m
fixed per panel and T swept.

Every cell (seed, T, m) is figure 1's cell at sequence length T: the seed's data and teacher are
:func:`figure1.seed_data` of the figure-1 config with that T (built once per (seed, T), reused for
every m), and the three metrics are :func:`figure1.compute_cells` (the widths of a (seed, T) trained
together) — (a) ``lin_error``, (b) ``app_error``, (c) ``min_train_loss`` — so the T = 16 cells are
figure 1's cells of the same seed and width. The student's θ(0) depends on (seed, m) only, the same
at every T: along T a seed is a paired design. Panels (a) and (b) are evaluated in chunks of samples
so that a long sequence never holds an (n, m, T) tensor (:data:`CHUNK_ENTRIES`).

Outputs, from the stored cells: ``results.csv`` (cells), ``summary.csv`` (per (m, T): mean and 95 %
Student-t CI over seeds of each metric next to its bound from :func:`boundcalc.calc.api.evaluate`
at the same inputs — ε_lin, ε_app, Theorem 1's min-iterate bound, flat in T since no Transformer
bound contains T), ``slopes.csv`` (per (metric, m): slope of log(metric) in log T fitted per seed,
mean ± 95 % t-interval over seeds, :func:`boundcalc.runs.summaries.tsweep_slopes`), ``tsweep.png`` /
``tsweep.pdf`` and ``tsweep_table.tex`` (the LaTeX of ``boundcalc table`` on this run).

Why log(metric) against log T: the three quantities are positive and lie decades apart; a power
law T^β is the form any T-dependence of such bounds takes (the IndRNN's grows like a power of T
past its cutoff), so β is scale-free and comparable across panels, and "independent of T" is
β = 0; exp(β·log(T_max/T_min)) says how much the fitted line moves across the sweep.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import torch

from boundcalc.execution.executors import ExecutorSettings
from boundcalc.files import write_atomic
from boundcalc.inputs.experiment_fields import TSWEEP
from boundcalc.runs.directory import RunDirectory, save_cell_file
from boundcalc.runs.stored import FIGURE1_METRICS, cell_checks, tsweep_cell_key
from boundcalc.runs.summaries import summarize_tsweep_records, tsweep_slopes

from ..model import get_activation
from ..train import kernel_for
from . import figure1
from .experiment import pool_threads, run_experiment
from .plots import TSWEEP_WIDTH, check_width
from .workers import worker_pool

METRICS = FIGURE1_METRICS
#: (sample, head, token) entries per pass of panels (a) and (b); figure 1's sizes fit in one.
CHUNK_ENTRIES = 1 << 25


@dataclass(frozen=True)
class TSweepConfig:
    """Every parameter that changes the numbers of a tsweep run (stored in config.json): figure
    1's (:class:`figure1.Figure1Config`) with ``Ts`` the swept lengths and ``widths`` the fixed
    width of each panel."""

    widths: tuple[int, ...] = (64, 256)
    Ts: tuple[int, ...] = (4, 16, 64, 256, 1024)
    seeds: tuple[int, ...] = tuple(range(1, 11))
    n: int = 5000
    d: int = 8
    teacher_width: int = 8192
    anchors: int = 16
    nu: tuple[float, float, float] = (3.0, 3.0, 3.0)
    rho: tuple[float, float, float] = (3.0, 3.0, 3.0)
    steps: int = 4000
    step_constant: float = 1.75
    val_fraction: float = 0.2
    activation: str = "tanh"
    lin_align: str = "feature"
    delta: str = "0.05"
    dtype: str = "float64"
    device: str = "cpu"

    def figure1(self, T: int) -> figure1.Figure1Config:
        """Figure 1's config of the cells at sequence length T."""
        shared = {f.name: getattr(self, f.name) for f in fields(figure1.Figure1Config)
                  if f.name != "T" and hasattr(self, f.name)}
        return figure1.Figure1Config(**shared, T=int(T))

    @property
    def eta(self) -> float:
        return self.figure1(self.Ts[0]).eta

    def check(self) -> None:
        """Figure 1's checks, and T ≥ 1 distinct (at least two, for a slope): the rows of
        :data:`boundcalc.inputs.experiment_fields.TSWEEP` (an ``InputError``, a ``ValueError``,
        naming the field)."""
        TSWEEP.check_config(asdict(self))


#: The presets: the fields each sets away from the defaults, written once in the field rows.
PRESETS: dict[str, TSweepConfig] = {name: replace(TSweepConfig(), **values)
                                    for name, values in TSWEEP.presets.items()}


def make_config(preset: str, seeds: int | Iterable[int] | None = None,
                device: str | None = "cpu", **overrides: Any) -> TSweepConfig:
    """The preset's config with ``seeds`` (a count k → 1 … k, or a list) and the resolved
    ``device``; further fields by keyword (tests)."""
    return figure1.preset_config(PRESETS, preset, seeds, device,
                                 {"widths": int, "Ts": int, "nu": float, "rho": float},
                                 overrides)


def all_cells(cfg: TSweepConfig) -> list[tuple[int, int, int]]:
    """Every (seed, T, m), in the order computed (one teacher per (seed, T))."""
    return [(seed, T, m) for seed in cfg.seeds for T in cfg.Ts for m in cfg.widths]


def is_done(run: RunDirectory, cell: tuple[int, int, int]) -> bool:
    """True when the cell is stored (a damaged file is moved aside and recomputed)."""
    key = tsweep_cell_key(*cell)
    return run.has_cell(key, **cell_checks("tsweep", key))


def compute_cells(seed: int, T: int, widths: list[int], data: figure1.SeedData,
                  cfg: TSweepConfig, progress: bool = False) -> list[dict[str, Any]]:
    """Figure 1's cells (seed, m) at sequence length T for every m of ``widths``, trained
    together (:func:`figure1.compute_cells`, whose ``progress`` lines it passes on), with ``T``
    recorded."""
    chunks = {m: max(1, CHUNK_ENTRIES // (m * T)) for m in widths}
    records = figure1.compute_cells(seed, widths, data, cfg.figure1(T), chunk=chunks,
                                    progress=progress)
    return [{"seed": r.pop("seed"), "m": r.pop("m"), "T": int(T), **r} for r in records]


def compute_cell(seed: int, T: int, m: int, data: figure1.SeedData,
                 cfg: TSweepConfig) -> dict[str, Any]:
    """The cell (seed, T, m) alone: :func:`compute_cells` with one width."""
    return compute_cells(seed, T, [m], data, cfg)[0]


def _group_worker(run_path: str, cfg_dict: dict[str, Any], seed: int, T: int,
                  widths: list[int], threads: int, progress: bool = False
                  ) -> list[dict[str, Any]]:
    """Process-pool entry: one (seed, T)'s pending widths (one teacher), each saved atomically."""
    torch.set_num_threads(threads)
    cfg = _config_from_dict(cfg_dict)
    data = figure1.seed_data(seed, cfg.figure1(T))
    out = compute_cells(seed, T, widths, data, cfg, progress)
    for record in out:
        save_cell_file(run_path, tsweep_cell_key(seed, T, record["m"]), record)
    return out


def _config_from_dict(values: dict[str, Any]) -> TSweepConfig:
    names = {f.name for f in fields(TSweepConfig)}
    return TSweepConfig(**{k: tuple(v) if isinstance(v, list) else v
                           for k, v in values.items() if k in names})


def run_cells(run: RunDirectory, cfg: TSweepConfig, jobs: int = 1, progress: bool = True,
              max_cells: int | None = None) -> int:
    """Compute every missing cell (at most ``max_cells``); returns how many."""
    cells = all_cells(cfg)
    pending = [c for c in cells if not is_done(run, c)]
    if max_cells is not None:
        pending = pending[:max(0, int(max_cells))]
    groups: dict[tuple[int, int], list[int]] = {}
    for seed, T, m in pending:
        groups.setdefault((seed, T), []).append(m)
    done = len(cells) - sum(not is_done(run, c) for c in cells)

    def report(record: dict[str, Any]) -> None:
        nonlocal done
        done += 1
        if progress:
            print(f"[tsweep {done}/{len(cells)}] seed={record['seed']} T={record['T']:<4} "
                  f"m={record['m']:<4} lin={record['lin_error']:.3g} "
                  f"app={record['app_error']:.3g} train={record['min_train_loss']:.3g} "
                  f"({record['wall_s']:.1f} s)", file=sys.stderr, flush=True)

    if jobs <= 1 or len(groups) <= 1:
        for (seed, T), widths in groups.items():
            data = figure1.seed_data(seed, cfg.figure1(T))
            for record in compute_cells(seed, T, widths, data, cfg, progress):
                run.save_cell(tsweep_cell_key(seed, T, record["m"]), record)
                report(record)
        return len(pending)
    threads = pool_threads(cfg.device, jobs)
    with worker_pool(jobs) as pool:   # workers end with this process, however it ends
        futures = [pool.submit(_group_worker, str(run.path), asdict(cfg), seed, T, widths,
                               threads, progress) for (seed, T), widths in groups.items()]
        for fut in futures:
            for record in fut.result():
                report(record)
    return len(pending)


def collect(run: RunDirectory, cfg: TSweepConfig) -> list[dict[str, Any]]:
    """Every finished cell of ``cfg`` in ``run``, in :func:`all_cells` order."""
    return [run.load_cell(tsweep_cell_key(*c)) for c in all_cells(cfg) if is_done(run, c)]


def plot_figure(summary: list[dict[str, Any]], fits: list[dict[str, Any]], cfg: TSweepConfig,
                stem: Path, records: list[dict[str, Any]] | None = None,
                width: str = "double") -> list[Path]:
    """One row of three panels per width m against T, log–log, in the style of the other figures
    (:func:`validators.experiments.plots.draw_tsweep`, which ``boundcalc table --figures`` also
    draws a stored run with): the geometric mean over seeds with its 95 % band on the log values
    (or the seeds themselves, under five, when ``records`` are given), the seeds' mean
    slope (± 95 % CI in the title); the bound — flat, decades above — beside the min
    training loss and, for every metric, as the ratio measured / bound in a panel of its own (one
    y axis per panel). Writes ``stem``.png, ``stem``.pdf and ``stem``.caption.txt."""
    from .plots import draw_tsweep

    return draw_tsweep(summary, fits, asdict(cfg), stem, records, width)


def summaries(records: list[dict[str, Any]], cfg: TSweepConfig
              ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The per-(m, T) summary and the per-(metric, m) slopes (:mod:`boundcalc.runs.summaries`)."""
    params = asdict(cfg)
    summary = summarize_tsweep_records(records, params)
    return summary, tsweep_slopes(records, summary, params)


def write_outputs(run: RunDirectory, cfg: TSweepConfig, figure_width: str | None = None
                  ) -> list[dict[str, Any]]:
    """results, summary, slopes (CSV + JSON), tsweep.png/pdf/caption.txt (``figure_width``
    single or double, None: double) and tsweep_table.tex from the stored cells (nothing is
    recomputed)."""
    from boundcalc.runs.tables import build_tables, load_run, render_tables

    records = collect(run, cfg)
    run.write_results(records)
    summary, fits = summaries(records, cfg)
    run.write_results(summary, stem="summary")
    run.write_results(fits, stem="slopes")
    if records:
        stored = load_run(run.path)
        write_atomic(run.path / "tsweep_table.tex",
                     render_tables(build_tables([stored]), "latex"))
        plot_figure(summary, fits, cfg, run.path / "tsweep", records,
                    figure_width or TSWEEP_WIDTH)
    return summary


def run_tsweep(preset: str = "quick", seeds: int | Iterable[int] | None = None,
               device: str | None = "cpu", out: str | os.PathLike | None = None,
               jobs: int = 1, progress: bool = True, max_cells: int | None = None,
               threads: int | None = None, figure_width: str | None = None,
               **overrides: Any) -> Path:
    """Run (or resume) the T sweep and write its outputs; returns the folder.

    Args:
        preset: ``paper`` (m = 64 and 256, T = 4 … 1024, 10 seeds, figure 1's other settings) or
            ``quick`` (same protocol, small sizes).
        seeds: number of seeds k (1 … k) or the seeds themselves; None = the preset's.
        device: ``cpu``, ``cuda[:k]`` or ``auto``.
        out: run directory (None = ``runs/tsweep-<preset>``); an existing one with the same
            parameters is resumed.
        jobs: (seed, T) groups computed in parallel processes.
        progress: one line per finished cell on stderr.
        max_cells: compute at most this many new cells, then write the outputs of what is done.
        threads: torch threads when ``jobs`` is 1 (None = 1 on the CPU).
        figure_width: ``single`` or ``double`` (None: double); the figure only, not a parameter
            of the run.
        **overrides: further :class:`TSweepConfig` fields, for tests.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be a positive integer, got {jobs!r}")
    check_width(figure_width or TSWEEP_WIDTH)
    cfg = make_config(preset, seeds, device, **overrides)
    kernel_for(get_activation(cfg.activation), getattr(torch, cfg.dtype),
                torch.device(cfg.device), cfg.d)
    return run_experiment(
        "tsweep", preset, {**asdict(cfg), "eta": cfg.eta}, cfg.device, out,
        lambda run: run_cells(run, cfg, jobs=jobs, progress=progress, max_cells=max_cells),
        lambda run: write_outputs(run, cfg, figure_width), progress=progress, threads=threads,
        executor=ExecutorSettings(jobs=jobs),
        verb="computed")


__all__ = ["CHUNK_ENTRIES", "METRICS", "PRESETS", "TSweepConfig", "all_cells", "collect",
           "compute_cell", "compute_cells", "make_config", "plot_figure", "run_cells",
           "run_tsweep", "summaries",
           "write_outputs"]
