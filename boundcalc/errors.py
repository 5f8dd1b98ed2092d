"""The one exception of bad user input, shared by every module that checks an input."""

from __future__ import annotations

__all__ = ["InputError"]


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
