"""CLI commands that run the model: ``validate``, ``reproduce``, and the IndRNN comparison.

Kept apart from :mod:`boundcalc.cli` so that the calculator commands never import torch: every
function here imports :mod:`boundcalc.validation` / :mod:`boundcalc.validators` only when called.
:func:`register` adds the commands to the calculator's typer app.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from boundcalc.params import InputError

_VALIDATE_HELP = """Check the bounds against the real model: adversarial searches (Lemmas 2, 3, 6),
probability checks over many inits (Definition 1, Lemma 5), T-independence (Remark 3) and real
ProjGD / ProjSGD runs (Theorem 1, Proposition 1). Prints measured vs bound with their ratio, writes
a run directory (config.json, one file per finished cell, results.csv / results.json) and exits 1
if any measurement exceeds its bound. Re-running with the same --out resumes: finished cells are
loaded, not recomputed.

STATEMENT: event, lemma2, lemma3, lemma5, lemma6, remark3, theorem1, prop1 or all (several may be
given)."""

_VALIDATE_EXAMPLES = """Examples:

boundcalc validate all --m 16 --n 64 --rho 2

boundcalc validate lemma2 lemma3 --m 64 --d 8 --T 128 --rho 5 --effort thorough

boundcalc validate theorem1 --m 256 --n 1000 --steps 4000 --device cuda --format json"""


def _s(name: str, default: str, help: str, metavar: str = "NUM") -> Any:
    return typer.Option(name, help=help, metavar=metavar, show_default=default)


def validate(
    statements: Annotated[list[str], typer.Argument(help="what to validate", metavar="STATEMENT")],
    m: Annotated[str, _s("--m", "16", "width m (even)", "EVEN")] = "16",
    n: Annotated[str, _s("--n", "64", "training samples (lemma5, theorem1, prop1)", "INT")] = "64",
    d: Annotated[str, _s("--d", "4", "token dimension", "INT")] = "4",
    T: Annotated[str, _s("--T", "8", "sequence length", "INT")] = "8",
    rho: Annotated[str, _s("--rho", "2", "projection radii rho or rho_c,rho_u,rho_w",
                           "R[,R,R]")] = "2",
    nu: Annotated[str, _s("--nu", "1", "transport budgets nu or nu_c,nu_u,nu_w",
                          "V[,V,V]")] = "1",
    delta: Annotated[str, _s("--delta", "0.05", "failure probability per event", "P")] = "0.05",
    activation: Annotated[str, _s("--activation", "tanh", "tanh or erf", "NAME")] = "tanh",
    steps: Annotated[str, _s("--steps", "300", "ProjGD/ProjSGD steps K", "K")] = "300",
    seeds: Annotated[str, _s("--seeds", "1", "searches and training runs use seeds 0..S-1",
                             "S")] = "1",
    rate_seeds: Annotated[str, _s("--rate-seeds", "200",
                                  "inits for the probability checks (event, lemma5)",
                                  "S")] = "200",
    batch_size: Annotated[str, _s("--batch-size", "8", "ProjSGD minibatch size", "B")] = "8",
    teacher_width: Annotated[str, _s("--teacher-width", "8192",
                                     "Monte Carlo width of the teacher", "INT")] = "8192",
    effort: Annotated[str, _s("--effort", "quick", "search effort: quick, standard, thorough",
                              "LEVEL")] = "quick",
    device: Annotated[str, _s("--device", "auto", "auto, cpu or cuda", "DEV")] = "auto",
    dtype: Annotated[str, _s("--dtype", "float64", "float64 or float32", "DTYPE")] = "float64",
    fmt: Annotated[str, typer.Option("--format", "-f", help="table or json",
                                     metavar="FORMAT")] = "table",
    out: Annotated[str | None, typer.Option("--out", help="run directory (default "
                                            "runs/validate-<UTC time>)", metavar="DIR")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", help="no progress lines")] = False,
) -> None:
    from boundcalc import validation

    if fmt not in ("table", "json"):
        raise InputError("--format", f"must be table or json, got {fmt!r}")
    names = validation.expand_statements(statements)
    settings = validation.make_settings(
        m=m, n=n, d=d, T=T, rho=rho, nu=nu, delta=delta, activation=activation, steps=steps,
        seeds=seeds, rate_seeds=rate_seeds, batch_size=batch_size, effort=effort,
        device=device, dtype=dtype, teacher_width=teacher_width)
    folder = Path(out) if out else Path("runs") / time.strftime("validate-%Y%m%dT%H%M%SZ",
                                                                time.gmtime())
    try:
        records = validation.run_validation(
            names, settings, folder,
            progress=None if quiet else (lambda line: sys.stderr.write(line + "\n")))
    except ValueError as err:
        if "run directory" in str(err):
            raise InputError("--out", str(err)) from None
        raise
    rows = validation.summary_rows(records)
    violations = [r for r in rows if not r["holds"]]
    if fmt == "json":
        import json

        from boundcalc.rundir import _jsonable

        sys.stdout.write(json.dumps(_jsonable({
            "settings": settings.as_dict(), "run_directory": str(folder), "summary": rows,
            "violations": len(violations)}), indent=2) + "\n")
    else:
        import pandas as pd

        from boundcalc.formats import render_frame

        shown = ["statement", "name", "method", "count", "measured", "bound", "ratio", "holds"]
        if any("a_posteriori_bound" in r for r in rows):
            shown.append("a_posteriori_bound")
        frame = pd.DataFrame(rows).reindex(columns=shown)
        sys.stdout.write(render_frame(frame, "table", max_rows=None,
                                      title=f"measured vs bound on {settings.device}"))
        verdict = ("no violation" if not violations else
                   f"{len(violations)} VIOLATION(S): a measurement exceeds its bound")
        sys.stdout.write(f"{verdict} · run directory {folder}\n")
    if violations:
        raise typer.Exit(1)


def reproduce(
    experiment: Annotated[str, typer.Argument(help="figure1, figure2 or table1",
                                                 metavar="EXPERIMENT")],
    preset: Annotated[str, typer.Option("--preset", help="quick or paper")] = "quick",
    seeds: Annotated[str | None, typer.Option("--seeds", help="number of seeds (default: the "
                                              "preset's)", metavar="S")] = None,
    device: Annotated[str, typer.Option("--device", help="auto, cpu or cuda")] = "auto",
    out: Annotated[str | None, typer.Option("--out", help="run directory", metavar="DIR")] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="parallel worker processes")] = 1,
    data: Annotated[str | None, typer.Option("--data", help="table1: MNIST IDX folder or .npz "
                                             "(required by --preset paper)",
                                             metavar="PATH")] = None,
) -> None:
    """Reproduce an experiment of the paper (Section 6.1: figure1, Section 6.2: figure2; paper
    003's Table 1: table1) into a resumable run directory.

    Examples: boundcalc reproduce figure1 --preset quick ; boundcalc reproduce figure2 --preset
    paper --device cuda --out runs/figure2-paper ; boundcalc reproduce table1 --preset paper
    --data ~/mnist
    """
    if experiment not in ("figure1", "figure2", "table1"):
        raise InputError("EXPERIMENT", f"must be figure1, figure2 or table1, got {experiment!r}")
    if preset not in ("quick", "paper"):
        raise InputError("--preset", f"must be quick or paper, got {preset!r}")
    if jobs < 1:
        raise InputError("--jobs", f"must be >= 1, got {jobs}")
    from boundcalc.validation import resolve_device

    seed_count = None
    if seeds is not None:
        from boundcalc.params import parse_integer

        seed_count = parse_integer("--seeds", seeds)
        if seed_count < 1:
            raise InputError("--seeds", f"must be >= 1, got {seeds!r}")
    if experiment == "table1":
        _reproduce_table1(preset, data, resolve_device(device), out)
        return
    if data is not None:
        raise InputError("--data", f"is for table1 only, not {experiment}")
    if experiment == "figure1":
        from boundcalc.validators.figure1 import run_figure1 as run_experiment
    else:
        from boundcalc.validators.figure2 import run_figure2 as run_experiment
    folder = run_experiment(preset, seeds=seed_count, device=resolve_device(device), out=out,
                            jobs=jobs)
    sys.stdout.write(f"figure {experiment[-1]} ({preset}) written to {folder}\n")


def _reproduce_table1(preset: str, data: str | None, device: str, out: str | None) -> None:
    if preset == "paper" and data is None:
        raise InputError("--data", "PATH is required with --preset paper (a folder with the MNIST "
                         "IDX files, or an .npz with x_train, y_train, x_test, y_test)")
    if data is not None and not Path(data).exists():
        raise InputError("--data", f"{data!r} does not exist")
    from boundcalc.validators.table1 import run_table1

    try:
        folder = run_table1(preset, data=data, device=device, out=out)
    except ValueError as err:
        raise InputError("--data" if data is not None else "--out", str(err)) from None
    sys.stdout.write(f"table 1 ({preset}) written to {folder}\n")


def compare_rnn_command(
    T_values: Annotated[str, typer.Option("--T", help="comma list of sequence lengths",
                                          metavar="T,T,...")] = "1,2,4,8,16,32,64,128,256,512,1024",
    m: Annotated[str, typer.Option("--m", help="width (even)")] = "512",
    n: Annotated[str, typer.Option("--n", help="samples")] = "1000",
    rho: Annotated[str, typer.Option("--rho", help="projection radii")] = "2",
    nu: Annotated[str, typer.Option("--nu", help="transport budgets")] = "1",
    alpha: Annotated[str, typer.Option("--alpha", help="IndRNN recurrent scale alpha")] = "1.5",
    steps: Annotated[str, typer.Option("--steps", help="gradient steps K")] = "4000",
    activation: Annotated[str, typer.Option("--activation", help="tanh, erf, custom")] = "tanh",
    fmt: Annotated[str, typer.Option("--format", "-f", help="table, json, csv, markdown, "
                                     "latex")] = "table",
) -> None:
    """Theorem 1 (Transformer, flat in T) next to Proposition 2 (IndRNN, growing past the
    cutoff sigma1*alpha >= 1), one row per T.

    Examples: boundcalc compare-rnn --T 1,4,16,64,256,1024 --alpha 1.5 ; boundcalc compare-rnn
    --alpha 0.5 --format csv
    """
    import pandas as pd

    from boundcalc.compare_rnn import compare_rnn
    from boundcalc.formats import check_format, render_frame
    from boundcalc.params import parse_integer

    fmt = check_format(fmt)
    Ts = [parse_integer("--T", t) for t in T_values.split(",") if t.strip()]
    if not Ts or min(Ts) < 1:
        raise InputError("--T", f"must be a comma list of integers >= 1, got {T_values!r}")
    rows = compare_rnn(Ts, m=m, n=n, rho=rho, nu=nu, alpha=alpha, steps=steps,
                       activation=activation)
    sys.stdout.write(render_frame(pd.DataFrame(rows), fmt, max_rows=None,
                                  title="Transformer (Theorem 1) vs IndRNN (Proposition 2)"))


def register(app: typer.Typer) -> None:
    """Add ``validate``, ``reproduce`` and ``compare-rnn`` to the calculator's app."""
    app.command("validate", help=_VALIDATE_HELP, epilog=_VALIDATE_EXAMPLES,
                short_help="Check the bounds against the real model (torch).")(validate)
    app.command("reproduce", short_help="Reproduce the paper's experiments (torch).")(reproduce)
    app.command("compare-rnn", short_help="Transformer vs IndRNN bound as T grows.")(
        compare_rnn_command)


__all__ = ["compare_rnn_command", "register", "reproduce", "validate"]
