"""``boundcalc validate``: run the validators against the calculator's bounds and keep the evidence.

Each statement maps to the measurement that could falsify it (``boundcalc.validators``), by its
row of the catalog's falsifiers (:data:`boundcalc.theory.catalog.FALSIFIERS`: module, function,
whether ``all`` runs it):

==========  ====================================================================================
event       max_i ‖U_i(0)‖ against the Definition 1 radius u_∞ and √((1/m)Σ_i ‖U_i(0)‖²)
            against the head-average radius ū (tight route) over ``rate_seeds`` inits (rate ≤ δ)
lemma2      adversarial and on-data sup ‖∇f‖ and largest |eigenvalue| of ∇²f against L and β
lemma3      the paper's gradient-aligned boundary point, then ascent on |f − f_lin|, against ε_lin
lemma5      max_j |f_lin(X_j; θ̄) − f*(X_j)| against ε_app, and against the tight route's d-free
            ε_app, over ``rate_seeds`` inits (rate ≤ δ)
lemma6      sup |f| and ‖∇R̂‖ on Ω_ρ against the envelopes F and 2LB
remark3     ‖X J Xᵀ‖ and sup ‖∇f‖ for T ∈ {1, 4, …, 1024}: one T-free bound at every T
tight       the tight route's constants on the head-average event E_avg (U(0) in the
            root-mean-square ball): adversarial and on-data L, ε_lin, ε_tay, ε_cf, F, and the
            d-free label envelope Y (``validators.checks.tight.validate_tight``)
theorem1    a ProjGD run on a realizable teacher–student problem against the min/average-iterate
            bounds of both proof routes (tight and paper), a priori and a posteriori
prop1       ProjSGD runs against the same bounds (in expectation)
==========  ====================================================================================

and, not part of ``all`` (which is the Transformer statements above):

==============  ================================================================================
prop2           Proposition 2's per-unit and network constants of the IndRNN (G_T, H_T, L, ε_lin)
                at a boundary point of Ω_ρ with |u_i| = α + ρ_u/√m
                (``validators.indrnn.measure_prop2``)
==============  ================================================================================

and, for paper 003:

==============  ================================================================================
generalization  GD on Φ of paper 003's encoder: max_t empirical loss against Lemma 4 and max_t
                held-out loss against Theorem 5 (derived and printed forms), with the conditions
                of Lemma 4 measured at θ⁰ (``validators.encoder.validation_records``)
==============  ================================================================================

**Exit status.** A record whose measurement exceeds its bound has ``holds = False``. It is a
*violation* (``validate`` exits 1 and warns on stderr) unless the record says that the conditions
its bound is stated under fail (``conditions_hold = False``): then the bound does not apply and the
row is reported but *not applicable* (:func:`is_violation`). The Transformer statements' records
carry no conditions, so for them every measurement above its bound is a violation.

Every (statement, seed) cell is written atomically into a run directory
(:class:`boundcalc.runs.directory.RunDirectory`) and skipped when the same command is run again
with the same ``--out``, so an interrupted run loses nothing. torch is imported only when a
validation actually runs, never by the calculator.

The pieces: :mod:`boundcalc.validation.settings` (statements, flags, settings),
:mod:`boundcalc.validation.cells` (the measurement of one cell),
:mod:`boundcalc.execution.progress` (progress lines with an ETA) and
:mod:`boundcalc.runs.validation_summary` (summary rows, violations).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from boundcalc.execution.executors import ExecutorSettings, cell_meta, owned, tasks_of
from boundcalc.execution.progress import CellTiming, cell_seconds, heartbeat
from boundcalc.inputs.validate_flags import check_run_statements
from boundcalc.runs.directory import RunDirectory
from boundcalc.validation.cells import (
    bound_not_positive,
    cell_runner,
    load_training_kernel,
    tag_record,
)
from boundcalc.validation.settings import (
    GENERALIZATION,
    TRAINING_STATEMENTS,
    ValidationSettings,
)

__all__ = ["run_validation", "validation_task"]


def validation_task(cells: tuple[tuple[str, tuple[str, int]], ...], context: dict
                    ) -> Iterator[tuple[str, list[dict]]]:
    """Executor entry (:mod:`boundcalc.execution.executors`): the records of each (statement, seed)
    cell,
    computed as the in-process path does, with its torch threads."""
    import torch

    torch.set_num_threads(context["threads"])
    settings = context["settings"]
    for key, (statement, seed) in cells:
        started = time.perf_counter()
        cell_records = cell_runner(statement, settings, seed)()
        seconds = time.perf_counter() - started
        yield key, [bound_not_positive(tag_record(rec, statement, seed, seconds))
                    for rec in cell_records]


def _cell_line(cell: list[dict], seconds: float) -> str:
    """What a finished cell's progress line says after its tag."""
    ratios = [float(r["ratio"]) for r in cell
              if isinstance(r.get("ratio"), (int, float)) and math.isfinite(float(r["ratio"]))]
    line = (f"done, {len(cell)} measurements in {seconds:.1f} s, "
            f"max measured/bound {max(ratios, default=0.0):.3g}")
    unbounded = sum("not_applicable" in r for r in cell)
    if unbounded:
        line += f" ({unbounded} bound(s) <= 0: not applicable, no ratio)"
    vacuous = sum(r.get("verdict") == "vacuous" for r in cell)
    if vacuous:
        line += f", {vacuous} bound(s) vacuous (at or above their free yardstick)"
    if any("failing" in r for r in cell):
        failing = sorted({f for r in cell for f in r["failing"].split(",") if f != "none"})
        line += (", every condition holds" if not failing else
                 f", failing conditions: {', '.join(failing)}")
    return line


def run_validation(statements: list[str], settings: ValidationSettings, out: str | Path,
                   progress: Callable[[str], None] | None = None,
                   executor: ExecutorSettings | None = None) -> list[dict]:
    """Run every (statement, seed) cell not already in ``out``; return all records.

    Records carry at least ``name``, ``measured``, ``bound``, ``ratio``, ``holds``; this function
    adds ``statement``, ``seed`` and ``seconds`` (wall time of the cell when it was computed).
    ``executor``: Dask or Slurm (:mod:`boundcalc.execution.executors`) computes the missing cells;
    None (or ``processes``) computes them here, one after the other. One driver owns ``out``.
    """
    with owned(out):
        return _run_validation(statements, settings, out, progress,
                               executor or ExecutorSettings())


def _run_validation(statements: list[str], settings: ValidationSettings, out: str | Path,
                    progress: Callable[[str], None] | None,
                    executor: ExecutorSettings) -> list[dict]:
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    check_run_statements(statements, settings.extra)
    config = {"statements": statements, **settings.as_dict()}
    if GENERALIZATION in config:
        config[GENERALIZATION] = settings.extra[GENERALIZATION].as_dict()
    if any(name in TRAINING_STATEMENTS for name in statements):
        # the CPU kernel of the training step is built (or its absence noted on stderr) before
        # the run directory is opened, so that config.json records the backend and why
        # (environment.cpu_kernel), as reproduce figure1 does
        load_training_kernel(settings)
    run = RunDirectory(out, config=config, device=settings.device)
    records: list[dict] = []
    cells = [(statement, seed) for statement in statements
             for seed in (range(1) if statement in ("event", "lemma5") else range(settings.seeds))]
    before = {p.stem for p in run.cells.glob("*.json")}
    where: dict = {}
    if executor.engine:
        from boundcalc.execution.engines import run_tasks

        pending = [(f"{st}-seed{sd}", (st, sd)) for st, sd in cells
                   if not run.has_cell(f"{st}-seed{sd}", identity={"statement": st, "seed": sd})]
        context = {"settings": settings, "threads": torch.get_num_threads(),
                   "device": settings.device}
        where = run_tasks(run, validation_task, tasks_of(pending, executor.cells_per_task),
                          context, executor, "validate", total=len(cells),
                          describe=lambda key, cell: _cell_line(cell, cell_seconds(cell) or 0.0),
                          write=progress)
    timing = CellTiming()
    for index, (statement, seed) in enumerate(cells, start=1):
        key = f"{statement}-seed{seed}"
        tag = f"[validate {index}/{len(cells)}] {key}"
        left = [name for name, _ in cells[index:]]
        if run.has_cell(key, identity={"statement": statement, "seed": seed}):
            cell = run.load_cell(key)
            timing.add(statement, cell_seconds(cell))
            if progress and key not in where:
                progress(f"{tag}: done earlier, loaded from {run.cells / (key + '.json')}")
        else:
            started = time.perf_counter()
            with heartbeat(progress, tag, started, timing, statement, left):
                cell_records = cell_runner(statement, settings, seed)()
            seconds = time.perf_counter() - started
            timing.add(statement, seconds)
            cell = [bound_not_positive(tag_record(rec, statement, seed, seconds))
                    for rec in cell_records]
            run.save_cell(key, cell)
            if progress:
                progress(f"{tag}: {_cell_line(cell, seconds)}; {timing.eta_text(left)}")
        records.extend(bound_not_positive(rec) for rec in cell)
    here = cell_meta({"device": settings.device})
    new = sorted({p.stem for p in run.cells.glob("*.json")} - before)
    run.record_execution(executor.as_dict(), {k: where.get(k, here) for k in new})
    run.write_results(records)
    return records
