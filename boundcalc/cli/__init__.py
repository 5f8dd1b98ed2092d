"""The ``boundcalc`` command: evaluate, sweep, solve and explain the paper's bounds.

One module per command group: :mod:`~boundcalc.cli.point` (the statements at one point),
:mod:`~boundcalc.cli.sweep`, :mod:`~boundcalc.cli.solvers` (``width``, ``steps``),
:mod:`~boundcalc.cli.explain`, :mod:`~boundcalc.cli.generalization` (paper 003),
:mod:`~boundcalc.cli.validate` (``validate``, ``compare-rnn``), :mod:`~boundcalc.cli.reproduce`,
:mod:`~boundcalc.cli.table` and :mod:`~boundcalc.cli.check` (a run trained anywhere against the
theory); :mod:`~boundcalc.cli.app` holds the application and what they share,
:mod:`~boundcalc.cli.options` the options, generated from :data:`boundcalc.inputs.params.PARAMS`.

Commands (``boundcalc COMMAND --help`` shows each one's flags and runnable examples):

* ``theorem1``, ``prop1``, ``remark9``, ``lemma2``, ``lemma3``, ``lemma5``, ``lemma6``, ``event``,
  ``prop2``: evaluate one statement at one parameter point (mpmath, ``--precision`` digits) and
  print its inputs (defaults included), constants, terms, bounds, probability and conditions;
* ``sweep STATEMENT``: the same over a grid (lists and ranges of any numeric flag), vectorised;
* ``width`` / ``steps``: the smallest even m (resp. number of steps K) that brings the width terms
  (resp. the optimization term) of Theorem 1 under ``--target``; ``width --nonvacuous``: the
  smallest even m at which Theorem 1's bound is non-vacuous (min_iterate < min(B², Y²));
* ``explain STATEMENT``: the statement, its symbol glossary, every formula and condition.

``--route tight|paper|gradnorm|joint`` (default ``tight``) picks the proof route of Theorem 1,
Proposition 1 and Remark 9 (``theorem1``, ``prop1``, ``remark9``, and ``sweep`` / ``width`` /
``steps`` / ``explain`` on them); every output names its route. Statements with the free bounds
B² (R̂ ≤ B² on Ω_ρ) and Y² (R̂(θ_0) ≤ Y², f(θ(0)) = 0) (those three and ``prop2``) get a verdict:
``guaranteed`` (every condition holds and min_iterate < min(B², Y²)), ``vacuous`` (every condition
holds, min_iterate ≥ min(B², Y²)) or ``not_guaranteed`` (a condition fails).

Exit codes: 0 success; 1 the verdict is not ``guaranteed`` (a condition fails, or the bound is
vacuous) and ``--strict`` was given, or a ``--target`` cannot be met, or no width up to 2^62 makes
the bound non-vacuous, or the output could not be written (a full disk or device, a closed
standard output: one line on stderr naming standard output or ``--output``); 2 bad input (one line
on stderr naming the flag, no traceback); 3 an internal error.

Example:
    >>> from boundcalc.cli import main
    >>> main(["theorem1", "--m", "512", "--n", "1000", "--rho", "2", "--format", "csv",
    ...       "--output", "/dev/null"])
    0
"""

import contextlib
import os
import sys
from collections.abc import Sequence
from typing import Any

import typer

from boundcalc.cli.app import app, note
from boundcalc.errors import OutputError
from boundcalc.inputs.params import InputError

# isort: off
# Importing a command module registers its commands; --help lists them in this order.
from boundcalc.cli import point, sweep, solvers, explain  # noqa: F401,E402
from boundcalc.cli.generalization import generalization  # noqa: E402
from boundcalc.cli.validate import register, register_compare_rnn  # noqa: E402
from boundcalc.cli.reproduce import register as register_reproduce  # noqa: E402
from boundcalc.cli.table import register as register_table  # noqa: E402
from boundcalc.cli.check import register as register_check  # noqa: E402
# isort: on

__all__ = ["app", "main"]


def _register_other_commands() -> None:
    """``generalization`` (paper 003), ``validate``, ``reproduce``, ``compare-rnn``, ``table``
    and ``check``: their modules import torch / the second statement family only when a command
    runs (``table`` never does)."""
    app.command("generalization",
                short_help="Paper 003 (Theorem 5): true-loss generalization bound.")(generalization)
    register(app)
    register_reproduce(app)
    register_compare_rnn(app)
    register_table(app)
    register_check(app)


_register_other_commands()


_COMMAND: dict[tuple[int, int, int], Any] = {}


def _command() -> Any:
    """The Click command of :data:`app`, built once per process and set of registered commands.

    ``app(...)`` builds it anew on every call (Typer inspects every command's signature: about
    half the time of a quick command run in-process, as ``main`` is run by scripts and notebooks
    that evaluate many points); the app has ``pretty_exceptions_enable=False``, so calling the
    built command directly behaves the same."""
    key = (id(app), len(app.registered_commands), len(app.registered_groups))
    if key not in _COMMAND:
        _COMMAND.clear()
        _COMMAND[key] = typer.main.get_command(app)
    return _COMMAND[key]


def _click_exceptions() -> Any:
    try:  # typer >= 0.2x vendors click
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older typer with click installed
        from click import exceptions
    return exceptions


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


class _GuardedStdout:
    """``sys.stdout`` while a command runs: a write or flush that fails (a full disk or device, a
    closed stream, or no stream at all when the process started with standard output closed)
    raises :class:`OutputError` naming standard output, which :func:`main` reports in one line
    (exit 1), instead of an ``OSError`` or ``AttributeError`` that reads as an internal error. A
    broken pipe stays a :class:`BrokenPipeError` (the reader left: exit 1, no message)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def _failed(self, err: Exception) -> OutputError:
        reason = getattr(err, "strerror", None) or "the stream is closed"
        return OutputError("standard output", reason)

    def write(self, text: str) -> int:
        if self.stream is None:
            if not isinstance(text, str):  # a text stream, as click probes with b""
                raise TypeError(f"write() argument must be str, not {type(text).__name__}")
            if text:
                raise OutputError("standard output", "the stream is closed")
            return 0
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise self._failed(err) from None

    def flush(self) -> None:
        if self.stream is None:
            return
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as err:
            raise self._failed(err) from None

    def isatty(self) -> bool:
        try:
            return self.stream is not None and self.stream.isatty()
        except (OSError, ValueError):  # a closed stream is no terminal; its write says so
            return False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _drop_stdout() -> None:
    """Point the process's standard output at the null device, so that the interpreter's flush at
    exit does not report the output already reported lost (a traceback and exit code 120)."""
    with contextlib.suppress(AttributeError, OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the exit code (0 ok, 1 not guaranteed with --strict or infeasible
    target or the output could not be written, 2 bad input, 3 internal error). Every error is one
    line on stderr, never a traceback (``BOUNDCALC_DEBUG=1`` re-raises internal errors). Standard
    output is flushed before it returns, so that a full disk is reported, not met at exit.

    Example:
        >>> main(["theorem1", "--m", "3"])
        2
    """
    args = list(sys.argv[1:] if argv is None else argv)
    for stream in (sys.stdout, sys.stderr):  # never crash on a terminal that cannot show ρ, δ, ≤
        with contextlib.suppress(AttributeError, ValueError, OSError):
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    guard = _GuardedStdout(sys.stdout)
    sys.stdout = guard  # type: ignore[assignment]
    lost = True
    try:
        code = _run(args)
        guard.flush()  # here, not at exit: a full disk surfaces while it can be reported
        lost = False
    except OutputError as err:
        note(f"error: {_one_line(str(err))}")
        code = 1
    except BrokenPipeError:  # the reader left: nothing to report
        code = 1
    finally:
        sys.stdout = guard.stream
    if lost:
        _drop_stdout()
    return code


def _run(args: list[str]) -> int:
    """The command of ``args`` run; its exit code, every error reported in one line."""
    exc = _click_exceptions()
    try:
        code = _command()(args=args, prog_name="boundcalc", standalone_mode=False)
    except InputError as err:
        note(f"error: {_one_line(str(err))}")
        return 2
    except exc.NoArgsIsHelpError as err:
        sys.stdout.write(err.format_message().rstrip("\n") + "\n")
        return 0
    except exc.UsageError as err:
        note(f"error: {_one_line(err.format_message())} (see boundcalc --help)")
        return 2
    except exc.ClickException as err:
        note(f"error: {_one_line(err.format_message())}")
        return int(getattr(err, "exit_code", 1) or 1)
    except typer.Exit as err:
        return int(getattr(err, "exit_code", 0) or 0)
    except (typer.Abort, KeyboardInterrupt):
        note("aborted")
        return 130
    except (BrokenPipeError, OutputError):  # the output is lost: main reports it
        raise
    except Exception as err:  # a bug, not bad input: still one line unless debugging
        if os.environ.get("BOUNDCALC_DEBUG"):
            raise
        note(f"error: internal error {type(err).__name__}: {_one_line(str(err))} "
              f"(set BOUNDCALC_DEBUG=1 for the traceback)")
        return 3
    if isinstance(code, int) and not isinstance(code, bool):
        return code
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
