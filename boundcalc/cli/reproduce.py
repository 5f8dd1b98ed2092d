"""``boundcalc reproduce``: the paper's experiments into resumable run directories.

Imports torch and the experiments (:mod:`boundcalc.validators.experiments`) only when the command
runs, after its flags and every override of ``--set`` / ``--config`` are checked against the
experiment's field rows (:mod:`boundcalc.inputs.experiment_fields`, torch-free), the content of
``--data`` against the config (:mod:`boundcalc.inputs.data_files`, the registry row's
``data_check``), and the run directory's lock is taken
(:func:`boundcalc.execution.executors.owned`): a bad key, value or data file exits 2
before anything is written, and a second driver on a live ``--out`` is refused at once. Settings
that make a statement not applicable (ρ < ν, δ ≥ ½ for Theorem 1) run, with a note.
``--executor`` picks where the cells are computed (:mod:`boundcalc.cli.executor_options`):
this machine's ``--jobs`` processes, Dask or Slurm (:mod:`boundcalc.validators.experiments.tasks`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from boundcalc.cli.app import require_matplotlib, run_directory_errors
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
from boundcalc.cli.options import DEVICES, choice_option, completer
from boundcalc.cli.table import literal_brackets as _literal_brackets
from boundcalc.execution.executors import ExecutorSettings, owned
from boundcalc.experiments.experiment_registry import Experiment, listed, load, names, with_option
from boundcalc.experiments.experiment_registry import experiment as registry_row
from boundcalc.inputs.experiment_fields import check_out
from boundcalc.inputs.overrides import parse_assignments, parse_seeds, read_config_file
from boundcalc.inputs.reproduce_options import (
    check_choice,
    check_data_path,
    check_engine,
    check_given_once,
    check_jobs,
    check_taken,
    require_data,
)
from boundcalc.validation.settings import check_device, require_torch

__all__ = ["PRESETS", "parse_seeds", "register", "reproduce", "reproduce_help"]

#: The presets every experiment of the registry has (the first is the default); an experiment
#: may have others (its row's ``presets``).
PRESETS: tuple[str, ...] = ("quick", "paper")


def _complete_experiment(incomplete: str) -> list[str]:
    return completer(names())(incomplete)


def reproduce(
    ctx: typer.Context,
    experiment: Annotated[str, typer.Argument(help="one of the registered experiments",
                                                 metavar="EXPERIMENT",
                                                 autocompletion=_complete_experiment)],
    preset: Annotated[str, choice_option("--preset", choices=PRESETS,
                                         help="quick or paper: the settings --set and --config "
                                         "start from")] = "quick",
    set_values: Annotated[list[str] | None, typer.Option(
        "--set", metavar="KEY=VALUE",
        help="set one field of the experiment's config (repeatable), e.g. --set widths=8,16,32 "
        "--set steps=200 --set rho=2 (one value or three); lists are comma lists; seeds=K is "
        "a count (the experiment's first K seeds, as --seeds), seeds=A-B or seeds=A,B the seeds "
        "themselves. The keys: figure1 and tsweep: widths, seeds, n, d, T (tsweep: Ts), "
        "teacher_width, anchors, nu, rho, steps, step_constant, val_fraction, activation, "
        "lin_align, delta, dtype; figure2: lags, seeds, n, m, alpha, steps, lr, seed_batch, "
        "…; table1: dms, Ns, steps, lr, patch, … (an unknown key lists them all)")] = None,
    config_file: Annotated[str | None, typer.Option(
        "--config", metavar="FILE.toml",
        help="the same keys as --set, as top-level keys of a TOML file (widths = [8, 16, 32], "
        "seeds = 2); --set and --seeds, --dtype, --lin-align override the file's (one of these "
        "flags and --set of its key together is an error)")] = None,
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
        help="figure1, figure2, tsweep: the figure's width, single (3.25 in, one column) or "
        "double (6.75 in); default figure1 and tsweep double, figure2 single; not a parameter "
        "of the run (a resumed run may redraw at another width)")] = None,
    executor: Executor = "processes",
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
    """Reproduce an experiment into a resumable run directory (``--help`` shows
    :func:`reproduce_help`, the registry's experiments)."""
    row = registry_row(experiment)
    out = check_out(out)
    check_choice("--preset", preset, row.presets)
    check_jobs("--jobs", jobs)
    engine = executor_settings(executor, jobs, dask_address, cells_per_task, slurm_partition,
                               slurm_time, slurm_gpus_per_task, slurm_cpus_per_task,
                               slurm_array_parallelism, slurm_setup, dask_dashboard)
    values, origin = _override_values(set_values, config_file)
    flags: dict[str, tuple[str, object]] = {}
    if seeds is not None:
        _check_option(row, "seeds", "--seeds", " (one init seed per cell)")
        flags["seeds"] = ("--seeds", parse_seeds(seeds))
    if lin_align is not None:
        _check_option(row, "lin_align", "--lin-align", only=True)
        check_choice("--lin-align", lin_align, ("feature", "output"))
        flags["lin_align"] = ("--lin-align", lin_align)
    if dtype is not None:
        _check_option(row, "dtype", "--dtype")
        check_choice("--dtype", dtype, ("float32", "float64"))
        flags["dtype"] = ("--dtype", dtype)
    for key, (flag, value) in flags.items():
        check_given_once(flag, key, origin.get(key))
        values[key], origin[key] = value, flag
    if figure_width is not None:
        _check_option(row, "figure_width", "--figure-width")
        check_choice("--figure-width", figure_width, ("single", "double"))
    if "data" in row.options:
        _check_data(row, preset, data)
    elif data is not None:
        _check_option(row, "data", "--data", only=True)
    check_device(device)
    inputs = load(row.inputs) if row.inputs is not None else None
    if inputs is not None:  # every override checked here, torch-free
        seed_choice, fields = inputs.check(preset, values, origin, data,
                                                 row.refused)
        # the content of --data against the config (table1: enough images of its two digits
        # for the largest N), torch-free, before the run directory
        row.check_data("--data", data, preset, fields)
    if row.needs_torch:
        require_torch("EXPERIMENT", f"{experiment} trains the model")
    if inputs is None and (set_values or config_file is not None):
        # an experiment without field rows: checked by its make_config (imports torch first)
        from boundcalc.validators.experiments.configure import resolve_overrides

        seed_choice, fields = resolve_overrides(experiment, preset, values, origin, data)
    elif inputs is None:  # the flags alone, checked above
        seed_choice = values.pop("seeds", None)
        fields = values
    # one driver per run directory: its lock is taken before torch is imported (unless an
    # experiment without field rows needed it for its overrides), so a second driver on a live
    # --out is refused at once; released when the command ends
    folder = Path(out) if out is not None else Path("runs") / f"{experiment}-{preset}"
    ctx.with_resource(owned(folder))
    if row.figure is not None:  # after the lock (importing matplotlib takes a second); a
        # refusal here leaves no folder (the lock removes the folders it made)
        require_matplotlib("EXPERIMENT", f"{experiment} draws its figure")
    check_engine(experiment, executor, bool(engine.engine), row.task is not None)
    for line in inputs.notes(preset, fields) if inputs is not None else []:
        sys.stderr.write(f"note: {line}; the run goes on, and its summary, tables and figure "
                         f"say so\n")
    from boundcalc.validators.experiments.configure import run_named

    with run_directory_errors():
        folder = run_named(experiment, preset, seeds=seed_choice, fields=fields,
                           device=_device(device, engine), out=str(folder), jobs=jobs, data=data,
                           figure_width=figure_width, engine=engine)
    sys.stdout.write(f"{row.label} ({preset}) written to {folder}\n")


def _check_option(row: Experiment, option: str, flag: str, why: str = "",
                  only: bool = False) -> None:
    """InputError naming ``flag`` when the experiment of ``row`` does not take ``option``
    (:func:`boundcalc.experiments.experiment_registry.with_option`)."""
    takes = with_option(option)
    check_taken(flag, row.name, takes, listed(takes), why, only)


def _override_values(set_values: list[str] | None, config_file: str | None
                     ) -> tuple[dict[str, object], dict[str, str]]:
    """The keys of ``--config FILE`` and then of ``--set`` (which override them), and which
    option gave each."""
    values: dict[str, object] = {}
    origin: dict[str, str] = {}
    if config_file is not None:
        values.update(read_config_file(config_file))
        origin.update(dict.fromkeys(values, "--config"))
    assigned = parse_assignments(set_values or [])
    values.update(assigned)
    origin.update(dict.fromkeys(assigned, "--set"))
    return values, origin


def _check_data(row: Experiment, preset: str, data: str | None) -> None:
    """``--data`` given where the preset needs it, and a path that exists (its content is
    checked once the config is known: :meth:`~boundcalc.experiments.experiment_registry.
    Experiment.check_data`)."""
    require_data("--data", preset, data, row.data_required,
                 f"PATH is required with --preset {preset} (a folder with the MNIST IDX files, "
                 "or an .npz with x_train, y_train, x_test, y_test)")
    check_data_path("--data", data)


def _device(device: str, engine: ExecutorSettings) -> str:
    """Where the cells run: checked on this machine, except ``cuda`` with dask or slurm (the
    cells run on the workers, which check it; a login node needs no GPU)."""
    from boundcalc.validation.settings import resolve_device

    choice = device.strip().lower()
    if engine.engine and choice.startswith("cuda"):
        return choice
    return resolve_device(device)


def reproduce_help() -> str:
    """The ``--help`` text of ``reproduce``, read from the experiment registry when it is shown:
    every registered experiment with its description, an experiment registered at run time too.

    Example:
        >>> print(reproduce_help().splitlines()[2])
        figure1: Section 6.1: linearization error, approximation error and min training loss against the width m (teacher-student, ProjGD)
    """  # noqa: E501
    rows = list(_registry().values())
    listing = "\n".join(f"{row.name}: {row.description or row.label}" for row in rows)
    first = rows[0].name if rows else "EXPERIMENT"
    return (f"Reproduce an experiment into a resumable run directory, at the preset's settings or "
            f"your own (--set, --config). The experiments:\n\n{listing}\n\n"
            f"Examples: boundcalc reproduce {first} --preset quick ; boundcalc reproduce figure2 "
            "--preset paper --device cuda --out runs/figure2-paper ; boundcalc reproduce table1 "
            "--preset paper --data ~/mnist ; boundcalc reproduce figure1 --preset quick --set "
            "widths=8,16,32 --set seeds=2 --set steps=50 --out runs/mine")


def _option_help() -> dict[str, str]:
    """The help of the options that name experiments, from the registry."""
    return {
        "experiment": listed(names()).replace(" and ", " or "),
        "set_values": "set one field of the experiment's config (repeatable), e.g. --set "
        "widths=8,16,32 --set steps=200 --set rho=2 (one value or three); lists are comma lists; "
        "seeds=K is a count (the experiment's first K seeds, as --seeds), seeds=A-B or seeds=A,B "
        f"the seeds themselves. The keys are the fields of the experiment's config "
        f"({listed(names())}; an unknown key lists them all)",
        "seeds": "a count k (the preset's first k seeds), a range A-B or a list A,B,C of seeds "
        f"(default: the preset's); for {listed(with_option('seeds'))}",
        "data": f"{listed(with_option('data'))}: the data set, a folder or file "
        "(required by the presets that need it)",
        "lin_align": f"{listed(with_option('lin_align'))} panel (a): boundary point aligned "
        "with each head's 'feature' gradient (default) or the 'output' gradient of f (the other "
        "is recorded too)",
        "dtype": f"{listed(with_option('dtype'))}: float64 or float32 (default: the preset's)",
        "figure_width": f"{listed(with_option('figure_width'))}: the figure's width, single "
        "(3.25 in, one column) or double (6.75 in); default: the experiment's; not a parameter "
        "of the run (a resumed run may redraw at another width)",
    }


def _registry() -> dict[str, Experiment]:
    from boundcalc.experiments.experiment_registry import EXPERIMENTS

    return EXPERIMENTS


class _ReproduceCommand(TyperCommand):
    """``reproduce``'s Click command: its help and the help of its options that name
    experiments are read from the registry when shown (:func:`reproduce_help`)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.help = _literal_brackets(reproduce_help())
        helps = _option_help()
        for param in self.params:
            if param.name in helps:
                param.help = _literal_brackets(helps[param.name])  # type: ignore[attr-defined]
        super().format_help(ctx, formatter)


def register(app: typer.Typer) -> None:
    """Add ``reproduce`` to the calculator's app."""
    app.command("reproduce", cls=_ReproduceCommand,
                short_help="Reproduce the paper's experiments (torch).")(reproduce)
