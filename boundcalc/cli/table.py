"""The ``boundcalc table`` command: tables (and figures) from stored experiment runs.

The logic is :mod:`boundcalc.runs.tables`; this module parses the flags, prints or writes the text
and reports missing cells. It imports neither torch nor the experiments; redrawing figures
(``--figures``) uses the experiments' plotting functions, which need matplotlib only (the ``plot``
extra).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from boundcalc.cli.app import output_file, write_output
from boundcalc.cli.options import choice_option, format_option
from boundcalc.errors import OutputError
from boundcalc.experiments.experiment_registry import EXPERIMENTS, experiment, listed, names
from boundcalc.inputs.environment import require_module
from boundcalc.inputs.output_paths import check_output_folder
from boundcalc.inputs.table_flags import TABLE_FORMATS, check_table_flags


def table_help() -> str:
    """The ``--help`` text of ``boundcalc table``, read from the experiment registry at the time
    it is shown, so an experiment registered at run time is listed with the built-in ones.

    Example:
        >>> "tsweep: per (m, T)" in table_help()
        True
    """
    rows = list(EXPERIMENTS.values())
    kinds = " ".join(f"{row.name}: {row.table_description or 'its summary rows.'}"
                     for row in rows)
    drawn = [row.name for row in rows if row.figure is not None]
    undrawn = [row.name for row in rows if row.figure is None]
    figures = ", ".join(f"{name}.png/pdf" for name in drawn)
    if undrawn:
        figures += f"; {listed(tuple(undrawn))} {'has' if len(undrawn) == 1 else 'have'} none"
    latex_files = " / ".join(f"{row.name}_table.tex" for row in rows)
    paragraphs = (
        'Tables from finished (or unfinished) experiment runs, without recomputing them.',
        f'Reads each RUN_DIR written by `boundcalc reproduce {"|".join(names())}` (the kind is '
        'the `experiment` of its config.json), re-reads the stored cells (never trains, never '
        'imports torch) and prints, per kind:',
        kinds,
        'Several RUN_DIRs: one combined table per kind (kinds in the order given); a `run` '
        "column (the RUN_DIR as given) says which run a row comes from. The numbers are those of "
        "the run's summary.csv / slopes.csv / table1.csv. A run with missing cells is tabled "
        'from the cells it has, and one line on stderr lists the missing ones; a damaged cell '
        'file (empty, truncated, {} or lacking a field) is left out too and named in a warning '
        'on stderr.',
        '--format csv: one plain-CSV block per table (blocks separated by an empty line), every '
        "number exact, mean and `_ci95` in separate columns, the run's own column names plus "
        '`run`. markdown and latex: the statistic the figures draw, `gmean [low, high]` '
        '(geometric mean over seeds, 95% t-interval on the log values; --statistic arithmetic: '
        '`mean ± CI`, the arithmetic mean and its symmetric 95% t-interval), the interval to '
        '--digits minus one significant digits (at least two) and the mean rounded to its last '
        'digit; one power of ten per column, as (…)×10^k (never e+); a few detail columns are '
        f'CSV only. latex is the booktabs tabular that reproduce writes as {latex_files}: '
        'grouped heads, symbols as column heads, figure1 with its fitted slopes as a last row, '
        'figure2 with both models side by side per L.',
        f"--figures redraws the run's figure ({figures}) from the stored cells into the run "
        'directory, or into --figures-dir DIR (one sub-folder per run when several are given), '
        '--figure-width single (3.25 in) or double (6.75 in) wide; this needs matplotlib, not '
        'torch (the plot extra).',
    )
    return literal_brackets("\n\n".join(paragraphs))


def literal_brackets(text: str) -> str:
    """``text`` with ``[`` escaped where typer reads help as rich markup (else rich takes
    ``[low, high]`` for a style and drops it)."""
    import typer.core

    if getattr(typer.core, "DEFAULT_MARKUP_MODE", None) != "rich":
        return text
    return text.replace("[", "\\[")


class _TableCommand(TyperCommand):
    """``table``'s Click command: its help is :func:`table_help` when shown."""

    def format_help(self, ctx: Any, formatter: Any) -> None:
        self.help = table_help()
        super().format_help(ctx, formatter)


TABLE_EXAMPLES = """Examples:

boundcalc table runs/figure1-quick

boundcalc table runs/figure1-quick --format latex --output figure1.tex

boundcalc table runs/figure2-paper runs/figure2-quick --format csv

boundcalc table runs/figure1-paper --figures --figures-dir paper/figures"""


#: The values of ``--format``: the input layer's row.
FORMATS: tuple[str, ...] = TABLE_FORMATS


def table(
    run_dirs: Annotated[list[str], typer.Argument(help="run directories of boundcalc reproduce",
                                                  metavar="RUN_DIR")],
    fmt: Annotated[str, format_option(FORMATS, panel=None)] = "markdown",
    output: Annotated[str | None, typer.Option("--output", "-o", callback=output_file,
                                               help="write to FILE "
                                               "(atomically) instead of stdout",
                                               metavar="FILE")] = None,
    digits: Annotated[int, typer.Option("--digits", help="significant digits of markdown / "
                                        "latex numbers (csv is exact)", metavar="N")] = 3,
    figures: Annotated[bool, typer.Option("--figures", help="also redraw each run's figure "
                                          "(png, pdf) from the stored cells")] = False,
    figures_dir: Annotated[str | None, typer.Option("--figures-dir", help="where --figures "
                                                    "writes (implies --figures; default: the "
                                                    "run directory)", metavar="DIR")] = None,
    statistic: Annotated[str, choice_option(
        "--statistic", choices=("geometric", "arithmetic"),
        help="markdown / latex: the geometric mean over seeds and its 95% CI on the log values, "
        "as the figures draw it (default), or the arithmetic mean ± its 95% t-CI")
    ] = "geometric",
    figure_width: Annotated[str | None, choice_option(
        "--figure-width", choices=("single", "double"), show_default=False,
        help="width of the redrawn figures (implies --figures): single (3.25 in) or double "
        "(6.75 in); default figure1 and tsweep double, figure2 single")] = None,
) -> None:
    """Tables (and figures) from stored experiment runs, without recomputing them.

    ``--help`` shows :func:`table_help`.
    """
    from boundcalc.runs import tables

    checked = check_table_flags(fmt=fmt, digits=digits, statistic=statistic,
                                figure_width=figure_width, figures_dir=figures_dir)
    key, statistic = checked["fmt"], checked["statistic"]
    figure_width = checked.get("figure_width")
    runs = [tables.load_run(arg) for arg in run_dirs]
    for run in runs:
        for cell, problem in run.damaged.items():
            sys.stderr.write(f"warning: {run.label}: damaged cell {run.path / 'cells' / cell}"
                             f".json ({problem}); tabled without it (reproduce with the same "
                             f"--out recomputes it)\n")
        absent = [k for k in run.missing if k not in run.damaged]
        if absent:
            shown = ", ".join(absent[:12])
            more = f", … ({len(absent) - 12} more)" if len(absent) > 12 else ""
            sys.stderr.write(f"note: {run.label}: {len(absent)} of {run.expected} "
                             f"{run.kind} cells missing: {shown}{more}; tabling the "
                             f"{len(run.records)} finished\n")
    text = tables.render_tables(tables.build_tables(runs), key, digits=digits,
                                statistic=statistic)
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        write_output(output, text)
        sys.stderr.write(f"wrote {output}\n")
    if figures or figures_dir is not None or figure_width is not None:
        _figures(runs, figures_dir, figure_width)


def _figures(runs: list, figures_dir: str | None, width: str | None = None) -> None:
    require_module("--figures", "matplotlib", "draws", "pip install 'boundcalc[plot]'",
                   import_it=True)
    from boundcalc.validators.experiments.figures import regenerate_figures

    used: set[Path] = set()
    targets: list[tuple[Any, Path]] = []
    for run in runs:
        if figures_dir is None:
            target = run.path
        elif len(runs) == 1:
            target = Path(figures_dir)
        else:
            target = Path(figures_dir) / (run.path.resolve().name or "run")
            base, i = target, 2
            while target in used:
                target, i = base.with_name(f"{base.name}-{i}"), i + 1
        used.add(target)
        # every target checked before the first figure is drawn: a run directory without
        # permission to write (no --figures-dir) is refused naming --figures
        check_output_folder("--figures-dir" if figures_dir is not None else "--figures", target)
        targets.append((run, target))
    for run, target in targets:
        try:
            written = regenerate_figures(run, target, width)
        except OSError as exc:  # found while drawing: the disk, the device, a removed folder
            raise OutputError(f"figures in {str(target)!r}", exc.strerror or str(exc)) from None
        if written:
            names = ", ".join(str(p) for p in written)
            sys.stderr.write(f"wrote {names}\n")
        elif experiment(run.kind).figure is None:
            sys.stderr.write(f"note: {run.label}: {run.kind} has no figure\n")
        else:
            sys.stderr.write(f"note: {run.label}: no finished cells, no figure drawn\n")


def register(app: typer.Typer) -> None:
    """Add ``table`` to the calculator's app."""
    app.command("table", cls=_TableCommand, help=table_help(), epilog=TABLE_EXAMPLES,
                short_help="Tables and figures from stored experiment runs.")(table)


__all__ = ["FORMATS", "TABLE_EXAMPLES", "literal_brackets", "register", "table", "table_help"]
