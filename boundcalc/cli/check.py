"""``boundcalc check RUN.npz``: a run trained anywhere against the theory.

The report is :mod:`boundcalc.checking.runcheck`'s. Kept apart from the calculator commands: the
command imports :mod:`boundcalc.checking.runcheck` (and through it torch) only when it runs, so
``boundcalc`` without the validators never imports torch.
"""

from __future__ import annotations

from typing import Annotated

import typer

from boundcalc.cli.app import emit, examples, note, output_file
from boundcalc.cli.options import DEVICES, choice_option, format_option
from boundcalc.inputs.flags import check_rows
from boundcalc.inputs.params import PARAMS
from boundcalc.inputs.surfaces import CHECK, CHECK_FORMATS
from boundcalc.validation.settings import require_torch

__all__ = ["CHECK_HELP", "check", "register"]


CHECK_HELP = """Check a run trained anywhere (plain GD, ProjGD, Adam, your own code and data)
against the theory. RUN is a run file (.npz: c0 (m,), U0 (m,d), W0 (m,d,d) the initial
parameters; c (k,m), U (k,m,d), W (k,m,d,d) the recorded iterates and steps (k,) their step
numbers; X (n,T,d), optional q (n,d) (default: the last token), y (n,); scalars eta, K and
activation (tanh default); boundcalc.save_run writes one). Reported: the regime (m even,
symmetric init f(X; theta(0)) = 0, token and query norms <= 1, the head-average and max events,
the labels against Y, the smallest rho holding every recorded iterate and whether --rho holds
them, Theorem 1's conditions, whether consecutive recorded steps are gradient steps of size eta);
then, along the trajectory and on both proof routes, a priori and a posteriori (measured U(0) and
input geometry): max ||grad f|| vs L, max |f - f_lin| vs eps_lin, max |f| vs F, R(theta_0) vs Y^2
and min_k R(theta_k) vs min_iterate (with its guarantee against min(B^2, R(theta_0))), each with
its ratio and a verdict: holds, violated, or not applicable (the failing regime condition named).
Without --rho the smallest rho holding the iterates is used. The file is memory-mapped (save it
uncompressed) and read in chunks of iterates; progress with an ETA on stderr for long files
(--quiet: none). Exit 1 only for a violation inside the regime; 2 for a bad file or flag (one
line naming the array or flag)."""

#: Flags of the calculator's parameter table that ``check`` takes (the rest come from the file).
_FLAGS = ("rho", "nu", "delta", "misspecification")


def check(
    run: Annotated[str, typer.Argument(metavar="RUN", help="the run file (.npz)",
                                       show_default=False)],
    rho: Annotated[str | None, typer.Option("--rho", metavar=PARAMS["rho"].metavar,
                                            help="radii of Omega_rho (one value or three); "
                                                 "default: the smallest holding the run")
                   ] = None,
    nu: Annotated[str | None, typer.Option("--nu", metavar=PARAMS["nu"].metavar,
                                           help=PARAMS["nu"].help)] = None,
    delta: Annotated[str | None, typer.Option("--delta", metavar=PARAMS["delta"].metavar,
                                              help=PARAMS["delta"].help)] = None,
    misspecification: Annotated[str | None, typer.Option(
        "--misspecification", metavar=PARAMS["misspecification"].metavar,
        help="eps_mis > 0: min_iterate of Remark 9 (misspecified labels) instead of Theorem 1")
    ] = None,
    device: Annotated[str, choice_option("--device", choices=DEVICES,
                                         help="where to compute (float64)")] = "cpu",
    fmt: Annotated[str, format_option(CHECK_FORMATS)] = "table",
    output: Annotated[str | None, typer.Option("--output", "-o", callback=output_file,
                                               metavar="FILE",
                                               help="write to FILE (atomically) instead of "
                                                    "stdout")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="no progress lines")] = False,
) -> None:
    """Check a run file against the theory; ``--help`` shows :data:`CHECK_HELP`."""
    flags = {k: v for k, v in (("rho", rho), ("nu", nu), ("delta", delta),
                               ("misspecification", misspecification)) if v is not None}
    # every flag by its row, before the file is opened or torch imported
    checked = check_rows(CHECK, {**flags, "device": device, "fmt": fmt})
    key, dev = checked["fmt"], checked["device"]
    require_torch("RUN", "boundcalc check measures the run")
    from boundcalc.checking.runcheck import check_run
    from boundcalc.execution.executors import Eta

    clock = Eta()

    def progress(done: int, total: int, detail: str) -> None:
        clock.cell()
        if not quiet and total > 1:
            eta = clock.text(total - done).replace("cell(s)", "block(s)")
            note(f"[check {done}/{total}] {detail}; {eta}")

    result = check_run(run, device=dev, progress=progress,
                       warn=lambda line: note(f"warning: {line}"), **flags)
    emit(result.text(key), output)
    if result.violations:
        names = ", ".join(f"{x['route']} {x['kind']} {x['name']}" for x in result.violations)
        note(f"VIOLATION inside the regime: {names}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Add ``check`` to the calculator's app."""
    app.command("check", help=CHECK_HELP, short_help="Check a run trained anywhere against "
                                                     "the theory.",
                epilog=examples("boundcalc check run.npz",
                                "boundcalc check run.npz --rho 3 --nu 3 --format json",
                                "boundcalc check big_run.npz --device cuda --output report.txt")
                )(check)
