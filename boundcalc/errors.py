"""The exceptions the CLI reports in one line: bad user input (exit 2) and output that could not
be written (exit 1), shared by every module that checks an input or writes an output."""

from __future__ import annotations

__all__ = ["InputError", "OutputError"]


class InputError(ValueError):
    """Bad user input. ``flag`` names the offending CLI flag; the message reads after it, e.g.
    ``--m must be a positive even integer, got 3``. The CLI prints it on one line, exit code 2.

    Example:
        >>> str(InputError("--m", "must be even, got 3")), InputError("--m", "x").flag
        ('--m must be even, got 3', '--m')
    """

    def __init__(self, flag: str, message: str):
        super().__init__(f"{flag} {message}")
        self.flag = flag


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
