"""The ``boundcalc`` Typer application and what every command shares: the flag checks that are
not parameters (``--format``, ``--precision``, ``--route``, ``--target``, ``STATEMENT``), writing
the output (stdout, or ``--output`` atomically) and the status line.

Commands register on :data:`app` from the modules of this package, one per command group.
"""

import contextlib
import shutil
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Annotated, Any

import typer

from boundcalc.errors import OutputError
from boundcalc.files import write_atomic
from boundcalc.inputs.calculator_flags import (
    DEFAULT_PRECISION,
    PRECISION,
    STATEMENT,
    TARGET,
    check_output_format,
)
from boundcalc.inputs.environment import require_module
from boundcalc.inputs.output_paths import OUTPUT
from boundcalc.inputs.params import routed_key
from boundcalc.render.cell_text import FORMATS
from boundcalc.render.result_text import guarantee_line
from boundcalc.version import __version__

__all__ = ["OUTPUT_PANEL", "PARAMS_PANEL", "app", "check_format_flag",
           "check_precision", "check_route", "check_statement", "check_target", "console_width",
           "emit", "examples", "finish", "given_flags", "note", "require_matplotlib",
           "run_directory_errors", "write_output"]

app = typer.Typer(
    name="boundcalc",
    help="Bound calculator for 'Finite-Time Analysis of Gradient Descent for Shallow "
         "Transformers' (Arda, Cayci & Eryilmaz, AISTATS 2026): every constant, term and bound, "
         "evaluated, swept, solved for and explained.",
    epilog="Examples:\n\n"
           "boundcalc theorem1 --m 512 --n 1000 --rho 2\n\n"
           "boundcalc sweep theorem1 --m 8:4096:x2 --n 1e3,1e6 --format csv --output sweep.csv\n\n"
           "boundcalc width --target 0.1 --n 1e6\n\n"
           "boundcalc explain theorem1",
    add_completion=True,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


PARAMS_PANEL = "Parameters"


OUTPUT_PANEL = "Output"


def examples(*lines: str) -> str:
    """Epilog of a command: one runnable example per paragraph."""
    return "Examples:\n\n" + "\n\n".join(lines)


def check_format_flag(fmt: str, allowed: Sequence[str] = FORMATS) -> str:
    """``--format`` by its row (:func:`boundcalc.inputs.calculator_flags.check_output_format`)."""
    return check_output_format(fmt, allowed)


def check_precision(text: str | None) -> tuple[int, int | None]:
    """(mpmath digits, table digits or None for the default display)."""
    if text is None:
        return DEFAULT_PRECISION, None
    digits = PRECISION.check(text)
    return digits, min(digits, 17)


def check_statement(name: str) -> str:
    """``STATEMENT`` by its row (:data:`boundcalc.inputs.calculator_flags.STATEMENT`)."""
    return STATEMENT.check(name)


def check_route(text: str | None, statement: str) -> str:
    """Registry key of ``statement`` on ``--route`` (None: the default, tight); the route is
    refused (exit 2) for a statement without one.

    Example:
        >>> check_route("paper", "prop1"), check_route(None, "lemma2")
        ('prop1_paper', 'lemma2')
    """
    return routed_key(statement, text)


def check_target(text: str) -> float:
    """``--target`` by its row (:data:`boundcalc.inputs.calculator_flags.TARGET`)."""
    return TARGET.check(text)


def given_flags(**values: str | None) -> dict[str, str]:
    """The flags the user actually passed (None means 'use the default')."""
    return {k: v for k, v in values.items() if v is not None}


def console_width(output: str | None) -> int:
    if output is None and sys.stdout.isatty():
        return max(shutil.get_terminal_size((110, 24)).columns, 60)
    return 110


def output_file(value: str | None) -> str | None:
    """The callback of every ``--output FILE`` option: the path checked by its input row
    (:data:`boundcalc.inputs.output_paths.OUTPUT`) while the command line is parsed, before any
    work, so that a path that cannot be written is refused (exit 2) instead of found after the
    computation."""
    return None if value is None else OUTPUT.check(value)


def write_output(path: str, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces) to the ``--output`` file atomically, ending in a newline
    (:func:`boundcalc.files.write_atomic`). The path is checked by its input row when the command
    line is parsed (:func:`output_file`) and again here (an :class:`InputError` naming --output,
    exit 2: never any folder created); what fails while writing (a full disk, a failing device)
    is an :class:`OutputError` naming it (exit 1).

    Example:
        >>> import os, tempfile
        >>> target = os.path.join(tempfile.mkdtemp(), "out.txt")
        >>> write_output(target, "hello")
        >>> open(target).read()
        'hello\\n'
    """
    OUTPUT.check(path)
    try:
        write_atomic(path, text, final_newline=True, make_parents=False)
    except OSError as exc:
        raise OutputError(f"--output {path}", exc.strerror or str(exc)) from None


def emit(text: str | Iterable[str], output: str | None, what: str = "") -> None:
    if output is None:
        last = ""
        for piece in [text] if isinstance(text, str) else text:
            if piece:
                sys.stdout.write(piece)
                last = piece
        if not last.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return
    write_output(output, text)
    sys.stderr.write(f"wrote {output}{what}\n")


def note(text: str) -> None:
    """``text`` as one line on stderr; nothing when stderr is closed or cannot be written (the
    exit code still tells)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        sys.stderr.write(text + "\n")


def finish(data: Mapping[str, Any], fmt: str, output: str | None, strict: bool) -> None:
    """Print the status line on stderr when it is not in the output (not guaranteed or vacuous);
    with ``strict`` exit 1 unless the verdict is ``guaranteed`` (every condition holds where a
    result has no verdict)."""
    status = guarantee_line(data)
    guaranteed = status is None or status.startswith("GUARANTEED")
    if data.get("verdict") is not None:
        guaranteed = data["verdict"] == "guaranteed"
    if not guaranteed and (fmt != "table" or output is not None):
        note(status or "NOT GUARANTEED")
    if strict and not guaranteed:
        raise typer.Exit(1)


@contextlib.contextmanager
def run_directory_errors() -> Iterator[None]:
    """Failed tasks of a dask or slurm executor as one line on stderr and exit 1 (the finished
    cells are stored), for the commands that write a run directory (``validate``,
    ``reproduce``). A run directory that cannot be used is a
    :class:`~boundcalc.runs.directory.RunDirectoryError` raised where it is read (exit 2, naming
    ``--out``); every other error passes through."""
    from boundcalc.execution.engines import TasksFailedError

    try:
        yield
    except TasksFailedError as err:
        sys.stderr.write(f"error: {err}\n")
        raise typer.Exit(1) from None


def require_matplotlib(flag: str, what: str) -> None:
    """Refuse up front (before any cell is computed) when matplotlib cannot be imported: an
    input error naming ``flag`` that says ``what`` needs it and how to install it (the
    figures of ``validate --decompose`` and of ``reproduce``)."""
    require_module(flag, "matplotlib", what, "pip install 'boundcalc[validators]' (or pip "
                                             "install matplotlib)", import_it=True)


def _version_callback(value: bool) -> None:
    if value:
        sys.stdout.write(f"boundcalc {__version__}\n")
        raise typer.Exit(0)


@app.callback()
def _root(version: Annotated[bool, typer.Option("--version", help="print the version and exit",
                                                callback=_version_callback,
                                                is_eager=True)] = False) -> None:
    """Bound calculator for the finite-time theory of gradient descent on shallow Transformers."""
