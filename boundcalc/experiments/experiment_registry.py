"""The experiments of ``boundcalc reproduce``: one :class:`Experiment` row each, one registry.

Every place that treats experiments differently reads its row here, never the experiment's name:
``reproduce`` (which options it takes, its presets, how to run it), ``boundcalc table`` and
:func:`boundcalc.load_run` (which cells a run holds, how they are summarized, tabled and drawn),
the run directories (the fields a sound cell holds) and the executors (the per-task function
that computes cells in any process). Adding an experiment is one module (its config dataclass,
``make_config``, the task function, ``write_outputs``) plus one row, registered with
:func:`register_experiment` (``docs/architecture.md``, "Adding an experiment").

A row holds data and *references*: a callable, or the text ``"package.module:name"`` of one,
imported only when used (:func:`load`), so this module (and every calculator module that reads
the registry) imports neither torch nor matplotlib nor the experiments.

Example:
    >>> row = experiment("figure1")
    >>> row.label, row.cell_keys({"widths": [8, 16], "seeds": [1]})
    ('figure 1', ['m8-seed1', 'm16-seed1'])
    >>> names()
    ('figure1', 'figure2', 'table1', 'tsweep')
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boundcalc.inputs.reproduce_options import check_experiment

__all__ = ["EXPERIMENTS", "FIGURE1_EXTRA", "FIGURE1_METRICS", "FIGURE2_MODELS", "OPTIONS",
           "TABLE1_KEYS", "Experiment", "experiment", "listed", "load", "names",
           "register_experiment", "with_option"]

#: A callable, or the text ``"package.module:name"`` that names one.
Ref = Callable[..., Any] | str

#: The options of ``reproduce`` an experiment may take beyond the common ones (``--preset``,
#: ``--set``, ``--config``, ``--device``, ``--out``, ``--jobs``, ``--executor`` …).
OPTIONS = ("seeds", "data", "lin_align", "dtype")

#: The three panels of figure 1, as each cell stores them.
FIGURE1_METRICS = ("lin_error", "app_error", "min_train_loss")
#: Panel (a) at the other boundary alignment, in the cells of runs that store it.
FIGURE1_EXTRA = ("lin_error_alt",)
#: The models of figure 2.
FIGURE2_MODELS = ("transformer", "indrnn")
#: The fields of a table1 cell, in the order of the run's ``table1.csv``.
TABLE1_KEYS = ("d_m", "N", "lowest_test_loss", "lowest_test_epoch", "paper_lowest_test_loss",
               "paper_epoch", "theorem5_bound", "theorem5_bound_printed",
               "lowest_test_under_bound", "conditions_hold_count", "all_conditions_hold",
               "conditions_holding", "conditions_failing", "alpha", "Phi0")


@dataclass(frozen=True)
class Experiment:
    """One experiment: what ``reproduce``, the run directories, ``boundcalc table``, the
    summaries, the figures and the executors need to know of it.

    Attributes:
        name: the ``reproduce`` argument and the ``experiment`` of ``config.json``.
        label: how the closing line of ``reproduce`` names it (``figure 1``).
        cells: ``params → cell keys`` (file stems under ``cells/``) a run with the parameters of
            its ``config.json`` finishes, in the order they are computed; torch-free.
        cell_pattern: a regular expression matching exactly its cell keys; its named groups are
            the fields a key says the cell holds (digits read as integers).
        cell_fields: the fields every sound cell holds; ``finite_fields`` those that must be
            finite numbers there.
        group_columns: the columns that name a summary row's group (:func:`boundcalc.load_run`).
        summarize: ``StoredRun → summary rows`` (torch-free; the run's ``summary.csv``).
        tables: ``[(run label, summary rows, slope rows)] → [Table]``
            (:func:`boundcalc.runs.tables.tables_from_summaries`).
        slopes: ``(StoredRun, summary rows) → slope rows``; None: none.
        figure: ``(summary, slopes, params, stem, records, width) → [paths]`` drawing the figure
            from stored cells (matplotlib, never torch); None: the experiment has no figure.
        figure_width: the figure's default ``--figure-width``.
        config: its config dataclass (every field a ``--set`` key).
        inputs: its :class:`~boundcalc.inputs.experiment_fields.ExperimentInputs` (torch-free:
            a row per config field, the presets, the rules over several fields), with which
            ``reproduce`` checks every override before any run directory, lock or torch import;
            None: the overrides are checked by ``make_config`` (torch imported first).
        make_config: ``(preset, seeds or data, device=…, **fields) → config``.
        write_outputs: ``(RunDirectory, config, **drawing options) → …``: the run's files from
            its stored cells.
        task: the picklable top-level generator ``(cells, context) → (key, record)…`` that
            computes cells in any process (:mod:`boundcalc.execution.executors`); None: it runs on
            its own ``run`` function alone.
        groups: ``(config, RunDirectory) → [[(key, cell)…]…]``, the missing cells in groups a
            task never splits; None: one group per missing cell, the cell being what its key
            says (:meth:`identity`).
        stored_config: ``config → the parameters config.json records``; None:
            :func:`dataclasses.asdict`.
        describe: ``(key, record) → text`` of a progress line; None: nothing.
        run: the experiment's own runner on this machine's processes
            (``(preset, seeds=…, device=…, out=…, jobs=…, progress=…, figure_width=…,
            **fields) → Path``); None: its ``task`` on the processes engine.
        presets: the presets (the first is the default).
        options: the options of :data:`OPTIONS` it takes; ``data`` also makes ``--data`` an
            input of ``make_config`` in place of the seeds.
        data_required: presets that need ``--data``.
        data_check: ``(flag, path, config) → None``, the torch-free check of the content of
            ``--data`` against the run's config (every field's value; it needs ``inputs``),
            raising :class:`~boundcalc.errors.InputError` naming ``flag``, which ``reproduce``
            calls before any run directory, lock or torch import
            (:mod:`boundcalc.inputs.data_files`); None: only the path's existence is checked
            there.
        refused: ``--set`` keys that are not settings, with why (the message).
        parallel: whether its ``run`` takes ``jobs``.
        verb: how the closing line names the work (``trained``, ``computed``).
        needs_torch: whether computing its cells needs torch (``reproduce`` then refuses to
            start without it, naming the experiment); tables and figures never do.
        tidy: whether its summary rows are one column per (quantity, statistic), to be made
            tidy (:func:`boundcalc.experiment_api.tidy_summary`), or one row per cell already.
        detect_params, detect_files: parameter names and output files that recognise an old run
            whose ``config.json`` does not name the experiment.
        record_fields: its record schema (field → :class:`~boundcalc.runs.records.Field`), which
            every stored cell meets when read (:mod:`boundcalc.runs.records`); None: unchecked.
        description: what it reproduces, one phrase (``reproduce --help`` lists it).
        table_description: what ``boundcalc table`` prints for one of its runs, one or two
            sentences (``table --help`` lists it).
    """

    name: str
    label: str
    cells: Callable[[Mapping[str, Any]], list[str]]
    cell_pattern: str
    cell_fields: tuple[str, ...]
    group_columns: tuple[str, ...]
    summarize: Ref
    tables: Ref
    config: Ref
    make_config: Ref
    write_outputs: Ref
    finite_fields: tuple[str, ...] = ()
    inputs: Ref | None = None
    slopes: Ref | None = None
    figure: Ref | None = None
    figure_width: str | None = None
    task: Ref | None = None
    groups: Ref | None = None
    stored_config: Ref | None = None
    describe: Ref | None = None
    run: Ref | None = None
    presets: tuple[str, ...] = ("quick", "paper")
    options: frozenset[str] = frozenset({"seeds"})
    data_required: tuple[str, ...] = ()
    data_check: Ref | None = None
    refused: Mapping[str, str] = field(default_factory=dict)
    parallel: bool = True
    verb: str = "computed"
    needs_torch: bool = True
    tidy: bool = True
    detect_params: tuple[str, ...] = ()
    detect_files: tuple[str, ...] = ()
    record_fields: Ref | None = None
    description: str = ""
    table_description: str = ""

    def cell_keys(self, params: Mapping[str, Any]) -> list[str]:
        """The cell keys a run with ``params`` finishes (:attr:`cells`).

        Example:
            >>> experiment("table1").cell_keys({"dms": [16], "Ns": [64, 128]})
            ['dm16-N64', 'dm16-N128']
        """
        return list(self.cells(params))

    def check_data(self, flag: str, data: str | None, preset: str,
                   fields: Mapping[str, Any]) -> None:
        """The content of ``data`` checked by :attr:`data_check` against the config of
        ``preset`` with the checked ``fields`` (torch-free, before any work); nothing when
        ``data`` is None or the row has no ``data_check`` or no ``inputs``.

        Example:
            >>> experiment("table1").check_data("--data", "/no/such", "quick", {})
            Traceback (most recent call last):
            ...
            boundcalc.errors.InputError: --data /no/such: no such file or folder
        """
        if data is None or self.data_check is None or self.inputs is None:
            return
        config = {**load(self.inputs).preset(preset), **fields}
        load(self.data_check)(flag, data, config)

    def identity(self, key: str) -> dict[str, Any]:
        """What the cell key ``key`` says the cell holds: its named fields, digits as integers.

        Example:
            >>> experiment("figure2").identity("indrnn-L4-seed0")
            {'model': 'indrnn', 'L': 4, 'seed': 0}
        """
        match = re.match(self.cell_pattern, key)
        if match is None or match.end() != len(key):
            raise ValueError(f"{key!r} is not the name of a {self.name} cell")
        return {k: int(v) if v.isdigit() else v for k, v in match.groupdict().items()}

    def is_cell_key(self, key: str) -> bool:
        """Whether ``key`` is the name of one of its cells.

        Example:
            >>> experiment("figure1").is_cell_key("m8-seed1"), experiment("figure1").is_cell_key(
            ...     "m8-T4-seed1")
            (True, False)
        """
        return re.fullmatch(self.cell_pattern, key) is not None


def load(ref: Ref) -> Any:
    """The object a row's reference names: a callable as it is, ``"package.module:name"``
    imported (only now).

    Example:
        >>> load("boundcalc.experiments.experiment_registry:names")()[0]
        'figure1'
    """
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    target: Any = importlib.import_module(module)
    for part in attribute.split("."):
        target = getattr(target, part)
    return target


def _figure1_cells(params: Mapping[str, Any]) -> list[str]:
    return [f"m{int(m)}-seed{int(s)}" for s in params["seeds"] for m in params["widths"]]


def _figure2_cells(params: Mapping[str, Any]) -> list[str]:
    return [f"{model}-L{int(L)}-seed{int(s)}" for s in params["seeds"]
            for L in params["lags"] for model in FIGURE2_MODELS]


def _table1_cells(params: Mapping[str, Any]) -> list[str]:
    return [f"dm{int(d)}-N{int(N)}" for d in params["dms"] for N in params["Ns"]]


def _tsweep_cells(params: Mapping[str, Any]) -> list[str]:
    # seed, then T, then m: one teacher per (seed, T)
    return [f"m{int(m)}-T{int(T)}-seed{int(s)}" for s in params["seeds"] for T in params["Ts"]
            for m in params["widths"]]


_X = "boundcalc.validators.experiments."
_IN = "boundcalc.inputs.experiment_fields:"
_REC = "boundcalc.runs.records:"
_ETA = ("is not a setting: the step size is step_constant/sqrt(steps) (1.75/sqrt(K)); set "
        "step_constant or steps")

#: The registry: name → row, in the order ``reproduce`` and ``boundcalc table`` list them.
EXPERIMENTS: dict[str, Experiment] = {}


def register_experiment(row: Experiment, *, replace: bool = False) -> Experiment:
    """Add ``row`` to the registry (at run time too: a plug-in or a test adds one without
    editing the package); ``replace`` allows a name already registered. Returns the row.

    Raises:
        ValueError: the name is taken (without ``replace``), or not a plain word.

    Example:
        >>> register_experiment(experiment("table1"))
        Traceback (most recent call last):
        ...
        ValueError: experiment 'table1' is registered already
    """
    if not re.fullmatch(r"[A-Za-z][\w-]*", row.name):
        raise ValueError(f"an experiment's name is a plain word, got {row.name!r}")
    if row.name in EXPERIMENTS and not replace:
        raise ValueError(f"experiment {row.name!r} is registered already")
    unknown = set(row.options) - set(OPTIONS)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)}; the options are {OPTIONS}")
    EXPERIMENTS[row.name] = row
    return row


def names() -> tuple[str, ...]:
    """The registered experiments' names, in registry order."""
    return tuple(EXPERIMENTS)


def experiment(name: str, flag: str = "EXPERIMENT") -> Experiment:
    """The row of ``name``.

    Raises:
        InputError: (``flag``) no experiment of that name is registered
            (:func:`boundcalc.inputs.reproduce_options.check_experiment`).

    Example:
        >>> experiment("tsweep").group_columns
        ('m', 'T')
    """
    return EXPERIMENTS[check_experiment(flag, name, names())]


def with_option(option: str) -> tuple[str, ...]:
    """The experiments that take ``option`` (of :data:`OPTIONS`, or ``figure_width``: those with
    a figure), for messages such as ``--dtype is for figure1, figure2 and tsweep``.

    Example:
        >>> with_option("figure_width")
        ('figure1', 'figure2', 'tsweep')
    """
    if option == "figure_width":
        return tuple(n for n, row in EXPERIMENTS.items() if row.figure is not None)
    return tuple(n for n, row in EXPERIMENTS.items() if option in row.options)


def _listed(items: tuple[str, ...], last: str) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} {last} {items[-1]}"


def listed(items: tuple[str, ...]) -> str:
    """``a, b and c``.

    Example:
        >>> listed(("figure1", "figure2", "tsweep"))
        'figure1, figure2 and tsweep'
    """
    return _listed(items, "and")


register_experiment(Experiment(
    name="figure1", inputs=_IN + "FIGURE1", record_fields=_REC + "FIGURE1_FIELDS",
    label="figure 1", cells=_figure1_cells,
    cell_pattern=r"m(?P<m>\d+)-seed(?P<seed>\d+)",
    cell_fields=("seed", "m", *FIGURE1_METRICS), finite_fields=FIGURE1_METRICS,
    group_columns=("m",),
    summarize="boundcalc.runs.summaries:summarize_figure1",
    slopes="boundcalc.runs.summaries:figure1_run_slopes",
    tables="boundcalc.runs.tables:figure1_tables",
    figure=_X + "plots:draw_figure1", figure_width="double",
    config=_X + "figure1:Figure1Config", make_config=_X + "figure1:make_config",
    write_outputs=_X + "figure1:write_outputs", run=_X + "figure1:run_figure1",
    task=_X + "tasks:figure1_task", groups=_X + "tasks:figure1_groups",
    stored_config=_X + "tasks:figure1_stored_config", describe=_X + "tasks:figure1_describe",
    options=frozenset({"seeds", "lin_align", "dtype"}), refused={"eta": _ETA},
    detect_params=("widths",), detect_files=("figure1_table.tex", "slopes.csv"),
    description="Section 6.1: linearization error, approximation error and min training loss "
    "against the width m (teacher-student, ProjGD)",
    table_description="per width m, the geometric mean over seeds and its 95% CI of the "
    "linearization error, approximation error and min training loss, each next to its bound "
    "(ε_lin, ε_app, Theorem 1), then a second table with the log-log slopes in m (± 95% CI) next "
    "to the bound's slope."))

register_experiment(Experiment(
    name="figure2", inputs=_IN + "FIGURE2", record_fields=_REC + "FIGURE2_FIELDS",
    label="figure 2", cells=_figure2_cells,
    cell_pattern=r"(?P<model>transformer|indrnn)-L(?P<L>\d+)-seed(?P<seed>\d+)",
    cell_fields=("model", "L", "T", "seed", "max_jacobian", "min_val_loss",
                 "max_loss_gradient", "diverged", "memory_floats_per_sample"),
    finite_fields=("max_jacobian", "max_loss_gradient"), group_columns=("model", "L"),
    summarize="boundcalc.runs.summaries:summarize_figure2",
    tables="boundcalc.runs.tables:figure2_tables", figure=_X + "plots:draw_figure2_summary",
    figure_width="single", config=_X + "figure2:Figure2Config", make_config=_X +
    "figure2:make_config", write_outputs=_X + "figure2:write_outputs", run=_X +
    "figure2:run_figure2", task=_X + "tasks:figure2_task", groups=_X + "tasks:figure2_groups",
    describe=_X + "tasks:figure2_describe", options=frozenset({"seeds", "dtype"}),
    verb="trained", detect_params=("lags",), detect_files=("figure2_table.tex",),
    description="Section 6.2: IndRNN against Transformer on AR(L) data, per lag L",
    table_description="per (model, L), the geometric mean and 95% CI of the max Jacobian norm "
    "and min validation loss, mean ± 95% CI of the max loss gradient, and the memory per sample "
    "(no bound is stored)."))

register_experiment(Experiment(
    name="table1", inputs=_IN + "TABLE1", record_fields=_REC + "TABLE1_FIELDS",
    label="table 1", cells=_table1_cells,
    cell_pattern=r"dm(?P<d_m>\d+)-N(?P<N>\d+)", cell_fields=TABLE1_KEYS,
    finite_fields=("alpha", "Phi0"), group_columns=("d_m", "N"),
    summarize="boundcalc.runs.summaries:summarize_table1",
    tables="boundcalc.runs.tables:table1_tables", config=_X + "table1:Table1Config", make_config=_X
    + "table1:make_config", write_outputs=_X + "table1:write_outputs", run=_X + "table1:run_table1",
    task=_X + "tasks:table1_task", groups=_X + "tasks:table1_groups",
    describe=_X + "tasks:table1_describe", options=frozenset({"data"}),
    data_required=("paper",), data_check="boundcalc.inputs.data_files:check_digit_images",
    parallel=False, verb="trained", tidy=False,
    detect_params=("dms", "Ns"), detect_files=("table1.csv",),
    description="paper 003's Table 1: lowest test loss against the Theorem 5 bound per (d_m, N)",
    table_description="per (d_m, N), the lowest test loss and its epoch (one run per cell, so "
    "no CI) next to the Theorem 5 bound and the Lemma 4 conditions that hold."))

register_experiment(Experiment(
    name="tsweep", inputs=_IN + "TSWEEP", record_fields=_REC + "TSWEEP_FIELDS",
    label="the T sweep", cells=_tsweep_cells,
    cell_pattern=r"m(?P<m>\d+)-T(?P<T>\d+)-seed(?P<seed>\d+)",
    cell_fields=("seed", "m", "T", *FIGURE1_METRICS), finite_fields=FIGURE1_METRICS,
    group_columns=("m", "T"),
    summarize="boundcalc.runs.summaries:summarize_tsweep",
    slopes="boundcalc.runs.summaries:tsweep_run_slopes",
    tables="boundcalc.runs.tables:tsweep_tables", figure=_X + "plots:draw_tsweep",
    figure_width="double", config=_X + "tsweep:TSweepConfig", make_config=_X + "tsweep:make_config",
    write_outputs=_X + "tsweep:write_outputs", run=_X + "tsweep:run_tsweep",
    task=_X + "tasks:tsweep_task", groups=_X + "tasks:tsweep_groups",
    stored_config=_X + "tasks:figure1_stored_config", describe=_X + "tasks:figure1_describe",
    options=frozenset({"seeds", "lin_align", "dtype"}), refused={"eta": _ETA},
    detect_params=("widths", "Ts"), detect_files=("tsweep_table.tex",),
    description="Theorem 1's setting against the sequence length T: figure 1's metrics per "
    "(m, T)",
    table_description="per (m, T) as figure1, and the slopes in log T (± 95% CI over seeds)."))
