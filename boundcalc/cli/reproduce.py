"""``boundcalc reproduce``: the paper's experiments into resumable run directories.

Imports torch and the experiments (:mod:`boundcalc.validators.experiments`) only when the command
runs, after its flags are checked and the run directory's lock is taken
(:func:`boundcalc.executors.owned`), so that a second driver on a live ``--out`` is refused at once.
``--executor`` picks where the cells are computed (:mod:`boundcalc.cli.executor_options`):
this machine's ``--jobs`` processes, Dask or Slurm (:mod:`boundcalc.validators.experiments.tasks`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from boundcalc.cli.executor_options import (
    CellsPerTask,
    DaskAddress,
    Executor,
    SlurmArrayParallelism,
    SlurmCpusPerTask,
    SlurmGpusPerTask,
    SlurmPartition,
    SlurmSetup,
    SlurmTime,
    executor_settings,
)
from boundcalc.cli.options import DEVICES, choice_option, completer
from boundcalc.cli.validate import _require_matplotlib, _run_directory_errors
from boundcalc.executors import ExecutorSettings, owned
from boundcalc.params import InputError
from boundcalc.validation_settings import check_device, require_torch

__all__ = ["EXPERIMENT_NAMES", "PRESETS", "parse_seeds", "register", "reproduce"]

#: The experiments of ``reproduce`` and its presets (the first is the default).
EXPERIMENT_NAMES: tuple[str, ...] = ("figure1", "figure2", "table1", "tsweep")
PRESETS: tuple[str, ...] = ("quick", "paper")


def reproduce(
    ctx: typer.Context,
    experiment: Annotated[str, typer.Argument(help="figure1, figure2, table1 or tsweep",
                                                 metavar="EXPERIMENT",
                                                 autocompletion=completer(EXPERIMENT_NAMES))],
    preset: Annotated[str, choice_option("--preset", choices=PRESETS,
                                         help="quick or paper")] = "quick",
    seeds: Annotated[str | None, typer.Option(
        "--seeds", help="a count k (the preset's first k seeds: figure1 1..k, figure2 0..k-1), "
        "a range A-B or a list A,B,C of seeds (default: the preset's)",
        metavar="S")] = None,
    device: Annotated[str, choice_option("--device", choices=DEVICES,
                                         help="auto, cpu or cuda")] = "auto",
    out: Annotated[str | None, typer.Option("--out", help="run directory", metavar="DIR")] = None,
    jobs: Annotated[int, typer.Option("--jobs", help="parallel worker processes")] = 1,
    data: Annotated[str | None, typer.Option("--data", help="table1: MNIST IDX folder or .npz "
                                             "(required by --preset paper)",
                                             metavar="PATH")] = None,
    lin_align: Annotated[str | None, choice_option(
        "--lin-align", choices=("feature", "output"), show_default=False,
        help="figure1 panel (a): boundary point aligned with each head's 'feature' gradient "
        "(default) or the 'output' gradient of f (the other is recorded too)")] = None,
    dtype: Annotated[str | None, choice_option(
        "--dtype", choices=("float64", "float32"), show_default=False,
        help="figure1, figure2, tsweep: float64 or float32 (default: the preset's; figure1 and "
        "tsweep float64, figure2 float32)")] = None,
    figure_width: Annotated[str | None, choice_option(
        "--figure-width", choices=("single", "double"), show_default=False,
        help="figure1, figure2: the figure's width, single (3.25 in, one column) or double "
        "(6.75 in); default figure1 double, figure2 single; not a parameter of the run (a "
        "resumed run may redraw at another width)")] = None,
    executor: Executor = "processes",
    dask_address: DaskAddress = None,
    cells_per_task: CellsPerTask = 1,
    slurm_partition: SlurmPartition = None,
    slurm_time: SlurmTime = None,
    slurm_gpus_per_task: SlurmGpusPerTask = None,
    slurm_cpus_per_task: SlurmCpusPerTask = None,
    slurm_array_parallelism: SlurmArrayParallelism = None,
    slurm_setup: SlurmSetup = None,
) -> None:
    """Reproduce an experiment of the paper (Section 6.1: figure1, Section 6.2: figure2; paper
    003's Table 1: table1; Theorem 1's regime against the sequence length T: tsweep) into a
    resumable run directory.

    Examples: boundcalc reproduce figure1 --preset quick ; boundcalc reproduce figure2 --preset
    paper --device cuda --out runs/figure2-paper ; boundcalc reproduce table1 --preset paper
    --data ~/mnist ; boundcalc reproduce tsweep --preset quick
    """
    if experiment not in EXPERIMENT_NAMES:
        raise InputError("EXPERIMENT", f"must be figure1, figure2, table1 or tsweep, got "
                                       f"{experiment!r}")
    if preset not in PRESETS:
        raise InputError("--preset", f"must be quick or paper, got {preset!r}")
    if jobs < 1:
        raise InputError("--jobs", f"must be >= 1, got {jobs}")
    engine = executor_settings(executor, jobs, dask_address, cells_per_task, slurm_partition,
                               slurm_time, slurm_gpus_per_task, slurm_cpus_per_task,
                               slurm_array_parallelism, slurm_setup)
    from boundcalc.validation import resolve_device

    seed_count = None
    if seeds is not None:
        if experiment == "table1":
            raise InputError("--seeds", "is for figure1, figure2 and tsweep, not table1 (one "
                             "init seed per cell)")
        seed_count = parse_seeds(seeds)
    extra = {}
    if lin_align is not None:
        if experiment not in ("figure1", "tsweep"):
            raise InputError("--lin-align", f"is for figure1 and tsweep only, not {experiment}")
        if lin_align not in ("feature", "output"):
            raise InputError("--lin-align", f"must be feature or output, got {lin_align!r}")
        extra["lin_align"] = lin_align
    if dtype is not None:
        if experiment == "table1":
            raise InputError("--dtype", "is for figure1, figure2 and tsweep, not table1")
        if dtype not in ("float32", "float64"):
            raise InputError("--dtype", f"must be float32 or float64, got {dtype!r}")
        extra["dtype"] = dtype
    if figure_width is not None:
        if experiment not in ("figure1", "figure2"):
            raise InputError("--figure-width", f"is for figure1 and figure2, not {experiment}")
        if figure_width not in ("single", "double"):
            raise InputError("--figure-width", f"must be single or double, got "
                                               f"{figure_width!r}")
        extra["figure_width"] = figure_width
    check_device(device)
    require_torch("EXPERIMENT", f"{experiment} trains the model")
    # one driver per run directory: its lock is taken before torch is imported, so a second
    # driver on a live --out is refused at once; released when the command ends
    folder = Path(out) if out is not None else Path("runs") / f"{experiment}-{preset}"
    ctx.with_resource(owned(folder))
    if engine.engine:
        from boundcalc.validators.experiments.tasks import EXPERIMENTS

        if experiment not in EXPERIMENTS:
            raise InputError("--executor", f"{experiment} runs on --executor processes only, "
                                           f"not {executor}")
    if experiment == "table1":
        _reproduce_table1(preset, data, _device(device, engine), str(folder), engine)
        return
    if data is not None:
        raise InputError("--data", f"is for table1 only, not {experiment}")
    _require_matplotlib("EXPERIMENT", f"{experiment} draws its figure")
    if engine.engine:
        from boundcalc.validators.experiments.tasks import run_on_executor

        with _run_directory_errors():
            drawn = {k: extra.pop(k) for k in ("figure_width",) if k in extra}
            folder = run_on_executor(experiment, preset, engine, config_args=(seed_count,),
                                     out=folder, device=_device(device, engine),
                                     output_options=drawn, **extra)
    else:
        if experiment == "figure1":
            from boundcalc.validators.experiments.figure1 import run_figure1 as run_experiment
        elif experiment == "tsweep":
            from boundcalc.validators.experiments.tsweep import run_tsweep as run_experiment
        else:
            from boundcalc.validators.experiments.figure2 import run_figure2 as run_experiment
        folder = run_experiment(preset, seeds=seed_count, device=resolve_device(device),
                                out=folder, jobs=jobs, **extra)
    what = "the T sweep" if experiment == "tsweep" else f"figure {experiment[-1]}"
    sys.stdout.write(f"{what} ({preset}) written to {folder}\n")


def _device(device: str, engine: ExecutorSettings) -> str:
    """Where the cells run: checked on this machine, except ``cuda`` with dask or slurm (the
    cells run on the workers, which check it; a login node needs no GPU)."""
    from boundcalc.validation import resolve_device

    choice = device.strip().lower()
    if engine.engine and choice.startswith("cuda"):
        return choice
    return resolve_device(device)


def parse_seeds(text: str) -> int | list[int]:
    """``--seeds`` of ``reproduce``: a count ``k``, an inclusive range ``A-B`` or a list
    ``A,B,C`` (distinct integers >= 0).

    Example:
        >>> parse_seeds("10"), parse_seeds("6-8"), parse_seeds("1,4")
        (10, [6, 7, 8], [1, 4])
    """
    from boundcalc.params import parse_integer

    raw = text.strip()
    shapes = "must be a count >= 1, a range A-B or a list A,B,C of seeds >= 0"

    def integer(part: str) -> int:
        try:
            return parse_integer("--seeds", part)
        except InputError:  # name the whole value, not the part ('' of '-3')
            raise InputError("--seeds", f"{shapes}, got {text!r}") from None

    if "," not in raw and "-" not in raw:
        count = integer(raw)
        if count < 1:
            raise InputError("--seeds", f"{shapes}, got {text!r}")
        return count
    if "," in raw:
        values = [integer(part) for part in raw.split(",") if part.strip()]
    else:
        lo_text, _, hi_text = raw.partition("-")
        lo, hi = integer(lo_text), integer(hi_text)
        if hi < lo:
            raise InputError("--seeds", f"range A-B needs A <= B, got {text!r}")
        values = list(range(lo, hi + 1))
    if not values or min(values) < 0 or len(set(values)) != len(values):
        raise InputError("--seeds", f"must list distinct integers >= 0, got {text!r}")
    return values


def _reproduce_table1(preset: str, data: str | None, device: str, out: str | None,
                      engine: ExecutorSettings) -> None:
    if preset == "paper" and data is None:
        raise InputError("--data", "PATH is required with --preset paper (a folder with the MNIST "
                         "IDX files, or an .npz with x_train, y_train, x_test, y_test)")
    if data is not None and not Path(data).exists():
        raise InputError("--data", f"{data!r} does not exist")
    from boundcalc.validators.experiments.table1 import run_table1

    try:
        if engine.engine:
            from boundcalc.validators.experiments.tasks import run_on_executor

            with _run_directory_errors():
                folder = run_on_executor("table1", preset, engine, config_args=(data,),
                                         out=out, device=device)
        else:
            folder = run_table1(preset, data=data, device=device, out=out)
    except InputError:  # already names its flag (a damaged run directory: --out)
        raise
    except ValueError as err:
        raise InputError("--data" if data is not None else "--out", str(err)) from None
    sys.stdout.write(f"table 1 ({preset}) written to {folder}\n")


def register(app: typer.Typer) -> None:
    """Add ``reproduce`` to the calculator's app."""
    app.command("reproduce", short_help="Reproduce the paper's experiments (torch).")(reproduce)
