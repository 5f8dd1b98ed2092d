"""Overrides of an experiment's settings: ``reproduce … --set key=value`` and ``--config FILE``.

An experiment's settings are one frozen dataclass (its config, stored in the run's
``config.json``); a preset is one instance of it. An override names a field of that dataclass and
gives its value, either as text (``--set widths=8,16,32``, or a string in a TOML file) or as a
Python / TOML value (``widths = [8, 16, 32]``). The value is converted to the field's declared
type, read from the dataclass's annotations: ``int``, ``float``, ``str``, ``bool``, ``X | None``
(text ``none``), ``tuple[X, ...]`` (a comma list or a list) and ``tuple[X, X, X]`` (three values,
or one value for all three, as the calculator's ``--rho`` takes it). Text and values that mean the
same give the same setting, so a TOML file with the keys of the ``--set`` options gives the same
config. Every problem is an :class:`~boundcalc.errors.InputError` that names the option and the
key (``--set widths must be a list of integers, got '8,x'``); the CLI prints it on one line, exit
code 2. Nothing here imports torch: the dataclass is passed in.

Example:
    >>> from dataclasses import dataclass
    >>> @dataclass(frozen=True)
    ... class Settings:
    ...     widths: tuple[int, ...] = (8, 16)
    ...     steps: int = 100
    ...     rho: tuple[float, float, float] = (3.0, 3.0, 3.0)
    >>> values = parse_assignments(["widths=8,16,32", "rho=2"])
    >>> typed_overrides(Settings, values, {"widths": "--set", "rho": "--set"})
    {'widths': (8, 16, 32), 'rho': (2.0, 2.0, 2.0)}
"""

from __future__ import annotations

import dataclasses
import math
import sys
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from boundcalc.errors import InputError

__all__ = ["MAX_SEEDS", "convert", "parse_assignments", "parse_seeds", "read_config_file",
           "refuse_keys",
           "typed_overrides"]

#: The most seeds a run takes (a count, a range or a list): each is a cell of the run, or a seed
#: of every cell.
MAX_SEEDS = 4096

_NONE_WORDS = ("none", "null")
_TRUE, _FALSE = ("true", "yes", "1"), ("false", "no", "0")


def parse_assignments(items: Iterable[str], flag: str = "--set") -> dict[str, str]:
    """``KEY=VALUE`` texts (one per ``--set``) as a dict, in the order given.

    A key given twice, an item without ``=`` or an empty key is an :class:`InputError` of
    ``flag``.

    Example:
        >>> parse_assignments(["steps=10", "widths = 8,16"])
        {'steps': '10', 'widths': '8,16'}
    """
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        key = key.strip()
        if not sep or not key:
            raise InputError(flag, f"takes KEY=VALUE, got {item!r}")
        if key in out:
            raise InputError(f"{flag} {key}", "is given twice")
        out[key] = value.strip()
    return out


def read_config_file(path: str | Path, flag: str = "--config") -> dict[str, Any]:
    """The top-level keys of a TOML file (standard library ``tomllib``, Python >= 3.11).

    A missing or unreadable file, invalid TOML, a table (``[section]``) where a value belongs or
    a Python without ``tomllib`` is an :class:`InputError` of ``flag`` in one line.

    Example:
        >>> import tempfile, os
        >>> name = os.path.join(tempfile.mkdtemp(), "run.toml")
        >>> _ = open(name, "w").write('widths = [8, 16]\\nsteps = 10\\n')
        >>> read_config_file(name)
        {'widths': [8, 16], 'steps': 10}
    """
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        raise InputError(flag, f"needs Python >= 3.11 (the standard library's tomllib); this is "
                               f"Python {sys.version.split()[0]}: give the settings as --set "
                               f"KEY=VALUE") from None
    file = Path(path)
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise InputError(flag, f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(flag, f"{str(path)!r} is not valid TOML: {exc}") from None
    for key, value in data.items():
        if isinstance(value, dict):
            raise InputError(f"{flag} {key}", f"must be a value, not a table ([{key}] in "
                                              f"{str(path)!r}); give the settings as top-level "
                                              f"keys")
    return data


def refuse_keys(refused: Mapping[str, str] | None, values: Mapping[str, Any],
                origin: Mapping[str, str]) -> None:
    """Refuse the first key of ``values`` that ``refused`` maps to why it is no setting of the
    experiment (the registry row's ``refused``), naming the option that gave it and the key
    (``--set n_test``).

    Example:
        >>> refuse_keys({"n_test": "is fixed by the data"}, {"n_test": "5"}, {"n_test": "--set"})
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --set n_test is fixed by the data
    """
    for key, why in (refused or {}).items():
        if key in values:
            raise InputError(f"{origin.get(key, '--set')} {key}", why)


def typed_overrides(cls: type, values: Mapping[str, Any], origin: Mapping[str, str],
                    skip: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``values`` converted to the types of the fields of the dataclass ``cls``.

    Args:
        cls: the config dataclass whose fields may be set.
        values: key → text or value.
        origin: key → the option that gave it (``--set``, ``--config``), named in errors.
        skip: key → why it cannot be set this way (a field set by its own option).

    Raises:
        InputError: a key that is no field of ``cls`` (the message lists the fields), a key of
            ``skip``, or a value that does not convert (:func:`convert`).

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass
        ... class Run:
        ...     steps: int = 10
        ...     lr: float = 0.1
        >>> typed_overrides(Run, {"steps": "20", "lr": 1}, {"steps": "--set", "lr": "--config"})
        {'steps': 20, 'lr': 1.0}
        >>> typed_overrides(Run, {"step": "20"}, {"step": "--set"})
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --set has no setting 'step'; the settings are steps, lr
    """
    hints = typing.get_type_hints(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    skip = dict(skip or {})
    out: dict[str, Any] = {}
    for key, value in values.items():
        flag = f"{origin.get(key, '--set')} {key}"
        if key in skip:
            raise InputError(flag, skip[key])
        if key not in names:
            settable = ", ".join(n for n in names if n not in skip)
            raise InputError(origin.get(key, "--set"), f"has no setting {key!r}; the settings "
                                                       f"are {settable}")
        out[key] = convert(flag, hints[key], value)
    return out


def convert(flag: str, hint: Any, value: Any) -> Any:
    """``value`` (text, or a Python / TOML value) as the type ``hint``; :class:`InputError` of
    ``flag`` when it is not one.

    Example:
        >>> convert("--set steps", int, "1e3"), convert("--set nu", tuple[float, float], "1,2")
        (1000, (1.0, 2.0))
        >>> convert("--set n_test", int | None, "none") is None
        True
    """
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        if isinstance(value, str) and value.strip().lower() in _NONE_WORDS:
            return None
        if len(options) == 1:
            return convert(flag, options[0], value)
        raise InputError(flag, f"cannot be set: its type {hint} has several options")
    if origin is tuple:
        return _tuple(flag, typing.get_args(hint), value)
    if hint is bool:
        return _boolean(flag, value)
    if hint is int:
        return _integer(flag, value)
    if hint is float:
        return _float(flag, value)
    if hint is str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise InputError(flag, f"must be a text, got {value!r}")
        return value.strip() if isinstance(value, str) else repr(value)
    raise InputError(flag, f"cannot be set: its type {hint} is not one of int, float, str, "
                           f"bool, a tuple of them or None")


def _describe(kind: Any) -> str:
    return {int: "integer", float: "number", str: "text", bool: "true/false"}.get(kind, str(kind))


def _tuple(flag: str, args: Sequence[Any], value: Any) -> tuple[Any, ...]:
    if len(args) == 2 and args[1] is Ellipsis:
        kind, length = args[0], None
    else:
        kind, length = args[0], len(args)
        if any(a is not kind for a in args):
            raise InputError(flag, "cannot be set: its tuple holds values of several types")
    if isinstance(value, str):
        parts: list[Any] = [p for p in (s.strip() for s in value.split(",")) if p]
    elif isinstance(value, (list, tuple, range)):
        parts = list(value)
    else:
        parts = [value]
    shape = (f"a list of {_describe(kind)}s" if length is None
             else f"{length} {_describe(kind)}s" + (" (or one for all)" if length == 3 else ""))
    if not parts:
        raise InputError(flag, f"must be {shape}, got {value!r}")
    if length == 3 and len(parts) == 1:
        parts = parts * 3
    if length is not None and len(parts) != length:
        raise InputError(flag, f"must be {shape}, got {value!r}")
    try:
        return tuple(convert(flag, kind, p) for p in parts)
    except InputError:
        raise InputError(flag, f"must be {shape}, got {value!r}") from None


def _boolean(flag: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise InputError(flag, f"must be true or false, got {value!r}")


def _integer(flag: str, value: Any) -> int:
    from boundcalc.inputs.params import parse_integer

    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(flag, f"must be an integer, got {value!r}")
    try:
        return parse_integer(flag, value)
    except InputError:
        raise InputError(flag, f"must be an integer, got {value!r}") from None


def _float(flag: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise InputError(flag, f"must be a number, got {value!r}")
    try:
        number = float(value)
    except (ValueError, OverflowError):
        raise InputError(flag, f"must be a number, got {value!r}") from None
    if not math.isfinite(number):
        raise InputError(flag, f"must be a finite number, got {value!r}")
    return number


def parse_seeds(text: str | int | Sequence[int], flag: str = "--seeds") -> int | list[int]:
    """Seeds as ``reproduce`` takes them (``--seeds``, ``--set seeds=``): a count ``k`` (an
    integer: the experiment's first k seeds), an inclusive range ``A-B`` or a list ``A,B,C``
    (distinct integers >= 0; a TOML or Python list too). A single seed is a one-item list, ``5,``.
    At most :data:`MAX_SEEDS` seeds (a larger count or range is refused before it is built).

    Example:
        >>> parse_seeds("10"), parse_seeds("6-8"), parse_seeds("1,4"), parse_seeds([3])
        (10, [6, 7, 8], [1, 4], [3])
    """
    from boundcalc.inputs.params import parse_integer

    shapes = "must be a count >= 1, a range A-B or a list A,B,C of seeds >= 0"

    def integer(part: Any) -> int:
        if isinstance(part, bool):
            raise InputError(flag, f"{shapes}, got {text!r}")
        try:
            return parse_integer(flag, part)
        except InputError:  # name the whole value, not the part ('' of '-3')
            raise InputError(flag, f"{shapes}, got {text!r}") from None

    if isinstance(text, (list, tuple, range)):
        values = [integer(part) for part in text]
    else:
        if not isinstance(text, (str, int)) or isinstance(text, bool):
            raise InputError(flag, f"{shapes}, got {text!r}")
        raw = str(text).strip()
        if "," not in raw and "-" not in raw:
            count = integer(raw)
            if count < 1:
                raise InputError(flag, f"{shapes}, got {text!r}")
            if count > MAX_SEEDS:
                raise InputError(flag, f"takes at most {MAX_SEEDS} seeds, got {text!r}")
            return count
        if "," in raw:
            values = [integer(part) for part in raw.split(",") if part.strip()]
        else:
            lo_text, _, hi_text = raw.partition("-")
            lo, hi = integer(lo_text), integer(hi_text)
            if hi < lo:
                raise InputError(flag, f"range A-B needs A <= B, got {text!r}")
            if hi - lo + 1 > MAX_SEEDS:
                raise InputError(flag, f"takes at most {MAX_SEEDS} seeds, got {text!r}")
            values = list(range(lo, hi + 1))
    if not values or min(values) < 0 or len(set(values)) != len(values):
        raise InputError(flag, f"must list distinct integers >= 0, got {text!r}")
    if len(values) > MAX_SEEDS:
        raise InputError(flag, f"takes at most {MAX_SEEDS} seeds, got {len(values)}")
    return values
