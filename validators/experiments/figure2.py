"""Figure 2 (Section 6.2): IndRNN vs the Transformer on the AR(L) task, trained by plain GD.

For every lag L ∈ {4, 16, 72, 96} (T = L + 1), every seed and both models, one *cell* trains the
model from its symmetric init (Section 5.2 / App. B.1, so f ≡ 0 at step 0) by full-batch gradient
descent **without projection**, θ_{k+1} = θ_k − η ∇R̂(θ_k), R̂ = (1/n) Σ_j (f(X_j) − y_j)², on the
training windows of :mod:`validators.data.ar_task`, and records along the K + 1 iterates θ_0 … θ_K:

* ``max_jacobian`` — max_k J(θ_k), the paper's "maximum Jacobian norm over training", with

      J(θ) = ‖∂(f(X_1; θ), …, f(X_n; θ))/∂P‖_F / √n = √((1/n) Σ_j ‖∇_P f(X_j; θ)‖²),

  the root-mean-square over the n training windows of the per-sample gradient of the *output*
  w.r.t. the parameter block P: the attention weights P = W = (W_1, …, W_m) for the Transformer
  (closed form, Lemma 1: ‖∇_W f_j‖² = (1/m) Σ_i c_i² σ'(U_iᵀa_i)² ‖G_i U_i‖² ‖q_j‖²), the diagonal
  recurrent weights P = u for the IndRNN (forward mode, :mod:`validators.indrnn`). Dividing by √n
  makes it independent of the number of windows; it is the quantity Lemma 2 / Proposition 2
  bound (per block) by a Lipschitz constant.
* ``max_loss_gradient`` — max_k ‖∇_P R̂(θ_k)‖, the norm of the loss gradient on the same block
  (what the authors' scripts log as ``grad_w`` / ``grad_u``), for reference.
* ``min_val_loss`` — min_k of the validation MSE (1/n_val) Σ (f − y)², and the step reaching it.
* ``memory_floats_per_sample`` — what inference keeps per sequence: the whole context, T·d
  floats, for the Transformer (O(T)); the m-dimensional state for the IndRNN (O(m), free of T).

Every finished (model, L, seed) cell is written atomically to the run directory
(:class:`boundcalc.runs.directory.RunDirectory`) and skipped when the run is started again, so an
interrupted run resumes where it stopped and ends with the same numbers. The run then writes
``results.csv`` (one row per cell), ``summary.csv`` (mean and 95 % Student-t CI over seeds per
(model, L)), ``figure2.png`` / ``figure2.pdf`` (top: max Jacobian norm; bottom: min validation
loss; both against L) and ``figure2_table.tex`` (booktabs).

Presets: ``paper`` is the published protocol (n = 5000 windows, 20 % validation, m = 64, tanh,
α = 1.5, K = 5000, η = 0.05, 20 seeds, float32 like the authors' scripts); ``quick`` keeps the
protocol — all four lags, both models, no projection — at sizes that finish in well under 90 s on
a 2-core CPU.
"""

from __future__ import annotations

import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import as_completed
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boundcalc.execution.executors import Eta, ExecutorSettings
from boundcalc.files import write_atomic
from boundcalc.inputs.experiment_fields import FIGURE2
from boundcalc.runs.directory import RunDirectory, save_cell_file
from boundcalc.runs.stats import mean_ci95
from boundcalc.runs.stored import cell_checks

from .. import indrnn
from ..data.ar_task import context_floats_per_sample, data_seed, make_ar_data
from ..kernel import gpu_kernel
from ..model import Params, forward, get_activation, head_features, init_params, last_token_query
from ..step_graphs import run_steps
from .experiment import pool_threads, run_experiment
from .plots import FIGURE2_WIDTH, check_width
from .workers import worker_pool

MODELS = ("transformer", "indrnn")
MODEL_LABELS = {"transformer": "Transformer", "indrnn": "IndRNN"}
JACOBIAN_BLOCK = {"transformer": "W", "indrnn": "u"}
FIGURE_WIDTH = FIGURE2_WIDTH  # the figure's default --figure-width


@dataclass(frozen=True)
class Figure2Config:
    """Every parameter that changes the numbers of a figure-2 run (stored in config.json)."""

    lags: tuple[int, ...] = (4, 16, 72, 96)
    seeds: tuple[int, ...] = tuple(range(20))
    n: int = 5000
    val_fraction: float = 0.2
    m: int = 64
    activation: str = "tanh"
    alpha: float = indrnn.DEFAULT_ALPHA
    steps: int = 5000
    lr: float = 0.05
    ar_coefficient: float = 0.9
    noise_variance: float = 0.1
    burn_in: int = 800
    positional_pairs: int = 8
    base_period: float = 32.0
    dtype: str = "float32"
    seed_batch: int = 1
    device: str = "cpu"

    def check(self) -> None:
        """Every field in its range and the rules over several fields: the rows of
        :data:`boundcalc.inputs.experiment_fields.FIGURE2` (an ``InputError``, a ``ValueError``,
        naming the field)."""
        FIGURE2.check_config(asdict(self))


#: The presets: the fields each sets away from the defaults, written once in the field rows.
PRESETS: dict[str, Figure2Config] = {name: replace(Figure2Config(), **values)
                                     for name, values in FIGURE2.presets.items()}


def resolve_device(device: str | None) -> str:
    """``None`` / ``"auto"`` → ``cuda`` when available, else ``cpu``; otherwise checked as given."""
    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    dev = str(device)
    if dev.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"`device` {dev!r} requested but CUDA is not available")
    if not (dev == "cpu" or dev.startswith("cuda")):
        raise ValueError(f"`device` must be 'cpu', 'cuda[:k]' or 'auto', got {dev!r}")
    return dev


def make_config(preset: str, seeds: int | Iterable[int] | None = None,
                device: str | None = "cpu", **overrides: Any) -> Figure2Config:
    """The preset's :class:`Figure2Config`, with ``seeds`` (a count k → 0 … k−1, or a list) and
    the resolved ``device``; further fields may be overridden by keyword (tests)."""
    if preset not in PRESETS:
        raise ValueError(f"`preset` must be one of {sorted(PRESETS)}, got {preset!r}")
    cfg = PRESETS[preset]
    if seeds is not None:
        if isinstance(seeds, int):
            if seeds < 1:
                raise ValueError(f"`seeds` as a count must be >= 1, got {seeds}")
            seeds = range(seeds)
        overrides["seeds"] = tuple(int(s) for s in seeds)
    if "lags" in overrides:
        overrides["lags"] = tuple(int(v) for v in overrides["lags"])
    cfg = replace(cfg, device=resolve_device(device), **overrides)
    cfg.check()
    return cfg


# --------------------------------------------------------------------------- one training run


def transformer_quantities(params: Params, X: torch.Tensor, q: torch.Tensor, y: torch.Tensor,
                           act) -> tuple[torch.Tensor, Params, torch.Tensor]:
    """Loss, gradient and per-sample ‖∇_W f(X_j)‖ (n,) of the Transformer from one feature pass.

    The loss and gradient are those of :func:`validators.model.loss_and_gradient` (Lemma 1; a
    test checks they agree); the Jacobian uses the same features:
    ‖∇_W f_j‖² = (1/m) Σ_i c_i² σ'(pre_ji)² ‖G_ji U_i‖² ‖q_j‖².
    """
    F = head_features(params, X, q, act)
    return _quantities_from_features(params.c, q, y, F.h, F.dh, F.a, F.GU)


def _quantities_from_features(c: torch.Tensor, q: torch.Tensor, y: torch.Tensor,
                              h: torch.Tensor, dh: torch.Tensor, a: torch.Tensor,
                              GU: torch.Tensor) -> tuple[torch.Tensor, Params, torch.Tensor]:
    """The closed form of :func:`transformer_quantities` from the per-head features σ(pre),
    σ'(pre) (..., n, m), a and G U (..., n, m, d); leading seed axes allowed."""
    m = c.shape[-1]
    scale = 1.0 / math.sqrt(m)
    pred = torch.matmul(h, c.unsqueeze(-1)).squeeze(-1) * scale          # (..., n)
    resid = pred - y
    w = (2.0 / y.shape[-1]) * resid
    coef = (w.unsqueeze(-1) * dh) * (c * scale).unsqueeze(-2)           # (..., n, m)
    grad = Params(torch.matmul(w.unsqueeze(-2), h).squeeze(-2) * scale,
                  torch.einsum("...nm,...nmd->...md", coef, a),
                  torch.einsum("...nmd,...ne->...mde", coef.unsqueeze(-1) * GU, q))
    gu2 = (GU**2).sum(-1)                                                 # ‖G U‖² (..., n, m)
    jac = torch.sqrt(((c.unsqueeze(-2) * dh) ** 2 * gu2).sum(-1) * (q * q).sum(-1) / m)
    return (resid**2).mean(-1), grad, jac


def _finite_max(values: np.ndarray) -> float:
    finite = values[np.isfinite(values)]
    return float(finite.max()) if finite.size else math.nan


def _stack(items: list[Any]) -> Any:
    """Stack a list of parameter NamedTuples (or tensors) along a new leading seed axis."""
    if isinstance(items[0], torch.Tensor):
        return torch.stack(items)
    return type(items[0])(*(torch.stack(ts) for ts in zip(*items, strict=True)))


def transformer_quantities_by_kernel(params: Params, X: torch.Tensor, y: torch.Tensor, act
                                     ) -> tuple[torch.Tensor, Params, torch.Tensor]:
    """:func:`transformer_quantities` with leading seed axes and without the (n, m, T) arrays:
    a_i and M_iU_i come from the Triton kernel
    (:func:`boundcalc.validators.kernel.gpu_kernel.softmax_token_sums`), G_iU_i = M_iU_i −
    pre_i a_i, and the rest is the same closed form per seed. Shapes: params c (..., m),
    U (..., m, d), W (..., m, d, d); X (..., n, T, d); y (..., n); q = the last token."""
    c, U, W = params
    q = X[..., -1, :]
    Wq = torch.einsum("...mab,...nb->...nma", W, q)                     # W_i q_j (..., n, m, d)
    a, MU = gpu_kernel.softmax_token_sums(X, Wq, U)
    pre = (a * U.unsqueeze(-3)).sum(-1)                                 # (..., n, m)
    GU = torch.addcmul(MU, pre.unsqueeze(-1), a, value=-1)
    return _quantities_from_features(c, q, y, act.fn(pre), act.d1(pre), a, GU)


def _transformer_predictions_by_kernel(params: Params, X: torch.Tensor, act) -> torch.Tensor:
    """f(X_j; θ) (..., n) for leading seed axes, a_i from the Triton kernel."""
    c, U, W = params
    Wq = torch.einsum("...mab,...nb->...nma", W, X[..., -1, :])
    a, _ = gpu_kernel.softmax_token_sums(X, Wq)
    h = act.fn((a * U.unsqueeze(-3)).sum(-1))
    return (h * c.unsqueeze(-2)).sum(-1) / math.sqrt(c.shape[-1])


def _step_function(model: str, act, kernel: bool = False):
    """(θ, X, y, X_val, y_val) ↦ (R̂, ∇R̂, J(θ), ‖∇_P R̂‖, validation MSE) for one seed; the
    IndRNN's also for a leading seed axis, and the Transformer's with ``kernel`` (the Triton
    kernel's sums, :func:`transformer_quantities_by_kernel`; without it the Transformer's is
    batched by ``vmap``)."""
    if model == "transformer" and kernel:
        def step(p, X, y, Xv, yv):
            loss, grad, jac = transformer_quantities_by_kernel(p, X, y, act)
            val = ((_transformer_predictions_by_kernel(p, Xv, act) - yv) ** 2).mean(-1)
            return (loss, grad, torch.sqrt((jac * jac).mean(-1)),
                    grad.W.flatten(-3).norm(dim=-1), val)
    elif model == "transformer":
        def step(p, X, y, Xv, yv):
            loss, grad, jac = transformer_quantities(p, X, last_token_query(X), y, act)
            val = ((forward(p, Xv, last_token_query(Xv), act) - yv) ** 2).mean()
            return loss, grad, torch.sqrt((jac * jac).mean()), grad.W.norm(), val
    else:   # batched natively: a leading seed axis runs through the same kernels
        def step(p, X, y, Xv, yv):
            loss, grad, _, jac = indrnn.loss_gradient_and_jacobian_u(p, X, y, act)
            val = ((indrnn.predict(p, Xv, act) - yv) ** 2).mean(-1)
            return (loss, grad, torch.sqrt((jac * jac).mean(-1)), grad.u.norm(dim=-1), val)
    return step


def train_group(model: str, L: int, seeds: Sequence[int], cfg: Figure2Config
                ) -> list[dict[str, Any]]:
    """Train the (model, L, seed) cells of ``seeds`` together and return one record per seed.

    Plain GD for ``cfg.steps`` steps; every metric is taken at all K + 1 iterates (see the module
    docstring). Several seeds are trained as one batched computation over a leading seed axis
    (the Transformer's step under ``torch.func.vmap``, or with ``BOUNDCALC_TRITON=1`` where the
    Triton kernel runs, :func:`transformer_quantities_by_kernel`; the IndRNN's functions take
    the axis themselves) — this changes nothing but the floating-point rounding, which is why the
    grouping (``cfg.seed_batch``) is part of the run's parameters; a single seed runs unbatched.
    On CUDA the steps are replays of one captured CUDA graph
    (:func:`boundcalc.validators.step_graphs.run_steps`), with the numbers of the eager steps.
    A run whose loss becomes non-finite is kept with ``diverged = True`` and metrics over its
    finite iterates.
    """
    if model not in MODELS:
        raise ValueError(f"`model` must be one of {MODELS}, got {model!r}")
    if not seeds:
        raise ValueError("`seeds` must not be empty")
    started = time.perf_counter()
    dtype = getattr(torch, cfg.dtype)
    dev = torch.device(cfg.device)
    act = get_activation(cfg.activation)
    datas, inits = [], []
    for seed in seeds:
        data = make_ar_data(L, cfg.n, seed=seed, coefficient=cfg.ar_coefficient,
                            noise_variance=cfg.noise_variance, burn_in=cfg.burn_in,
                            pairs=cfg.positional_pairs, base_period=cfg.base_period,
                            val_fraction=cfg.val_fraction, dtype=dtype, device=dev)
        init_seed = data_seed(seed, L)
        if model == "transformer":
            inits.append(init_params(cfg.m, data.d, seed=init_seed, dtype=dtype, device=dev))
        else:
            inits.append(indrnn.init_indrnn(cfg.m, data.d, seed=init_seed, alpha=cfg.alpha,
                                            dtype=dtype, device=dev))
        datas.append(data)
    T, d = datas[0].T, datas[0].d
    memory = (context_floats_per_sample(T, d) if model == "transformer"
              else indrnn.state_floats_per_sample(cfg.m))
    kernel = model == "transformer" and gpu_kernel.uses_triton_kernel(dev, d, dtype)
    step = _step_function(model, act, kernel)
    if len(seeds) == 1:
        params = inits[0]
        tensors = datas[0][:4]
    else:
        params = _stack(inits)
        tensors = tuple(_stack([dt[i] for dt in datas]) for i in range(4))
        if model == "transformer" and not kernel:
            step = torch.func.vmap(step)
    K = cfg.steps
    history = torch.empty(K + 1, 4, len(seeds), dtype=torch.float64, device=dev)
    params = type(params)(*(p.clone() for p in params))   # θ_k, updated in place
    k_dev = torch.zeros(1, dtype=torch.int64, device=dev)

    def measure() -> Any:
        loss, grad, jac, block, val = step(params, *tensors)
        row = torch.stack([loss, jac, block, val]).double().reshape(1, 4, -1)
        history.index_copy_(0, k_dev, row)
        return grad

    def gd_step() -> None:            # record θ_k, then θ_{k+1} = θ_k − η ∇R̂(θ_k)
        grad = measure()
        for p, g in zip(params, grad, strict=True):
            p.copy_(p - cfg.lr * g)
        k_dev.add_(1)

    with torch.no_grad():
        run_steps(gd_step, K, dev)
        measure()                     # the last iterate θ_K
    hist = history.cpu().numpy()
    wall = round((time.perf_counter() - started) / len(seeds), 3)
    records = []
    for i, seed in enumerate(seeds):
        train, jac, gnorm, val = hist[:, 0, i], hist[:, 1, i], hist[:, 2, i], hist[:, 3, i]
        finite_val = np.where(np.isfinite(val), val, np.inf)
        best = int(np.argmin(finite_val))
        records.append({
            "model": model,
            "L": int(L),
            "T": T,
            "seed": int(seed),
            "n_train": int(datas[i].y_train.shape[0]),
            "n_val": int(datas[i].y_val.shape[0]),
            "jacobian_block": JACOBIAN_BLOCK[model],
            "max_jacobian": _finite_max(jac),
            "jacobian_init": float(jac[0]),
            "jacobian_final": float(jac[-1]),
            "max_loss_gradient": _finite_max(gnorm),
            "min_val_loss": float(finite_val[best]) if np.isfinite(finite_val[best])
            else math.nan,
            "min_val_step": best,
            "final_val_loss": float(val[-1]),
            "min_train_loss": float(np.min(train[np.isfinite(train)]))
            if np.isfinite(train).any() else math.nan,
            "final_train_loss": float(train[-1]),
            "diverged": bool(not np.isfinite(hist[:, :, i]).all()),
            "memory_floats_per_sample": int(memory),
            "wall_s_per_seed": wall,
        })
    return records


def train_cell(model: str, L: int, seed: int, cfg: Figure2Config) -> dict[str, Any]:
    """One (model, L, seed) cell on its own (unbatched): :func:`train_group` with one seed."""
    return train_group(model, L, (seed,), cfg)[0]


# --------------------------------------------------------------------------- the sweep


def cell_key(model: str, L: int, seed: int) -> str:
    """File name of a cell in the run directory: ``<model>-L<L>-seed<seed>``."""
    return f"{model}-L{int(L)}-seed{int(seed)}"


def all_cells(cfg: Figure2Config) -> list[tuple[str, int, int]]:
    """Every (model, L, seed) of the run."""
    return [(model, L, seed) for seed in cfg.seeds for L in cfg.lags for model in MODELS]


def is_done(run: RunDirectory, cell: tuple[str, int, int]) -> bool:
    """True when the (model, L, seed) cell is stored; a damaged cell file is moved aside with a
    warning and its work unit trained again."""
    key = cell_key(*cell)
    return run.has_cell(key, **cell_checks("figure2", key))


def work_units(cfg: Figure2Config) -> list[tuple[str, int, tuple[int, ...]]]:
    """(model, L, seed group) units, in the order they are computed: the seeds are cut into fixed
    consecutive groups of ``cfg.seed_batch``, so a resumed run batches exactly as a fresh one."""
    size = cfg.seed_batch
    groups = [tuple(cfg.seeds[i:i + size]) for i in range(0, len(cfg.seeds), size)]
    return [(model, L, group) for group in groups for L in cfg.lags for model in MODELS]


def _config_from_dict(values: dict[str, Any]) -> Figure2Config:
    values = dict(values)
    values["lags"] = tuple(values["lags"])
    values["seeds"] = tuple(values["seeds"])
    return Figure2Config(**values)


def _train_and_save(run_path: str, cfg: Figure2Config,
                    unit: tuple[str, int, tuple[int, ...]]) -> list[dict[str, Any]]:
    """Train one work unit and write each of its cells atomically."""
    model, L, group = unit
    records = train_group(model, L, group, cfg)
    for record in records:
        save_cell_file(run_path, cell_key(model, L, record["seed"]), record)
    return records


def _worker(run_path: str, cfg_dict: dict[str, Any], unit: tuple[str, int, tuple[int, ...]],
            threads: int) -> list[dict[str, Any]]:
    """Process-pool entry: :func:`_train_and_save` with ``threads`` torch threads."""
    torch.set_num_threads(threads)
    return _train_and_save(run_path, _config_from_dict(cfg_dict), unit)


def summarize(records: list[dict[str, Any]], cfg: Figure2Config) -> list[dict[str, Any]]:
    """One row per (model, L): mean and 95 % CI over seeds of the two metrics, and the memory
    (:func:`boundcalc.runs.summaries.summarize_figure2_records`, which ``boundcalc table`` uses
    too)."""
    from boundcalc.runs.summaries import summarize_figure2_records

    return summarize_figure2_records(records, cfg.lags)


def latex_table(summary: list[dict[str, Any]], cfg: Figure2Config) -> str:
    """Booktabs table: per L, both models' max Jacobian norm, min validation loss (mean ± CI) and
    memory under grouped heads — :func:`boundcalc.runs.tables.render_tables`, the text ``boundcalc
    table RUN --format latex`` prints for the same run."""
    from boundcalc.runs.tables import render_tables, tables_from_summaries

    rows = [r for L in cfg.lags for r in summary if r["L"] == L]
    return render_tables(tables_from_summaries("figure2", [("", rows, [])]), "latex")


def plot_figure(summary: list[dict[str, Any]], cfg: Figure2Config, stem: Path,
                records: list[dict[str, Any]] | None = None, width: str | None = None
                ) -> list[Path]:
    """(a) max Jacobian norm and (b) min validation loss against L, per model the geometric mean
    over seeds with its 95 % band on the log values (or the seeds themselves, under five);
    ``width`` ``single`` (default, stacked) or ``double`` (side by side)
    (:func:`validators.experiments.plots.draw_figure2`, which ``boundcalc table --figures`` also
    draws a stored run with); a panel within one decade on a linear axis. Writes ``stem``.png,
    ``stem``.pdf and the caption text ``stem``.caption.txt (J defined)."""
    from .plots import draw_figure2

    return draw_figure2(summary, asdict(cfg), stem, records, width or FIGURE_WIDTH)


def run_cells(run: RunDirectory, cfg: Figure2Config, jobs: int = 1, progress: bool = True,
              max_cells: int | None = None) -> int:
    """Train every work unit of ``cfg`` with a cell missing from ``run`` (stopping once
    ``max_cells`` cells were trained) and save each cell atomically as soon as its unit finishes.
    Returns the number of cells trained now."""
    pending = [u for u in work_units(cfg)
               if not all(is_done(run, (u[0], u[1], s)) for s in u[2])]
    if max_cells is not None:
        kept, budget = [], int(max_cells)
        for unit in pending:
            if budget <= 0:
                break
            kept.append(unit)
            budget -= len(unit[2])
        pending = kept
    if not pending:
        return 0
    total = len(all_cells(cfg))
    done = sum(is_done(run, c) for c in all_cells(cfg))
    trained, eta = 0, Eta()

    def report(records: list[dict[str, Any]]) -> None:
        nonlocal done, trained
        done, trained = done + len(records), trained + len(records)
        for _ in records:
            eta.cell()
        if progress:
            r = records[0]
            jac = ", ".join(f"{x['max_jacobian']:.3g}" for x in records)
            print(f"[figure2 {done}/{total}] {r['model']:<11} L={r['L']:<3} "
                  f"seeds={[x['seed'] for x in records]} max J=[{jac}] "
                  f"({r['wall_s_per_seed'] * len(records):.1f} s); "
                  f"{eta.text(total - done)}", file=sys.stderr, flush=True)

    if jobs <= 1:
        for unit in pending:
            report(_train_and_save(str(run.path), cfg, unit))
        return trained
    threads = pool_threads(cfg.device, jobs)
    with worker_pool(jobs) as pool:   # workers end with this process, however it ends
        futures = [pool.submit(_worker, str(run.path), asdict(cfg), unit, threads)
                   for unit in pending]
        for fut in as_completed(futures):
            report(fut.result())
    return trained


def collect(run: RunDirectory, cfg: Figure2Config) -> list[dict[str, Any]]:
    """Every finished cell of ``cfg`` in ``run``, in :func:`all_cells` order."""
    return [run.load_cell(cell_key(*c)) for c in all_cells(cfg) if is_done(run, c)]


def write_outputs(run: RunDirectory, cfg: Figure2Config, figure_width: str | None = None
                  ) -> list[dict[str, Any]]:
    """results.csv/json, summary.csv/json, figure2.png/pdf (``figure_width`` single or double,
    default single) and figure2_table.tex from the stored cells (no training): regenerating the
    outputs of a finished run recomputes nothing."""
    records = collect(run, cfg)
    run.write_results(records)
    summary = summarize(records, cfg)
    run.write_results(summary, stem="summary")
    write_atomic(run.path / "figure2_table.tex", latex_table(summary, cfg))
    plot_figure(summary, cfg, run.path / "figure2", records, figure_width)
    return summary


def run_figure2(preset: str = "quick", seeds: int | Iterable[int] | None = None,
                device: str | None = "cpu", out: str | os.PathLike | None = None,
                jobs: int = 1, progress: bool = True, max_cells: int | None = None,
                threads: int | None = None, figure_width: str | None = None,
                **overrides: Any) -> Path:
    """Run (or resume) the Section 6.2 experiment and write its outputs; returns the run folder.

    Args:
        preset: ``paper`` (the published protocol) or ``quick`` (same protocol, small sizes).
        seeds: number of seeds k (0 … k−1) or the seeds themselves; None = the preset's.
        device: ``cpu``, ``cuda[:k]`` or ``auto``.
        out: run directory (created; an existing one with the same parameters is resumed, one
            with other parameters is refused). None = ``runs/figure2-<preset>``.
        jobs: independent cells trained in parallel processes (each with cores/jobs threads).
        progress: one line per finished work unit (a model, a lag, a seed group) on stderr.
        max_cells: train at most this many new cells (whole seed groups), then write the outputs
            of what is done (an interrupted run, or a share of the work on this machine).
        threads: torch threads of this process when ``jobs`` is 1 (restored afterwards). None =
            1 on the CPU: the recurrence is a chain of small element-wise kernels, which lose more
            to thread synchronisation than they gain (measured on the 2-core machine: 2 threads
            are 3× slower for the IndRNN step at paper size, 50× at quick size under load).
        figure_width: ``single`` or ``double`` (None: single); the figure only, not a parameter
            of the run (a run resumes whatever width its figure was drawn at).
        **overrides: further :class:`Figure2Config` fields (e.g. ``lags``, ``steps``), for tests.

    Returns:
        The run directory, holding config.json, cells/, results.csv, summary.csv,
        figure2.png, figure2.pdf and figure2_table.tex.
    """
    if not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"`jobs` must be a positive integer, got {jobs!r}")
    cfg = make_config(preset, seeds, device, **overrides)
    check_width(figure_width or FIGURE_WIDTH)
    return run_experiment(
        "figure2", preset, asdict(cfg), cfg.device, out,
        lambda run: run_cells(run, cfg, jobs=jobs, progress=progress, max_cells=max_cells),
        lambda run: write_outputs(run, cfg, figure_width), progress=progress, threads=threads,
        executor=ExecutorSettings(jobs=jobs))


__all__ = [
    "MODELS", "PRESETS", "Figure2Config", "all_cells", "cell_key", "collect", "latex_table",
    "make_config", "mean_ci95", "plot_figure", "run_cells", "run_figure2", "summarize",
    "train_cell", "train_group", "transformer_quantities", "work_units", "write_outputs",
]
