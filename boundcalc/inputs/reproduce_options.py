"""The options of ``boundcalc reproduce`` and ``boundcalc.reproduce`` that are not fields of an
experiment's config: the experiment and its preset, ``--jobs``, ``--lin-align``, ``--dtype``,
``--figure-width``, ``--data``, ``--executor``, and which experiments take each option.

Each check names the flag it refuses (the CLI's ``--jobs``, the Python API's ``jobs``) in one
line, as every check of the input layer does; what an experiment takes and requires (its presets,
the experiments that take an option) is handed in by the caller from the experiment table, which
sits a floor above this layer. The config fields themselves are checked by
:mod:`boundcalc.inputs.experiment_fields`.

Example:
    >>> check_choice("--dtype", "float64", ("float32", "float64"))
    >>> check_choice("--dtype", "half", ("float32", "float64"))
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --dtype must be float32 or float64, got 'half'
    >>> check_taken("--seeds", "table1", ("figure1", "figure2"), "figure1 and figure2")
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --seeds is for figure1 and figure2, not table1
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from boundcalc.errors import InputError

__all__ = ["check_choice", "check_data_path", "check_engine", "check_experiment",
           "check_given_once", "check_jobs", "check_kind", "check_taken", "require_data"]


def check_choice(flag: str, value: object, choices: Sequence[str], *,
                 one_of: bool = False) -> None:
    """``value`` is one of ``choices`` (a preset, ``--lin-align``, ``--dtype``,
    ``--figure-width``, an experiment's name), else an :class:`InputError` naming ``flag``:
    ``must be a or b`` (``must be one of a, b, c`` with ``one_of``)."""
    if value not in choices:
        words = f"one of {', '.join(choices)}" if one_of else " or ".join(choices)
        raise InputError(flag, f"must be {words}, got {value!r}")


def check_experiment(flag: str, name: object, registered: Sequence[str]) -> str:
    """``name`` is one of the ``registered`` experiments, else an :class:`InputError` naming
    ``flag`` that lists them (``must be a, b or c``).

    Example:
        >>> check_experiment("EXPERIMENT", "figure1", ("figure1", "tsweep"))
        'figure1'
        >>> check_experiment("EXPERIMENT", "figure3", ("figure1", "figure2", "tsweep"))
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: EXPERIMENT must be figure1, figure2 or tsweep, got 'figure3'
    """
    if name not in registered:
        names = list(registered)
        words = names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"
        raise InputError(flag, f"must be {words}, got {name!r}")
    return str(name)


def check_jobs(flag: str, jobs: object, *, integer_text: bool = False) -> None:
    """``--jobs`` (``jobs``) is an integer ≥ 1; ``integer_text`` says "an integer" in the
    message, for the Python API, which may be handed anything.

    Example:
        >>> check_jobs("jobs", True, integer_text=True)
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: jobs must be an integer >= 1, got True
    """
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        words = "an integer >= 1" if integer_text else ">= 1"
        raise InputError(flag, f"must be {words}, got {jobs!r}" if integer_text
                         else f"must be {words}, got {jobs}")


def check_kind(flag: str, value: object, kinds: type | tuple[type, ...], what: str) -> None:
    """A Python API argument of the wrong type (``out``, ``data``, ``device``): ``must be
    <what>, got <value>``."""
    if not isinstance(value, kinds):
        raise InputError(flag, f"must be {what}, got {value!r}")


def check_taken(flag: str, experiment: str, takes: Sequence[str], takes_text: str,
                why: str = "", only: bool = False) -> None:
    """``flag`` given to an ``experiment`` not among those that take it (``takes``, written
    ``takes_text``): ``--dtype is for figure1, figure2 and tsweep, not table1``."""
    if experiment not in takes:
        raise InputError(flag, f"is for {takes_text}{' only' if only else ''}, not "
                               f"{experiment}{why}")


def check_given_once(flag: str, key: str, origin: str | None) -> None:
    """An option given both as its flag and as ``--set key=…``."""
    if origin == "--set":
        raise InputError(flag, f"and --set {key} are both given; give one")


def require_data(flag: str, preset: str, data: object, data_required: Sequence[str],
                 what: str) -> None:
    """A preset that reads a data set (``data_required``) without ``--data``; ``what`` says
    which files it wants."""
    if preset in data_required and data is None:
        raise InputError(flag, f"{what}")


def check_data_path(flag: str, data: str | os.PathLike[str] | None) -> None:
    """``--data`` names a path that exists."""
    if data is not None and not Path(data).exists():
        raise InputError(flag, f"{os.fspath(data)!r} does not exist")


def check_engine(experiment: str, executor: str, engine: bool, has_task: bool) -> None:
    """An experiment without a task of its own runs on this machine's processes only."""
    if engine and not has_task:
        raise InputError("--executor", f"{experiment} runs on --executor processes only, not "
                                       f"{executor}")
