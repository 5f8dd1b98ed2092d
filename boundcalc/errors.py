"""The exceptions the CLI reports in one line: bad user input (exit 2), valid inputs at which the
result asked for does not exist (exit 2), and output that could not be written (exit 1), shared by
every module that checks an input, computes a result or writes an output.

Input errors are raised by the input layer (:mod:`boundcalc.inputs`) before any work, and by the
readers of stored run files and records (a file's content is known only once read). A
:class:`ResultError` is not an input error: every input is in its range, but a quantity computed
from them is beyond the float range (:class:`ResultOverflowError`) or undefined
(:class:`StepSizeUndefinedError`); it is an :class:`InputError` subclass only so that every
surface reports it the same way (exit 2, naming the flags to change)."""

from __future__ import annotations

import re

__all__ = ["InputError", "OutputError", "ResultError", "ResultOverflowError",
           "StepSizeUndefinedError", "abbreviate"]

#: Longest word (a run without spaces: a value echoed back, ``'1,1,…'``) a message keeps whole.
LONGEST_WORD = 160
#: Longest message kept whole once its words are cut: beyond, its middle is left out.
LONGEST_MESSAGE = 2000

_WORD = re.compile(r"\S+")


def _cut(text: str, longest: int) -> str:
    """``text`` with its middle left out when it is longer than ``longest`` characters."""
    if len(text) <= longest:
        return text
    head = longest * 2 // 3
    tail = longest - head
    return f"{text[:head]}…[{len(text) - longest} characters left out]…{text[-tail:]}"


def abbreviate(text: str) -> str:
    """``text`` short enough for a one-line error: a word longer than :data:`LONGEST_WORD`
    characters (a huge value echoed back) keeps its head and tail, and a message still longer
    than :data:`LONGEST_MESSAGE` its beginning and end; a short message is unchanged.

    Example:
        >>> print(abbreviate("--nu takes three values, got '" + "1," * 5000 + "1'"))
        ... # doctest: +ELLIPSIS
        --nu takes three values, got '1,1,1,...,1…[9843 characters left out]…1,...,1,1'
        >>> abbreviate("--m must be even, got 3")
        '--m must be even, got 3'
    """
    shorter = _WORD.sub(lambda word: _cut(word.group(0), LONGEST_WORD), text)
    return _cut(shorter, LONGEST_MESSAGE)


class InputError(ValueError):
    """Bad user input. ``flag`` names the offending CLI flag; the message reads after it, e.g.
    ``--m must be a positive even integer, got 3``. The CLI prints it on one line, exit code 2.
    A value the message echoes is abbreviated when it is huge (:func:`abbreviate`).

    Example:
        >>> str(InputError("--m", "must be even, got 3")), InputError("--m", "x").flag
        ('--m must be even, got 3', '--m')
    """

    def __init__(self, flag: str, message: str):
        super().__init__(f"{flag} {abbreviate(message)}")
        self.flag = flag


class ResultError(InputError):
    """Valid inputs at which the result asked for does not exist (the subclasses say why); the
    flag names the inputs to change. Exit code 2, one line."""


class StepSizeUndefinedError(ResultError):
    """The theorem's step size η* = ‖ν‖/(2·L·B·√K) is needed (no ``--eta``) and undefined at these
    inputs because L·B = 0: σ₀ = σ₁ = 0 (then L = 0), or a degenerate point where the residual
    envelope B is 0 (σ₀ = 0 with ρ = 0 and ν_u = ν_w = 0, for one). Which inputs make L·B vanish is
    known only from the statement's own L and B, so the evaluator finds it; ``--eta`` is the flag.

    Example:
        >>> str(StepSizeUndefinedError("--eta", "must be given here"))
        '--eta must be given here'
    """


class ResultOverflowError(ResultError):
    """Inputs each valid whose result is not a float: a quantity computed from them lies beyond
    the float range, and an overflow is not a result, so no answer is given. ``flag`` names the
    inputs without which it does not overflow (or ``the inputs``); the CLI prints it on one line,
    exit code 2, since other inputs are the remedy.

    Example:
        >>> err = ResultOverflowError("--m", "makes the solver's quantities overflow")
        >>> str(err), isinstance(err, InputError)
        ("--m makes the solver's quantities overflow", True)
    """


class OutputError(Exception):
    """Output that could not be written although the input was fine: a full disk, an I/O error, a
    closed standard output. ``target`` names where (``standard output``, ``--output FILE``); the
    CLI prints it on one line, exit code 1, so that a lost output never ends in exit code 0.

    Example:
        >>> str(OutputError("standard output", "No space left on device"))
        'cannot write standard output: No space left on device'
    """

    def __init__(self, target: str, reason: str):
        super().__init__(f"cannot write {target}: {reason}")
        self.target = target
