"""CLI commands that run the model: ``validate``, and the IndRNN comparison ``compare-rnn``.

Kept apart from :mod:`boundcalc.cli` so that the calculator commands never import torch: every
function here imports :mod:`boundcalc.validation.runner` / :mod:`boundcalc.validators` only when
called. :func:`register` and :func:`register_compare_rnn` add the commands to the calculator's
typer app (``reproduce`` lives in :mod:`boundcalc.cli.reproduce`).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from boundcalc.cli.app import (
    check_format_flag,
    output_file,
    require_matplotlib,
    run_directory_errors,
)
from boundcalc.cli.executor_options import (
    CellsPerTask,
    DaskAddress,
    DaskDashboard,
    Executor,
    SlurmArrayParallelism,
    SlurmCpusPerTask,
    SlurmGpusPerTask,
    SlurmPartition,
    SlurmSetup,
    SlurmTime,
    executor_settings,
)
from boundcalc.cli.options import DEVICES, choice_option, format_option, param_option
from boundcalc.execution.executors import owned
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.params import PARAMS
from boundcalc.inputs.validate_flags import check_validate
from boundcalc.validation.settings import require_torch

_VALIDATE_HELP = """Check the bounds against the real model: adversarial searches (Lemmas 2, 3, 6,
and the tight route's constants on the head-average event), probability checks over many inits
(Definition 1 and the head-average event, Lemma 5 with d and d-free attention parts),
T-independence (Remark 3) and real ProjGD / ProjSGD runs against both proof routes (Theorem 1,
Proposition 1). Prints measured vs bound with their ratio (for the training bounds also the
run's measured loss at initialization R0, the free yardstick min(B^2, Y^2, R0) the bound must beat
to say anything, and the verdict beside holds: "true, vacuous"), writes
a run directory (config.json, one file per finished cell, results.csv / results.json) and exits 1
if any measurement exceeds its bound (generalization: only if its conditions hold, see below).
Re-running with the same --out resumes: finished cells are
loaded, not recomputed. Progress on stderr (--quiet: none): one line per cell ([validate i/N]) with
the ETA of the cells left (from the finished cells' times), and every 15 s of a cell still
computing a "running for" line with its ETA.

STATEMENT: event, lemma2, lemma3, lemma5, lemma6, remark3, tight, theorem1, prop1, all (these nine:
the Transformer paper's statements; tight = the tight route's L, eps_lin, eps_taylor, eps_cf, F
and Y with U(0) in the head-average ball, and its per-head block bounds Phi and H), prop2 or
generalization (several may be given).

prop2 (Proposition 2, the IndRNN of App. B.1; not part of all): the per-unit gradient and Hessian
constants G_T, H_T, the Lipschitz constant L and eps_lin of the derived IndRNN bound against the
IndRNN at a boundary point of Omega_rho with |u_i| = alpha + rho_u/sqrt(m) (--m, --d, --T, --rho,
--alpha, --activation, --effort sets the number of input sequences, one of them with aligned
tokens). Past the cutoff alpha*sigma_1 >= 1 the bounds grow geometrically in T.

generalization (paper 003; not part of all): trains the shallow Transformer encoder with plain GD
on Phi = 1/2 sum (f - y)^2 from a LeCun init per seed (--dm, --N, --steps, --lr, --seeds; data: the
generated two-class image set of reproduce table1 --preset quick, or --data PATH) and compares
max_t empirical loss |f - y| with the Lemma 4 bound and max_t held-out loss (an estimate of the
true loss) with the Theorem 5 bound, derived and printed forms, at the measured init norms, alpha,
Phi(theta0), R_X and the radii travelled (or --radii). Each row says which conditions of Lemma 4
hold (width, alpha_square, alpha_cube, probability_positive, radii_contain_trajectory, and for the
printed form dudley_minimiser_le_A; conditions_hold = all of them), holds (measured <= bound) and,
beside it, the bound's verdict: guaranteed (every condition holds and the bound is below every
free bound: the loss range A + Y, and the measured loss of the zero predictor and of theta0 on
the row's set, held-out for Theorem 5, training for Lemma 4), vacuous (conditions hold, bound not
below a free bound) or not_guaranteed (a condition fails), with zero_pred, at_init and
bound/free. Exit status: a loss above its bound is a VIOLATION (exit 1, one warning line on
stderr) only when every condition holds; when a condition fails (conditions_hold=False) the bound
does not apply, and a loss above it is not applicable (exit 0). Flags of the other family
(--m, --n, --d, --T, ... for the Transformer; --dm, --N, --lr, --data, ... for generalization)
are refused when no selected statement uses them."""

_VALIDATE_EXAMPLES = """Examples:

boundcalc validate all --m 16 --n 64 --rho 2

boundcalc validate lemma2 lemma3 --m 64 --d 8 --T 128 --rho 5 --effort thorough

boundcalc validate theorem1 --m 256 --n 1000 --steps 4000 --device cuda --format json

boundcalc validate theorem1 --decompose --m 8 --n 32 --d 4 --T 4 --steps 50

boundcalc validate prop2 --m 16 --d 4 --T 32 --alpha 0.9 --rho 2

boundcalc validate generalization --dm 32 --N 64 --steps 300 --lr 0.001 --seeds 2

boundcalc validate generalization --data ~/mnist --dm 64 --N 400 --device cuda"""

#: Table header of the verdict columns of ``generalization`` rows, shown right after ``holds``.
_VERDICT_COLUMNS = {"verdict": "verdict", "zero_predictor_loss": "zero_pred",
                    "initial_loss": "at_init", "bound_over_free": "bound/free"}

#: Table header of each condition column of ``generalization`` rows.
_CONDITION_COLUMNS = {"cond_width": "width", "cond_alpha_square": "alpha_sq",
                      "cond_alpha_cube": "alpha_cube",
                      "cond_probability_positive": "prob_pos",
                      "cond_radii_contain_trajectory": "in_radii",
                      "cond_dudley_minimiser_le_A": "dudley_le_A",
                      "cond_bound_positive": "bound_pos",
                      "cond_lemma4_applies": "lemma4_applies"}

#: Table header of the free-yardstick columns of the training bounds' rows (the verdict is
#: printed inside ``holds``).
_YARDSTICK_COLUMNS = {"initial_loss": "R̂(θ_0)", "free_bound": "free_bound",
                      "free_bound_key": "binds", "bound_over_free_bound": "bound/free"}


#: The defaults of ``validate`` (small, CPU-fast sizes), from the parameter table.
_V: dict[str, str] = {p.name: p.validation_default for p in PARAMS.values()
                      if p.validation_default is not None}


def _cap_text(holds: str, over_cap: object) -> str:
    """``holds`` with what a bound at or above its free cap is worth beside it: ``true, at its
    free cap`` (bound = cap: the lemma adds nothing to what holds without it), ``true, above its
    free cap``; unchanged for a row without a cap or below it.

    Example:
        >>> _cap_text("true", 1.0), _cap_text("true", 0.5), _cap_text("true", None)
        ('true, at its free cap', 'true', 'true')
    """
    if not isinstance(over_cap, (int, float)) or over_cap != over_cap or over_cap < 1:
        return holds
    return f"{holds}, {'at' if over_cap == 1 else 'above'} its free cap"


def _p(name: str, help: str) -> Any:
    """The option of parameter ``name`` with its validate default (flag and metavar from the
    parameter table)."""
    param = PARAMS[name]
    return _s(param.flag, _V[name], help, param.metavar)


def _s(name: str, default: str, help: str, metavar: str = "NUM") -> Any:
    return typer.Option(name, help=help, metavar=metavar, show_default=default)


def _given(ctx: typer.Context, param: str) -> bool:
    """Whether ``param`` came from the command line / environment, not its default."""
    source = ctx.get_parameter_source(param)
    return source is not None and getattr(source, "name", "DEFAULT") != "DEFAULT"


def validate(
    ctx: typer.Context,
    statements: Annotated[list[str], typer.Argument(help="what to validate", metavar="STATEMENT")],
    m: Annotated[str, _p("m", "width m (even, <= 2**24)")] = _V["m"],
    n: Annotated[str, _p("n", "training samples (lemma5, theorem1, prop1)")] = _V["n"],
    d: Annotated[str, _p("d", "token dimension")] = _V["d"],
    T: Annotated[str, _p("T", "sequence length")] = _V["T"],
    rho: Annotated[str, _p("rho", "projection radii rho or rho_c,rho_u,rho_w")] = _V["rho"],
    nu: Annotated[str, _p("nu", "transport budgets nu or nu_c,nu_u,nu_w")] = _V["nu"],
    delta: Annotated[str, _p("delta", "failure probability per event (generalization: "
                             "the delta of Lemma 4 / Theorem 5)")] = _V["delta"],
    activation: Annotated[str, _p("activation", "tanh or erf")] = _V["activation"],
    steps: Annotated[str, _p("steps", "ProjGD/ProjSGD steps K (generalization: GD "
                             "steps)")] = _V["steps"],
    seeds: Annotated[str, _s("--seeds", "1", "searches and training runs use seeds 0..S-1 "
                             "(generalization: one cell per init seed)", "S")] = "1",
    rate_seeds: Annotated[str, _s("--rate-seeds", "200",
                                  "inits for the probability checks (event, lemma5)",
                                  "S")] = "200",
    batch_size: Annotated[str, _p("batch_size", "ProjSGD minibatch size")] = _V["batch_size"],
    teacher_width: Annotated[str, _s("--teacher-width", "8192",
                                     "Monte Carlo width of the teacher", "INT")] = "8192",
    effort: Annotated[str, choice_option("--effort", choices=("quick", "standard", "thorough"),
                                         help="search effort: quick, standard, thorough",
                                         show_default="quick")] = "quick",
    dm: Annotated[str, _s("--dm", "32", "generalization: model dimension d_m", "INT")] = "32",
    N: Annotated[str, _s("--N", "64", "generalization: training samples N", "INT")] = "64",
    n_test: Annotated[str, _s("--n-test", "128", "generalization: held-out samples (estimate "
                              "of the true loss)", "INT")] = "128",
    lr: Annotated[str, _s("--lr", "0.001", "generalization: GD step size on Phi (a sum over "
                          "the N samples)", "STEP")] = "0.001",
    data: Annotated[str | None, typer.Option(
        "--data", metavar="PATH", help="generalization: MNIST IDX folder or .npz (digits 0 vs 1), "
        "or an .npz with tokens X (M, d_s, d), y (M,) [, X_test, y_test]; default: the generated "
        "set of reproduce table1 --preset quick")] = None,
    radii: Annotated[str, _s("--radii", "travelled", "generalization: R_Q,R_K,R_V,R_O (or one "
                             "value) for the bounds; travelled = max_t distance from init",
                             "R[,R,R,R]")] = "travelled",
    hidden_constants: Annotated[str | None, typer.Option(
        "--hidden-constants", metavar="NAME=V,...",
        help="generalization: the calculator's hidden constants (C_D, C_cov, C_conf, C_O, "
        "C_width, C_prob, c_hat; default 1)")] = None,
    alpha: Annotated[str, _s("--alpha", "1.5", "prop2: the IndRNN's recurrent init scale "
                             "(u_i = +-alpha)", "A")] = "1.5",
    device: Annotated[str, choice_option("--device", choices=DEVICES, help="auto, cpu or cuda",
                                         show_default="auto")] = "auto",
    dtype: Annotated[str, choice_option("--dtype", choices=("float64", "float32"),
                                        help="float64 or float32",
                                        show_default="float64")] = "float64",
    fmt: Annotated[str, format_option(("table", "json"), panel=None)] = "table",
    out: Annotated[str | None, typer.Option("--out", help="run directory (default "
                                            "runs/validate-<UTC time>)", metavar="DIR")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
    decompose: Annotated[bool, typer.Option(
        "--decompose", "--certify", help="theorem1, prop1: the run-measured decomposition of "
        "the proof's slack along one ProjGD / ProjSGD run per seed: a-priori bound -> "
        "a-posteriori bound -> the same with each constant measured on this run -> measured "
        "loss, one proof inequality per level; below the a-posteriori level it uses the run's "
        "own residuals and bounds only that run's loss (decompose.csv/json, "
        "decompose_steps.csv, decompose_samples.npz, decompose.pdf/png in the run directory). "
        "--certify: its old name, kept one release")] = False,
    eta: Annotated[str | None, typer.Option(
        "--eta", help="--decompose: step size (default: the theorem's eta*)",
        metavar="STEP")] = None,
    executor: Executor = "processes",
    jobs: Annotated[int, typer.Option(
        "--jobs", metavar="N", rich_help_panel="Executor (where the cells run)",
        help="dask: worker processes of the local cluster (processes computes the cells here, "
        "one after the other)")] = 1,
    dask_address: DaskAddress = None,
    dask_dashboard: DaskDashboard = False,
    cells_per_task: CellsPerTask = 1,
    slurm_partition: SlurmPartition = None,
    slurm_time: SlurmTime = None,
    slurm_gpus_per_task: SlurmGpusPerTask = None,
    slurm_cpus_per_task: SlurmCpusPerTask = None,
    slurm_array_parallelism: SlurmArrayParallelism = None,
    slurm_setup: SlurmSetup = None,
) -> None:
    from boundcalc.runs import validation_summary
    from boundcalc.validation import runner as validation_runner
    from boundcalc.validation import settings as validation_settings
    names = validation_settings.expand_statements(statements)
    values = {"m": m, "n": n, "d": d, "T": T, "rho": rho, "nu": nu, "delta": delta,
              "activation": activation, "steps": steps, "seeds": seeds, "rate_seeds": rate_seeds,
              "batch_size": batch_size, "teacher_width": teacher_width, "effort": effort,
              "device": device, "dtype": dtype, "fmt": fmt, "out": out, "dm": dm, "N": N,
              "n_test": n_test, "lr": lr, "data": data, "radii": radii,
              "hidden_constants": hidden_constants, "alpha": alpha, "eta": eta}
    given = {name for name in values if _given(ctx, name)}
    if validation_settings.INDRNN not in names:
        values.pop("alpha")  # its default is not checked where prop2 does not run
    # every flag and every rule over several flags, before any run directory, lock or torch
    checked = check_validate(values, names, given, decompose=decompose)
    fmt = checked["fmt"]
    check_combinations("validate", {"executor": executor, "jobs": jobs,
                                    "decompose": decompose})
    engine = executor_settings(executor, jobs, dask_address, cells_per_task, slurm_partition,
                               slurm_time, slurm_gpus_per_task, slurm_cpus_per_task,
                               slurm_array_parallelism, slurm_setup, dask_dashboard)
    require_torch("STATEMENT", f"validate {' '.join(names)} measures the model")
    folder = Path(out) if out is not None else Path("runs") / time.strftime(
        "validate-%Y%m%dT%H%M%SZ", time.gmtime())
    # one driver per run directory: its lock is taken before torch is imported, so a second
    # driver on a live --out is refused at once; released when the command ends
    ctx.with_resource(owned(folder))
    # with dask or slurm the cells run elsewhere: --device cuda needs no GPU on this machine
    remote = engine.engine and checked["device"].startswith("cuda")
    settings = validation_settings.validation_settings(
        {**checked, "device": "cpu" if remote else checked["device"]})
    if remote:
        settings = dataclasses.replace(settings, device=checked["device"])
    note = validation_settings.batch_size_note(names, "8", settings)
    if note and not quiet:
        sys.stderr.write(note + "\n")
    if validation_settings.INDRNN in names:
        settings.extra[validation_settings.INDRNN] = {"alpha": float(checked["alpha"])}
    if validation_settings.GENERALIZATION in names:
        general = validation_settings.generalization_settings(
            {**checked, "device": "cpu" if remote else checked["device"]})
        if remote:
            general = dataclasses.replace(general, device=settings.device)
        settings.extra[validation_settings.GENERALIZATION] = general
    eta_value = None if checked.get("eta") is None else float(checked["eta"])
    if decompose:
        require_matplotlib("--decompose", "draws decompose.pdf/png")
        _decompose(names, settings, folder, eta_value, fmt, quiet)
        return
    with run_directory_errors():
        records = validation_runner.run_validation(
            names, settings, folder,
            progress=None if quiet else (lambda line: sys.stderr.write(line + "\n")),
            executor=engine)
    rows = validation_summary.summary_rows(records)
    violations = [r for r in rows if validation_summary.is_violation(r)]
    not_applicable = [r for r in rows if validation_summary.is_not_applicable(r)]
    if fmt == "json":
        import json

        from boundcalc.runs.directory import jsonable

        shown_settings = settings.as_dict()
        if validation_settings.GENERALIZATION in shown_settings:
            shown_settings[validation_settings.GENERALIZATION] = general.as_dict()
        sys.stdout.write(json.dumps(jsonable({
            "settings": shown_settings, "run_directory": str(folder), "summary": rows,
            "violations": len(violations), "not_applicable": len(not_applicable)}),
            indent=2) + "\n")
    else:
        import pandas as pd

        from boundcalc.render.frame_text import render_frame

        shown = ["statement", "name", "method", "count", "measured", "bound", "ratio", "holds"]
        if any("a_posteriori_bound" in r for r in rows):
            shown.append("a_posteriori_bound")
        conditions = [c for c in _CONDITION_COLUMNS if any(c in r for r in rows)]
        if any("verdict" in r for r in rows) and not conditions:  # the training bounds
            shown += list(_YARDSTICK_COLUMNS)
        if any("free_cap" in r for r in rows):
            shown += ["free_cap", "bound_over_free_cap"]
        if conditions:
            shown[1:1] = ["seed"]
            shown.remove("count")
            if any("verdict" in r for r in rows):  # holds is never shown without the verdict
                shown += list(_VERDICT_COLUMNS)
            shown += ["conditions_hold", *conditions]
        from boundcalc.runs.validation_summary import YARDSTICK_SYMBOL

        table_rows = [{**r, "holds": _cap_text(validation_summary.holds_text(
                           r["holds"], r.get("verdict")), r.get("bound_over_free_cap")),
                       "free_bound_key": YARDSTICK_SYMBOL.get(r.get("free_bound_key"),
                                                              r.get("free_bound_key"))}
                      for r in rows]
        frame = (pd.DataFrame(table_rows).reindex(columns=shown)
                 .rename(columns={**_CONDITION_COLUMNS, **_YARDSTICK_COLUMNS,
                                  **_VERDICT_COLUMNS, "bound_over_free_cap": "bound/cap"}))
        sys.stdout.write(render_frame(frame, "table", max_rows=None,
                                      title=f"measured vs bound on {settings.device}"))
        verdict = ("no violation" if not violations else
                   f"{len(violations)} VIOLATION(S): a measurement exceeds its bound"
                   + (" with every condition holding" if conditions else ""))
        if not_applicable:
            verdict += (f" ({len(not_applicable)} measurement(s) above a bound whose conditions "
                        f"fail: not applicable)")
        capped = [r for r in rows if (r.get("bound_over_free_cap") or 0) > 1]
        if capped:
            verdict += (f"; {len(capped)} constant bound(s) above their free cap (free_cap: "
                        f"what holds without the lemma)")
        vacuous = [r for r in rows if r.get("verdict") == "vacuous"]
        if vacuous:
            verdict += (f"; {len(vacuous)} bound(s) VACUOUS: at or above their free yardstick "
                        f"(free_bound; binds: which one), so a measurement under them says "
                        f"nothing about the theorem")
        for row in rows:
            if "not_applicable" in row:
                sys.stdout.write(f"{row['statement']} seed {row.get('seed')} {row['name']} "
                                 f"({row['method']}): {row['not_applicable']}\n")
        sys.stdout.write(f"{verdict} · run directory {folder}\n")
    for row in violations:
        sys.stderr.write(validation_summary.violation_warning(row) + "\n")
    if violations:
        raise typer.Exit(1)


def _decompose(names: list[str], settings: Any, folder: Path, eta: float | None, fmt: str,
               quiet: bool) -> None:
    """``validate theorem1|prop1 --decompose``: the chains, printed, with the free yardstick
    and the bounds' verdicts beside them; exit 1 on a violation (a level above the one before
    it)."""
    from boundcalc.validators.checks.certify import is_violation, run_certification

    with run_directory_errors():
        results = run_certification(
            names, settings, folder, eta=eta,
            progress=None if quiet else (lambda line: sys.stderr.write(line + "\n")))
    chain = [row for res in results for row in res["chain"]]
    bad = [row for res in results for row in (*res["chain"], *res["parts"])
           if is_violation(row)]
    if fmt == "json":
        import json

        from boundcalc.runs.directory import jsonable

        sys.stdout.write(json.dumps(jsonable({
            "settings": {**settings.as_dict(), "eta": eta}, "run_directory": str(folder),
            "summary": [res["summary"] for res in results], "chain": chain,
            "violations": len(bad)}), indent=2) + "\n")
    else:
        import pandas as pd

        from boundcalc.render.frame_text import render_frame

        shown = ["statement", "seed", "route", "level", "stage", "label", "value", "slack",
                 "kind", "holds"]
        # a level's "holds" is the inequality to the level above, not the bound's verdict
        frame = (pd.DataFrame(chain).reindex(columns=shown)
                 .rename(columns={"holds": "le_level_above"}))
        sys.stdout.write(render_frame(
            frame, "table", max_rows=None,
            title=f"run-measured decomposition of the proof's slack on {settings.device}"))
        for res in results:
            sys.stdout.write(_yardstick_line(res["summary"]) + "\n")
        verdict = ("no violation: every level <= the level above it" if not bad else
                   f"{len(bad)} VIOLATION(S): a level exceeds the level above it")
        sys.stdout.write(f"{verdict} · run directory {folder}\n")
    for row in bad:
        where = f"{row['statement']} seed {row['seed']} {row.get('route', 'part')}"
        what = row.get("key", row.get("name"))
        value, bound = row.get("value", row.get("measured")), row.get("above", row.get("bound"))
        sys.stderr.write(f"warning: VIOLATION {where} {what}: {value:.6g} > {bound:.6g} "
                         f"({row['inequality']})\n")
    if bad:
        raise typer.Exit(1)


def _yardstick_line(summary: dict[str, Any]) -> str:
    """One line per decomposed run: the tight route's a-priori and a-posteriori bounds with their
    verdicts against the free yardstick min(B², Y², R̂(θ_0)), and what the levels below are."""
    from boundcalc.runs.validation_summary import YARDSTICK_SYMBOL

    where = f"{summary['statement']} seed {summary['seed']}"
    if summary.get("free_bound") is None:   # a cell stored before the yardstick was recorded
        return f"{where}: no free yardstick stored (an older run)"
    binds = YARDSTICK_SYMBOL.get(summary["free_bound_key"], summary["free_bound_key"])
    return (f"{where}: free yardstick min(B², Y², R̂(θ_0)) = {summary['free_bound']:.6g} "
            f"({binds} binds); tight a-priori bound {summary['a_priori_tight']:.6g}: "
            f"{summary['a_priori_verdict'].upper()}, a-posteriori "
            f"{summary['a_posteriori_tight']:.6g}: {summary['a_posteriori_verdict'].upper()}; "
            f"the levels below them use this run's own measurements and bound this run's loss "
            f"only")


def compare_rnn_command(
    T_values: Annotated[str, typer.Option("--T", help="comma list of sequence lengths",
                                          metavar="T,T,...")] = "1,2,4,8,16,32,64,128,256,512,1024",
    m: param_option(PARAMS["m"]) = None,
    n: param_option(PARAMS["n"]) = None,
    rho: param_option(PARAMS["rho"]) = None,
    nu: param_option(PARAMS["nu"]) = None,
    alpha: Annotated[str, typer.Option("--alpha", help="IndRNN recurrent scale alpha",
                                       metavar="A")] = "1.5",
    steps: param_option(PARAMS["steps"]) = None,
    activation: param_option(PARAMS["activation"]) = None,
    fmt: Annotated[str, format_option(panel=None)] = "table",
    output: Annotated[str | None, typer.Option("--output", "-o", callback=output_file,
                                               help="write to FILE "
                                               "(atomically) instead of stdout",
                                               metavar="FILE")] = None,
) -> None:
    """Theorem 1 (Transformer, flat in T) next to Proposition 2 (IndRNN, growing past the
    cutoff sigma1*alpha >= 1), one row per T.

    Examples: boundcalc compare-rnn --T 1,4,16,64,256,1024 --alpha 1.5 ; boundcalc compare-rnn
    --alpha 0.5 --format csv --output rnn.csv
    """
    import pandas as pd

    from boundcalc.calc.compare_rnn import compare_rnn
    from boundcalc.cli.app import emit as _emit
    from boundcalc.inputs.surfaces import COMPARE_RNN
    from boundcalc.render.frame_text import render_frame

    fmt = check_format_flag(fmt)
    Ts = COMPARE_RNN["T_values"].check(T_values)
    given = {name: value for name, value in (("m", m), ("n", n), ("rho", rho), ("nu", nu),
                                             ("steps", steps), ("activation", activation))
             if value is not None}  # the others take their defaults (the parameter table's)
    rows = compare_rnn(Ts, alpha=alpha, **given)  # type: ignore[arg-type]
    try:
        frame = pd.DataFrame(rows)
    except OverflowError:   # a length beyond int64, which older pandas cast to float
        frame = pd.DataFrame(rows, dtype=object)
    _emit(render_frame(frame, fmt, max_rows=None,
                       title="Transformer (Theorem 1) vs IndRNN (Proposition 2)"), output)


def register(app: typer.Typer) -> None:
    """Add ``validate`` to the calculator's app."""
    app.command("validate", help=_VALIDATE_HELP, epilog=_VALIDATE_EXAMPLES,
                short_help="Check the bounds against the real model (torch).")(validate)


def register_compare_rnn(app: typer.Typer) -> None:
    """Add ``compare-rnn`` to the calculator's app."""
    app.command("compare-rnn", short_help="Transformer vs IndRNN bound as T grows.")(
        compare_rnn_command)


__all__ = ["compare_rnn_command", "register", "register_compare_rnn", "validate"]
