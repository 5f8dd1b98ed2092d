"""Table 1 of paper 003 (L429–L455): lowest test loss of the GD-trained shallow Transformer on
MNIST 0 vs 1, per (d_m, N), beside the Theorem 5 bound.

Protocol (paper L429): digits 0 and 1 of MNIST, each 28 × 28 image cut into tokens of dimension 64
(:mod:`validators.data.mnist`: 8 × 8 patches of the image zero-padded to 32 × 32 → d_s = 16; pixels
in [0, 1], so every token has norm ≤ 8, hence R_X = 8 a priori; ``scale="unit"`` gives R_X = 1),
the encoder of §3.1.2 (:mod:`validators.encoder`, LeCun init, d = 64), **full-batch** GD with
step 0.1 on the cross-entropy (logistic loss of the scalar output, labels 0/1),
d_m ∈ {64, 1024, 4096}, N ∈ {400, 1200, 10000}. One GD step on the whole training set is one
epoch. Per cell: the lowest test loss (mean cross-entropy on the held-out 0/1 test images) over
the epochs 0 … ``steps`` and the epoch reaching it — the paper's Table 1.

The N training images of a cell are the first N of one seeded permutation of the 0/1 training
images (nested subsets); the test set is the whole 0/1 test split (paper preset) or a generated
one. The paper does not say how many epochs it ran (its best epochs go up to 546): the paper
preset runs 1000.

Beside it, each cell evaluates :func:`boundcalc.generalization.bound.evaluate_generalization`
(derived form; printed form too when defined) at the measured θ⁰ — the seven init norms,
α = σ_min(F_pre⁰), Φ(θ⁰) = ½Σ(f − y)² with the 0/1 labels — the a-priori R_X of the token scale,
δ = 0.05 and the radii actually travelled (max_t ‖W_•^t − W_•⁰‖), and reports which conditions of
Lemma 4 hold. A measured α of exactly 0 (F_pre⁰ rank-deficient: N > d_m, ReLU units dead on
every sample, exact zero pixels) is a measurement, not an error: the calculator, which needs
α > 0, is evaluated at the limit α → 0⁺ (``alpha_used`` = :data:`validators.encoder.MIN_ALPHA`),
where the α-conditions fail and Lemma 4's term is ~0, and the row says so (``findings``). A
measured quantity the calculator refuses otherwise (a travelled radius that is not finite after a
diverged run, say) leaves the bound NaN with the reason in ``findings``; the run goes on.
Caveats written into every row: Lemma 4 is a statement about GD on Φ, not on the
cross-entropy (``lemma4_applies`` = False), and the logistic loss is 1-Lipschitz but
ℓ(y, y) ≠ 0; a test loss above the bound is therefore not a finding against the theorem unless
every condition holds — the row says so either way (``findings``).

Cells are saved atomically in a :class:`boundcalc.runs.directory.RunDirectory` and skipped on
re-run. The run writes ``results.csv`` / ``results.json`` (every measured quantity per cell),
``table1.csv`` (one row per cell: lowest test loss, epoch, bound, conditions, and the bound against
its free yardstick, :func:`boundcalc.runs.summaries.table1_row`) and ``table1_table.tex``
(booktabs).

The free yardstick: the held-out loss of the zero predictor (logit 0: log 2 for the logistic
loss, measured as ``zero_predictor_test_loss``) and of the model at initialization (epoch 0,
``initial_test_loss``). A Theorem 5 bound at or above the smaller of the two says nothing about
the trained model, so the "under bound" column is never a bare yes: ``yes, vacuous``,
``yes, not_guaranteed`` (below it, but a Lemma 4 condition fails or Lemma 4 does not apply) or
``yes, informative``.

Presets: ``paper`` (needs the MNIST files: ``data=PATH``, see
:func:`validators.data.mnist.load_mnist`; float32) and ``quick`` (generated ring-vs-bar images,
d_m ∈ {16, 32}, N ∈ {64, 128}, 300 epochs, float64; well under a minute on a 2-core CPU).
"""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from boundcalc.execution.executors import Eta
from boundcalc.files import write_atomic
from boundcalc.inputs.experiment_fields import TABLE1
from boundcalc.runs.directory import RunDirectory, records_to_csv
from boundcalc.runs.stored import cell_checks
from boundcalc.runs.summaries import table1_row

from ..data.digits import load_digit_tokens
from ..data.mnist import r_x_bound
from ..encoder import MIN_ALPHA, MIN_RADIUS, eval_loss_value, lecun_init, measure_init, train_gd
from .experiment import run_experiment

#: The paper's Table 1 (L446–L455): (d_m, N) → (lowest test loss, epoch).
PAPER_TABLE1 = {
    (64, 400): (0.1048, 147), (64, 1200): (0.0668, 165), (64, 10000): (0.0263, 546),
    (1024, 400): (0.1839, 95), (1024, 1200): (0.0760, 271), (1024, 10000): (0.0045, 251),
    (4096, 400): (0.1269, 139), (4096, 1200): (0.0899, 169), (4096, 10000): (0.0123, 312),
}


@dataclass(frozen=True)
class Table1Config:
    """Every parameter that changes the numbers of a Table-1 run (stored in config.json)."""

    dms: tuple[int, ...] = (64, 1024, 4096)
    Ns: tuple[int, ...] = (400, 1200, 10000)
    steps: int = 1000
    lr: float = 0.1
    patch: int = 8
    scale: str = "pixel"               # data.mnist: "pixel" (R_X = patch) or "unit" (1)
    digits: tuple[int, int] = (0, 1)
    n_test: int | None = None          # None = the whole 0/1 test split
    seed: int = 0
    delta: float = 0.05
    dtype: str = "float32"
    data: str | None = None            # None = generated images (quick preset)
    n_generated: int = 0               # size of the generated pool (train + test), quick only
    device: str = "cpu"

    def check(self) -> None:
        """Every field in its range and the rules over several fields: the rows of
        :data:`boundcalc.inputs.experiment_fields.TABLE1` (an ``InputError``, a ``ValueError``,
        naming the field)."""
        TABLE1.check_config(asdict(self))


#: The presets: the fields each sets away from the defaults, written once in the field rows.
PRESETS: dict[str, Table1Config] = {name: replace(Table1Config(), **values)
                                    for name, values in TABLE1.presets.items()}


def make_config(preset: str, data: str | os.PathLike | None = None, device: str = "cpu",
                **overrides: Any) -> Table1Config:
    """The preset's config with ``data`` (required by ``paper``) and ``device``; more fields may
    be overridden by keyword (tests)."""
    if preset not in PRESETS:
        raise ValueError(f"`preset` must be one of {sorted(PRESETS)}, got {preset!r}")
    if preset == "paper" and data is None:
        raise ValueError("--data PATH is required by the paper preset (the MNIST IDX folder or "
                         "an .npz with x_train, y_train, x_test, y_test; nothing is downloaded)")
    if data is not None:
        overrides["data"] = str(Path(data).resolve())
    for key in ("dms", "Ns"):
        if key in overrides:
            overrides[key] = tuple(int(v) for v in overrides[key])
    cfg = replace(PRESETS[preset], device=str(device), **overrides)
    cfg.check()
    return cfg


def cell_key(d_m: int, N: int) -> str:
    """File name of a cell: ``dm<d_m>-N<N>``."""
    return f"dm{int(d_m)}-N{int(N)}"


def all_cells(cfg: Table1Config) -> list[tuple[int, int]]:
    return [(d_m, N) for d_m in cfg.dms for N in cfg.Ns]


def is_done(run: RunDirectory, cell: tuple[int, int]) -> bool:
    """True when the (d_m, N) cell is stored; a damaged cell file is moved aside with a warning
    and trained again."""
    key = cell_key(*cell)
    return run.has_cell(key, **cell_checks("table1", key))


def train_cell(d_m: int, N: int, data: dict[str, np.ndarray], cfg: Table1Config
               ) -> dict[str, Any]:
    """Train one (d_m, N) cell and evaluate the bound at its measured quantities."""
    from boundcalc.generalization.bound import evaluate_generalization

    started = time.perf_counter()
    dtype = getattr(torch, cfg.dtype)
    dev = torch.device(cfg.device)
    X = torch.from_numpy(data["X_pool"][:N]).to(dtype=dtype, device=dev)
    y = torch.from_numpy(data["y_pool"][:N]).to(dtype=dtype, device=dev)
    X_te = torch.from_numpy(data["X_test"]).to(dtype=dtype, device=dev)
    y_te = torch.from_numpy(data["y_test"]).to(dtype=dtype, device=dev)
    params0 = lecun_init(d_m, int(X.shape[2]), seed=cfg.seed, dtype=dtype, device=dev)
    init = measure_init(params0, X, y)
    run = train_gd(params0, X, y, steps=cfg.steps, lr=cfg.lr, objective="cross_entropy",
                   eval_loss="logistic", X_test=X_te, y_test=y_te)
    test = run.test_loss.numpy()
    finite = np.where(np.isfinite(test), test, np.inf)
    best = int(np.argmin(finite))
    travelled = run.radii
    radii = tuple(max(r, MIN_RADIUS) for r in travelled)
    rx = r_x_bound(cfg.patch, cfg.scale)
    alpha = init["alpha"]
    alpha_used = alpha if alpha > 0 else MIN_ALPHA   # measured 0: the limit alpha -> 0+
    common = {"N": N, "d_m": d_m, "d_s": init["d_s"], "R_X": rx, "radii": radii,
              "delta": cfg.delta, "alpha": alpha_used, "Phi0": init["Phi0"],
              "init_norms": init["norms"]}
    findings = ["Lemma 4 does not apply as stated: GD on the cross-entropy, not on Phi; the "
                "logistic loss has l(y, y) != 0"]
    if not alpha > 0:
        why = "N > d_m, " if d_m < N else ""
        findings.append(f"alpha = sigma_min(F_pre^0) measured {alpha:g} (F_pre^0 rank-deficient: "
                        f"{why}dead ReLU units, exact zero pixels): "
                        f"the bound is evaluated at alpha -> 0+ ({MIN_ALPHA:g}), where the "
                        "alpha-conditions fail")
    derived, refused = _evaluate(evaluate_generalization, common)
    printed = None
    if derived is not None and math.sqrt(sum(r * r for r in radii)) > cfg.delta:
        printed, _ = _evaluate(evaluate_generalization, {**common, "as_printed": True})
    if derived is None:
        findings.append(f"Theorem 5 not evaluated: {refused}")
    conds = derived["conditions"] if derived is not None else []
    holding = [c["name"] for c in conds if c["holds"]]
    failing = [c["name"] for c in conds if not c["holds"]]
    bound = float(derived["bound"]["true_loss"]) if derived is not None else math.nan
    lowest = float(finite[best]) if np.isfinite(finite[best]) else math.nan
    # the free yardstick: what the zero predictor (logit 0) and the untrained model lose on the
    # held-out set; a bound at or above it says nothing about the trained model
    zero = float(eval_loss_value(torch.zeros_like(y_te), y_te, "logistic"))
    if derived is not None and not failing and lowest > bound:
        findings.append(f"lowest test loss {lowest:.6g} above the Theorem 5 bound {bound:.6g} "
                        "with every condition holding")
    paper = PAPER_TABLE1.get((d_m, N), (math.nan, -1)) if cfg.data is not None \
        else (math.nan, -1)
    record: dict[str, Any] = {
        "d_m": int(d_m), "N": int(N), "d_s": init["d_s"], "d": init["d"],
        "steps": cfg.steps, "lr": cfg.lr, "n_test": int(y_te.shape[0]),
        "lowest_test_loss": lowest, "lowest_test_epoch": best,
        "final_test_loss": float(test[-1]), "max_test_loss": float(np.nanmax(test)),
        "min_train_loss": float(np.nanmin(run.train_loss.numpy())),
        "final_train_loss": float(run.train_loss[-1]),
        "paper_lowest_test_loss": paper[0], "paper_epoch": paper[1],
        **{f"init_{k}": v for k, v in init["norms"].items()},
        "alpha": alpha, "alpha_used": alpha_used,
        "alpha_full_row_rank": init["alpha_full_row_rank"],
        "Phi0": init["Phi0"], "R_X_used": rx, "R_X_measured": init["R_X"],
        **{f"travelled_{k}": v for k, v in zip(("R_Q", "R_K", "R_V", "R_O"), travelled,
                                               strict=True)},
        "theorem5_bound": bound,
        "theorem5_bound_printed": (float(printed["bound"]["true_loss"]) if printed
                                   else math.nan),
        "rademacher_term": (float(derived["terms"].get("rademacher", math.nan))
                            if derived is not None else math.nan),
        "lemma4_bound": (float(derived["terms"]["empirical_loss"]) if derived is not None
                         else math.nan),
        "probability": float(derived["probability"]) if derived is not None else math.nan,
        "conditions_holding": ";".join(holding) or "none",
        "conditions_failing": (";".join(failing) or "none") if derived is not None
        else "not evaluated",
        "conditions_hold_count": f"{len(holding)}/{len(conds)}",
        "all_conditions_hold": derived is not None and not failing,
        "lemma4_applies": False,
        "lowest_test_under_bound": lowest <= bound,
        "max_test_under_bound": float(np.nanmax(test)) <= bound,
        "zero_predictor_test_loss": zero, "initial_test_loss": float(test[0]),
        "findings": " | ".join(findings),
        "wall_s": round(time.perf_counter() - started, 3),
    }
    verdict = table1_row(record)
    record.update({k: verdict[k] for k in ("theorem5_free_bound", "theorem5_free_bound_key",
                                           "theorem5_verdict", "under_bound")})
    if verdict["theorem5_verdict"] == "vacuous":
        record["findings"] += (f" | the Theorem 5 bound {bound:.6g} is at or above the free "
                               f"yardstick {verdict['theorem5_free_bound']:.6g} (held-out loss "
                               f"of the zero predictor, log 2, or of the model at init): "
                               f"vacuous, a test loss under it says nothing")
    return record


#: Calculator flag → the measured quantity it stands for here (a refusal names the quantity,
#: never a flag the user did not give).
_MEASURED = {"--alpha": "alpha = sigma_min(F_pre^0)", "--phi0": "Phi(theta^0)",
             "--radii": "travelled radii", "--rx": "R_X", "--N": "N", "--dm": "d_m",
             "--ds": "d_s", "--delta": "delta"}


def _evaluate(evaluate: Any, kwargs: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """``evaluate(**kwargs)``, or (None, why) when the calculator refuses a measured value."""
    from boundcalc.inputs.params import InputError

    try:
        return evaluate(**kwargs), ""
    except InputError as err:
        text = str(err)
        if text.startswith(err.flag + " "):
            text = text[len(err.flag) + 1:]
        return None, f"the measured {_MEASURED.get(err.flag, err.flag.lstrip('-'))} {text}"


def table_rows(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The columns of ``table1.csv`` (one row per cell; no wall times, so a resumed run gives the
    same file): :func:`boundcalc.runs.summaries.table1_row`, what ``boundcalc table`` shows."""
    return [table1_row(r) for r in records]


def latex_table(records: list[dict[str, Any]], cfg: Table1Config) -> str:
    """Booktabs: d_m, N, lowest test loss and epoch (this run's and the paper's, under grouped
    heads), Theorem 5 bound and the number of Lemma 4 conditions that hold —
    :func:`boundcalc.runs.tables.render_tables`, the text ``boundcalc table RUN --format latex``
    prints for the same run."""
    from boundcalc.runs.stored import revive
    from boundcalc.runs.tables import render_tables, tables_from_summaries

    rows = [{k: revive(v) for k, v in row.items()} for row in table_rows(records)]
    return render_tables(tables_from_summaries("table1", [("", rows, [])]), "latex")


def collect(run: RunDirectory, cfg: Table1Config) -> list[dict[str, Any]]:
    return [run.load_cell(cell_key(*c)) for c in all_cells(cfg) if is_done(run, c)]


def write_outputs(run: RunDirectory, cfg: Table1Config) -> list[dict[str, Any]]:
    """results.csv/json, table1.csv and table1_table.tex from the stored cells."""
    records = collect(run, cfg)
    run.write_results(records)
    write_atomic(run.path / "table1.csv", records_to_csv(table_rows(records)))
    write_atomic(run.path / "table1_table.tex", latex_table(records, cfg))
    return records


def run_table1(preset: str = "quick", data: str | os.PathLike | None = None,
               device: str = "cpu", out: str | os.PathLike | None = None,
               progress: bool = True, max_cells: int | None = None,
               threads: int | None = None, **overrides: Any) -> Path:
    """Run (or resume) the Table-1 experiment and write its outputs; returns the run folder.

    Args:
        preset: ``paper`` (needs ``data``) or ``quick`` (generated images, small sizes).
        data: MNIST IDX folder or .npz (:func:`validators.data.mnist.load_mnist`).
        device: ``cpu`` or ``cuda[:k]``.
        out: run directory (resumed when it holds the same run). None = ``runs/table1-<preset>``.
        progress: one line per finished cell on stderr.
        max_cells: train at most this many new cells (then write what is done).
        threads: torch threads on the CPU (default 1; restored afterwards).
        **overrides: further :class:`Table1Config` fields, for tests.
    """
    cfg = make_config(preset, data, device, **overrides)
    def compute(run: RunDirectory) -> int:
        pending = [c for c in all_cells(cfg) if not is_done(run, c)]
        if max_cells is not None:
            pending = pending[:max(0, int(max_cells))]
        data_arrays = (load_digit_tokens(cfg.data, Ns=cfg.Ns, seed=cfg.seed, n_test=cfg.n_test,
                                         n_generated=cfg.n_generated, digits=cfg.digits,
                                         patch=cfg.patch, scale=cfg.scale) if pending else None)
        trained, eta = 0, Eta()
        for d_m, N in pending:
            record = train_cell(d_m, N, data_arrays, cfg)
            run.save_cell(cell_key(d_m, N), record)
            trained += 1
            eta.cell()
            if progress:
                print(f"[table1 {trained}/{len(pending)}] d_m={d_m} N={N} lowest test loss "
                      f"{record['lowest_test_loss']:.4g} at epoch {record['lowest_test_epoch']}"
                      f", bound {record['theorem5_bound']:.4g} ({record['theorem5_verdict']} "
                      f"against the free {record['theorem5_free_bound']:.4g}), conditions "
                      f"{record['conditions_hold_count']} ({record['wall_s']:.1f} s); "
                      f"{eta.text(len(pending) - trained)}",
                      file=sys.stderr, flush=True)
        return trained

    return run_experiment("table1", preset, asdict(cfg), cfg.device, out, compute,
                          lambda run: write_outputs(run, cfg), progress=progress,
                          threads=threads)


__all__ = ["PAPER_TABLE1", "PRESETS", "Table1Config", "all_cells", "cell_key", "collect",
           "latex_table", "make_config", "run_table1", "table_rows", "train_cell",
           "write_outputs"]
