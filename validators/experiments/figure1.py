"""Figure 1 (Section 6.1): the three width sweeps of the teacher–student experiment.

For every seed a teacher f*_M (:func:`validators.teacher.build_teacher`, built **once per seed**
and reused for every width), inputs X_1 … X_n (tokens N(0, I) clipped to norm ≤ 1) and labels
y_j = f*_M(X_j) are drawn. For every width m one *cell* (seed, m) draws a symmetric student init
θ(0) and measures

* (a) ``lin_error`` — mean_j |f(X_j; θ(0) + Δ) − f_lin(X_j; θ(0) + Δ)| at the paper's
  gradient-aligned boundary point Δ of Ω_ρ
  (:func:`boundcalc.validators.checks.lemma3.paper_boundary_point`), over all n samples.
  ``lin_align`` chooses what each head's ΔU_i, ΔW_i align with:
  ``"feature"`` (default) the gradient of the head's own output σ(U_iᵀa_i), ``"output"`` that of
  f, the literal reading of the public script. Under the mirrored init the ``"output"`` point
  moves mirrored heads in opposite directions and the second-order terms cancel in pairs, so
  it measures an O(1/m) third-order remainder, not Lemma 3's O(1/√m) (docs/validation.md,
  "Figure 1"). The other alignment is recorded in every cell too (``lin_error_alt``), with
  its own slope;
* (b) ``app_error`` — max_j |f_lin(X_j; θ̄) − f*_M(X_j)| of the transported parameters θ̄ of
  eq. (11) (:func:`validators.teacher.transported_params`), over all n samples;
* (c) ``min_train_loss`` — min_k R̂(θ_k) of ProjGD (:func:`validators.train.proj_gd`), K steps of
  step 1.75/√K on R̂ = (1/n_train) Σ (f − y)², radii ρ, on the training split (80 %; the other
  20 % is held out and its loss at the last iterate recorded as ``final_val_loss``). The
  students of all widths of a seed train together (:func:`validators.train_students.
  train_students`, one fused pass per step for every width), with the numbers of ``proj_gd``
  run on each alone.

Each finished cell is written atomically to the run directory and skipped on re-run. The run
writes ``results.csv`` (cells), ``summary.csv`` (per width: mean and 95 % Student-t CI over seeds
of the three metrics, and the theory curves ε_lin, ε_app and Theorem 1's min-iterate bound from
:func:`boundcalc.calc.api.evaluate`, with that bound's free yardsticks: the measured R̂(θ_0), Y², B²
and its verdict, :func:`boundcalc.runs.summaries.initial_loss_columns`), ``slopes.csv`` (log–log
least-squares slope of the per-width means with its 95 % CI, per panel), ``figure1.png`` /
``figure1.pdf`` (three panels against m, measurements and theory on the same axes, panel (c) with
the measured R̂(θ_0) and Y²; panel (d) measured / bound; panel (e) Theorem 1's bound / the
measured R̂(θ_0)) and ``figure1_table.tex`` (booktabs).
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Iterable, Mapping
from concurrent.futures import FIRST_COMPLETED, wait
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import torch

from boundcalc.execution.executors import Eta, ExecutorSettings
from boundcalc.execution.progress import duration
from boundcalc.files import write_atomic
from boundcalc.inputs.experiment_fields import FIGURE1
from boundcalc.runs.directory import RunDirectory
from boundcalc.runs.stats import fit_slope
from boundcalc.runs.stored import FIGURE1_EXTRA, FIGURE1_METRICS, cell_checks
from boundcalc.runs.summaries import FIGURE1_THEORY

from ..checks.lemma3 import paper_boundary_point
from ..data.inputs import derived_seed, synthetic_inputs
from ..model import forward, get_activation, init_params, last_token_query, linearized_output
from ..teacher import build_teacher, transported_params
from ..train import kernel_for
from ..train_students import train_students
from .experiment import pool_threads, run_experiment
from .figure2 import resolve_device
from .plots import FIGURE1_WIDTH, check_width
from .workers import worker_pool

METRICS = FIGURE1_METRICS        # the three panels
EXTRA_METRICS = FIGURE1_EXTRA    # panel (a) at the other boundary alignment
THEORY = FIGURE1_THEORY          # metric → the calculator's bound drawn beside it
LIN_ALIGNMENTS = ("feature", "output")
PROGRESS_POLL_S = 1.0             # seconds between looks for cells written by worker processes
FIGURE_WIDTH = FIGURE1_WIDTH  # the figure's default --figure-width


@dataclass(frozen=True)
class Figure1Config:
    """Every parameter that changes the numbers of a figure-1 run (stored in config.json)."""

    widths: tuple[int, ...] = (8, 16, 32, 64, 128, 256)
    seeds: tuple[int, ...] = tuple(range(1, 11))
    n: int = 5000
    d: int = 8
    T: int = 16
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

    @property
    def eta(self) -> float:
        """Step size 1.75/√K."""
        return self.step_constant / math.sqrt(self.steps)

    @property
    def n_train(self) -> int:
        return self.n - int(self.val_fraction * self.n)

    def check(self) -> None:
        """Every field in its range and the rules over several fields: the rows of
        :data:`boundcalc.inputs.experiment_fields.FIGURE1` (an ``InputError``, a ``ValueError``,
        naming the field)."""
        FIGURE1.check_config(asdict(self))


#: The presets: the fields each sets away from the defaults, written once in the field rows.
PRESETS: dict[str, Figure1Config] = {name: replace(Figure1Config(), **values)
                                     for name, values in FIGURE1.presets.items()}


def make_config(preset: str, seeds: int | Iterable[int] | None = None,
                device: str | None = "cpu", **overrides: Any) -> Figure1Config:
    """The preset's config with ``seeds`` (a count k → 1 … k, as the paper's seeds 1–10, or a
    list) and the resolved ``device``; further fields may be overridden by keyword (tests)."""
    return preset_config(PRESETS, preset, seeds, device,
                         {"widths": int, "nu": float, "rho": float}, overrides)


def preset_config(presets: dict[str, Any], preset: str, seeds: int | Iterable[int] | None,
                  device: str | None, tuples: dict[str, type], overrides: dict[str, Any]) -> Any:
    """``presets[preset]`` with ``seeds`` (a count k → 1 … k, or the seeds themselves), the
    resolved ``device`` and ``overrides`` (the fields of ``tuples`` made tuples of that type),
    checked: the ``make_config`` of figure 1 and of the T sweep."""
    if preset not in presets:
        raise ValueError(f"`preset` must be one of {sorted(presets)}, got {preset!r}")
    if seeds is not None:
        if isinstance(seeds, int):
            if seeds < 1:
                raise ValueError(f"`seeds` as a count must be >= 1, got {seeds}")
            seeds = range(1, seeds + 1)
        overrides["seeds"] = tuple(int(s) for s in seeds)
    for key, conv in tuples.items():
        if key in overrides:
            overrides[key] = tuple(conv(v) for v in overrides[key])
    cfg = replace(presets[preset], device=resolve_device(device), **overrides)
    cfg.check()
    return cfg


# --------------------------------------------------------------------------- one seed / cell


@dataclass
class SeedData:
    """What one seed shares across widths: inputs, queries, labels and the teacher."""

    teacher: Any
    X: torch.Tensor
    q: torch.Tensor
    y: torch.Tensor
    train_idx: torch.Tensor
    val_idx: torch.Tensor


def seed_data(seed: int, cfg: Figure1Config) -> SeedData:
    """Build the seed's teacher once, its inputs and labels, and the 80/20 split."""
    dtype, dev = getattr(torch, cfg.dtype), torch.device(cfg.device)
    teacher = build_teacher(cfg.d, cfg.T, seed=seed, nu=cfg.nu, anchors=cfg.anchors,
                            width=cfg.teacher_width, activation=cfg.activation,
                            dtype=dtype, device=dev)
    X = synthetic_inputs(cfg.n, cfg.T, cfg.d, seed=derived_seed(seed, "figure1-data"),
                         dtype=dtype, device=dev)
    q = last_token_query(X)
    y = teacher(X, q)
    gen = torch.Generator().manual_seed(derived_seed(seed, "figure1-split"))
    perm = torch.randperm(cfg.n, generator=gen).to(dev)
    return SeedData(teacher, X, q, y, perm[:cfg.n_train], perm[cfg.n_train:])


def linearization_and_approximation(params0: Any, data: SeedData, cfg: Figure1Config,
                                    chunk: int | None = None
                                    ) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """Panels (a) and (b) of one cell, per sample: |f − f_lin| at the boundary point of each
    alignment in :data:`LIN_ALIGNMENTS` (a dict) and |f_lin(θ̄) − y| of the transported θ̄.

    ``chunk``: samples per pass (None = all at once, as figure 1 does), so that long sequences
    (the T sweep) never hold an (n, m, T) tensor; the numbers do not depend on it beyond rounding.
    """
    act = get_activation(cfg.activation)
    X, q, y = data.X, data.q, data.y
    step = max(1, X.shape[0] if chunk is None else int(chunk))
    parts = [slice(s, s + step) for s in range(0, X.shape[0], step)]
    gaps = {}
    for align in LIN_ALIGNMENTS:
        disp = paper_boundary_point(params0, X, q, cfg.rho, act, align=align, chunk=chunk)
        with torch.no_grad():
            theta = params0 + disp
            gaps[align] = torch.cat([
                (forward(theta, X[p], q[p], act)
                 - linearized_output(params0, theta, X[p], q[p], act)).abs() for p in parts])
    with torch.no_grad():
        bar = transported_params(params0, data.teacher)
        app = torch.cat([(linearized_output(params0, bar, X[p], q[p], act) - y[p]).abs()
                         for p in parts])
    return gaps, app


def compute_cells(seed: int, widths: Iterable[int], data: SeedData, cfg: Figure1Config,
                  chunk: int | Mapping[int, int] | None = None,
                  progress: bool = False) -> list[dict[str, Any]]:
    """The three metrics of the cells (seed, m) for every m of ``widths`` (module docstring).

    Panels (a) and (b) are computed per width; the students of all widths are trained together
    (:func:`validators.train_students.train_students`: one fused pass per step serves every
    width, each student's numbers those of training it alone). ``wall_s`` of a cell is the time
    of its own panels (a), (b) plus that of the training it shared with the other widths (so
    the cells of one call overlap in time). ``chunk`` as in
    :func:`linearization_and_approximation`, or a mapping with one per width. ``progress``:
    a line on stderr every 30 s of training (``[figure1] seed 3: ProjGD step 1200/4000 …``),
    since a seed's cells are only written when its training ends.
    """
    widths = [int(m) for m in widths]
    act = get_activation(cfg.activation)
    dtype, dev = getattr(torch, cfg.dtype), torch.device(cfg.device)
    X, q, y = data.X, data.q, data.y
    alt = next(a for a in LIN_ALIGNMENTS if a != cfg.lin_align)
    inits, panels, panel_s = {}, {}, {}
    for m in widths:
        started = time.perf_counter()
        inits[m] = init_params(m, cfg.d, seed=derived_seed(seed, f"figure1-init-m{m}"),
                               dtype=dtype, device=dev)
        panels[m] = linearization_and_approximation(
            inits[m], data, cfg, chunk[m] if isinstance(chunk, Mapping) else chunk)
        panel_s[m] = time.perf_counter() - started
    tr, va = data.train_idx, data.val_idx
    started = time.perf_counter()
    def report(k: int, K: int, seconds: float) -> None:
        print(f"[figure1] seed {seed}: ProjGD step {k}/{K} of widths "
              f"{', '.join(map(str, widths))} (trained together); ETA "
              f"{duration((K - k) * seconds / k)} for this training", file=sys.stderr, flush=True)

    runs = train_students([inits[m] for m in widths], X[tr], q[tr], y[tr], act,
                          steps=cfg.steps, eta=cfg.eta, rho=cfg.rho,
                          progress=report if progress else None)
    train_s = time.perf_counter() - started
    records = []
    for m, result in zip(widths, runs, strict=True):
        gaps, app = panels[m]
        gap = gaps[cfg.lin_align]
        with torch.no_grad():
            # null, not NaN, with nothing held out: a stored NaN is damage
            val = (float(((forward(result.params, X[va], q[va], act) - y[va]) ** 2).mean())
                   if va.numel() else None)
        records.append({
            "seed": int(seed), "m": int(m), "n": cfg.n, "n_train": int(tr.numel()),
            "lin_error": float(gap.mean()), "lin_error_max": float(gap.max()),
            "lin_align": cfg.lin_align, "lin_error_alt": float(gaps[alt].mean()),
            "lin_align_alt": alt,
            "app_error": float(app.max()), "app_error_mean": float(app.mean()),
            "min_train_loss": float(result.min_loss),
            "final_train_loss": float(result.final_loss),
            "initial_train_loss": float(result.initial_loss), "final_val_loss": val,
            "label_rms": float(y.pow(2).mean().sqrt()),
            "wall_s": round(panel_s[m] + train_s, 3),
        })
    return records


def compute_cell(seed: int, m: int, data: SeedData, cfg: Figure1Config,
                 chunk: int | None = None) -> dict[str, Any]:
    """The cell (seed, m) alone: :func:`compute_cells` with one width."""
    return compute_cells(seed, [m], data, cfg, chunk)[0]


# --------------------------------------------------------------------------- the sweep


def cell_key(seed: int, m: int) -> str:
    """File name of a cell in the run directory: ``m<m>-seed<seed>``."""
    return f"m{int(m)}-seed{int(seed)}"


def all_cells(cfg: Figure1Config) -> list[tuple[int, int]]:
    """Every (seed, width) of the run, in the order computed (seed-major: one teacher each)."""
    return [(seed, m) for seed in cfg.seeds for m in cfg.widths]


def is_done(run: RunDirectory, cell: tuple[int, int]) -> bool:
    """True when the (seed, m) cell is stored; a damaged cell file is moved aside with a warning
    (:meth:`boundcalc.runs.directory.RunDirectory.has_cell`) and computed again."""
    key = cell_key(*cell)
    return run.has_cell(key, **cell_checks("figure1", key))


def _config_from_dict(values: dict[str, Any]) -> Figure1Config:
    values = dict(values)
    for key in ("widths", "seeds", "nu", "rho"):
        values[key] = tuple(values[key])
    return Figure1Config(**values)


def _seed_worker(run_path: str, cfg_dict: dict[str, Any], seed: int, widths: list[int],
                 threads: int, progress: bool = False) -> list[dict[str, Any]]:
    """Process-pool entry: one seed's pending widths (one teacher, trained together), each cell
    saved atomically; ``progress``: the training's progress lines on stderr."""
    torch.set_num_threads(threads)
    cfg = _config_from_dict(cfg_dict)
    data = seed_data(seed, cfg)
    out = compute_cells(seed, widths, data, cfg, progress=progress)
    for record in out:
        _save(Path(run_path), seed, record["m"], record)
    return out


def _save(run_path: Path, seed: int, m: int, record: dict[str, Any]) -> None:
    from boundcalc.runs.directory import save_cell_file

    save_cell_file(run_path, cell_key(seed, m), record)


def run_cells(run: RunDirectory, cfg: Figure1Config, jobs: int = 1, progress: bool = True,
              max_cells: int | None = None) -> int:
    """Compute every missing cell (at most ``max_cells`` of them); returns how many."""
    pending = [c for c in all_cells(cfg) if not is_done(run, c)]
    if max_cells is not None:
        pending = pending[:max(0, int(max_cells))]
    if not pending:
        return 0
    by_seed: dict[int, list[int]] = {}
    for seed, m in pending:
        by_seed.setdefault(seed, []).append(m)
    total = len(all_cells(cfg))
    done = total - sum(not is_done(run, c) for c in all_cells(cfg))
    trained, eta = 0, Eta()

    def report(record: dict[str, Any]) -> None:
        nonlocal done, trained
        done, trained = done + 1, trained + 1
        eta.cell()
        if progress:
            print(f"[figure1 {done}/{total}] seed={record['seed']} m={record['m']:<4} "
                  f"lin={record['lin_error']:.3g} app={record['app_error']:.3g} "
                  f"train={record['min_train_loss']:.3g} ({record['wall_s']:.1f} s); "
                  f"{eta.text(total - done)}", file=sys.stderr, flush=True)

    if jobs <= 1:
        for seed, widths in by_seed.items():
            data = seed_data(seed, cfg)      # the teacher: once per seed, for every width
            for record in compute_cells(seed, widths, data, cfg, progress=progress):
                _save(run.path, seed, record["m"], record)
                report(record)
        return trained
    threads = pool_threads(cfg.device, jobs)
    unreported = list(pending)
    with worker_pool(jobs) as pool:   # workers end with this process, however it ends
        remaining = {pool.submit(_seed_worker, str(run.path), asdict(cfg), seed, widths, threads,
                                 progress) for seed, widths in by_seed.items()}
        while remaining:
            # a cell is reported as soon as its worker has written it (atomically), not when
            # the worker's whole seed is done; a worker's error stops the run here
            finished, remaining = wait(remaining, timeout=PROGRESS_POLL_S,
                                       return_when=FIRST_COMPLETED)
            for fut in finished:
                fut.result()
            for cell in [c for c in unreported if is_done(run, c)]:
                unreported.remove(cell)
                report(run.load_cell(cell_key(*cell)))
    return trained


def collect(run: RunDirectory, cfg: Figure1Config) -> list[dict[str, Any]]:
    """Every finished cell of ``cfg`` in ``run``, in :func:`all_cells` order."""
    return [run.load_cell(cell_key(*c)) for c in all_cells(cfg) if is_done(run, c)]


def theory_curves(m: int, cfg: Figure1Config) -> dict[str, Any]:
    """ε_lin, ε_app (n samples) and Theorem 1's min-iterate bound (n_train) at width m
    (:func:`boundcalc.runs.summaries.figure1_theory`)."""
    from boundcalc.runs.summaries import figure1_theory

    return figure1_theory(m, asdict(cfg))


def summarize(records: list[dict[str, Any]], cfg: Figure1Config) -> list[dict[str, Any]]:
    """One row per width: mean, 95 % CI and count over seeds of each metric, and the theory
    (:func:`boundcalc.runs.summaries.summarize_figure1_records`, which ``boundcalc table`` uses
    too)."""
    from boundcalc.runs.summaries import summarize_figure1_records

    return summarize_figure1_records(records, asdict(cfg))


def slopes(summary: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per panel: fitted log–log slope of the means (with CI) and of the theory
    (:func:`boundcalc.runs.summaries.figure1_slopes`)."""
    from boundcalc.runs.summaries import figure1_slopes

    return figure1_slopes(summary)


def latex_table(summary: list[dict[str, Any]], fits: list[dict[str, Any]]) -> str:
    """Booktabs table: per width the three metrics (mean ± CI) under grouped heads next to their
    bounds, the fitted slopes in the last row — :func:`boundcalc.runs.tables.render_tables`, the
    text ``boundcalc table RUN --format latex`` prints for the same run."""
    from boundcalc.runs.tables import render_tables, tables_from_summaries

    return render_tables(tables_from_summaries("figure1", [("", summary, fits)]), "latex")


def plot_figure(summary: list[dict[str, Any]], fits: list[dict[str, Any]], cfg: Figure1Config,
                stem: Path, records: list[dict[str, Any]] | None = None,
                width: str | None = None) -> list[Path]:
    """Panels (a)–(c) against m on log–log axes — geometric mean over seeds with its 95 % band on
    the log values (or the seeds themselves, under five), a reference slope −1/2, the bound, the
    fitted slope ± 95 % CI in each title — (d) measured / bound and (e) Theorem 1's bound /
    the measured R̂(θ_0); ``width`` ``double``
    (default) or ``single`` (:func:`validators.experiments.plots.draw_figure1`, which ``boundcalc
    table --figures`` also draws a stored run with). Writes ``stem``.png, ``stem``.pdf and the
    caption text ``stem``.caption.txt."""
    from .plots import draw_figure1

    return draw_figure1(summary, fits, asdict(cfg), stem, records, width or FIGURE_WIDTH)


def write_outputs(run: RunDirectory, cfg: Figure1Config, figure_width: str | None = None
                  ) -> list[dict[str, Any]]:
    """results, summary, slopes (CSV + JSON), figure1.png/pdf (``figure_width`` single or double,
    default double) and figure1_table.tex from the stored cells (nothing is recomputed)."""
    records = collect(run, cfg)
    run.write_results(records)
    summary = summarize(records, cfg)
    run.write_results(summary, stem="summary")
    fits = slopes(summary)
    run.write_results(fits, stem="slopes")
    write_atomic(run.path / "figure1_table.tex", latex_table(summary, fits))
    plot_figure(summary, fits, cfg, run.path / "figure1", records, figure_width)
    return summary


def run_figure1(preset: str = "quick", seeds: int | Iterable[int] | None = None,
                device: str | None = "cpu", out: str | os.PathLike | None = None,
                jobs: int = 1, progress: bool = True, max_cells: int | None = None,
                threads: int | None = None, figure_width: str | None = None,
                **overrides: Any) -> Path:
    """Run (or resume) the Section 6.1 width sweeps and write their outputs; returns the folder.

    Args:
        preset: ``paper`` (published settings) or ``quick`` (same protocol, small sizes).
        seeds: number of seeds k (1 … k) or the seeds themselves; None = the preset's.
        device: ``cpu``, ``cuda[:k]`` or ``auto``.
        out: run directory (None = ``runs/figure1-<preset>``); an existing one with the same
            parameters is resumed.
        jobs: seeds computed in parallel processes (each builds its own teacher once).
        progress: one line per finished cell on stderr.
        max_cells: compute at most this many new cells, then write the outputs of what is done.
        threads: torch threads when ``jobs`` is 1 (None = 1 on the CPU; restored afterwards).
        figure_width: ``single`` or ``double`` (None: double); the figure only, not a parameter
            of the run (a run resumes whatever width its figure was drawn at).
        **overrides: further :class:`Figure1Config` fields, for tests.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be a positive integer, got {jobs!r}")
    cfg = make_config(preset, seeds, device, **overrides)
    check_width(figure_width or FIGURE_WIDTH)
    # the CPU kernel of the training step is built (or its absence noted on stderr) before the
    # run directory is opened, so that config.json records the backend and why
    kernel_for(get_activation(cfg.activation), getattr(torch, cfg.dtype),
                torch.device(cfg.device), cfg.d)
    return run_experiment(
        "figure1", preset, {**asdict(cfg), "eta": cfg.eta}, cfg.device, out,
        lambda run: run_cells(run, cfg, jobs=jobs, progress=progress, max_cells=max_cells),
        lambda run: write_outputs(run, cfg, figure_width), progress=progress, threads=threads,
        executor=ExecutorSettings(jobs=jobs),
        verb="computed")


__all__ = [
    "EXTRA_METRICS", "LIN_ALIGNMENTS", "METRICS", "PRESETS", "Figure1Config", "all_cells",
    "cell_key", "collect", "compute_cell", "compute_cells", "fit_slope", "latex_table",
    "linearization_and_approximation", "make_config", "preset_config",
    "plot_figure", "run_cells", "run_figure1", "seed_data", "slopes", "summarize",
    "theory_curves", "write_outputs",
]
