"""The one schema of a stored record: what a sound cell of each experiment holds, checked when read.

A run directory (:mod:`boundcalc.runs.directory`) stores every finished cell as a JSON file; the
summaries, tables and figures are always recomputed from those cells
(:mod:`boundcalc.runs.summaries`), never read back from ``summary.csv``. So checking each cell
when it is read is what keeps a damaged or edited file out of every mean, interval, slope,
verdict and figure. A cell's text is

* **bounded**: at most :data:`MAX_RECORD_BYTES` bytes and :data:`MAX_DEPTH` levels of nesting
  (a file of 100,000 ``[`` is damage, not a ``RecursionError``: the parser's own recursion limit
  is caught, and what parses is measured without recursion);

and each of its records, field by field (:func:`fields_of`, per experiment):

* of its **type** (an integer, a number, a truth value, text);
* **finite** where the field is a measurement every mean and yardstick uses (a NaN in
  ``initial_train_loss`` would silently switch the free yardstick, one in ``label_rms`` the T
  sweep's relative loss); a number that is undefined by design (a diverged run's validation
  loss, a bound not evaluated) is stored as the text ``"nan"`` / ``"inf"`` and allowed only
  where its field says so;
* **non-negative** where it is a loss, an error or a norm (the figures take its logarithm);
* **equal to the run's parameters** where it names one (``n``, ``lin_align`` of a figure-1 or
  T-sweep cell; ``T = L + 1`` of a figure-2 cell; ``steps``, ``lr`` of a table-1 cell): a cell
  that contradicts the run it is stored in was not computed by it.

A record failing any of these is *damage*: :meth:`boundcalc.runs.directory.RunDirectory.has_cell`
moves it aside and the run computes it again, :func:`boundcalc.runs.stored.load_run` counts it
as missing and says why. The writers refuse the same records
(:meth:`~boundcalc.runs.directory.RunDirectory.save_cell` raises :class:`RecordError`), so a NaN
where a finite number belongs is never stored.

Experiments registered without a row here get the generic checks (bounded JSON, the registry's
``cell_fields`` and ``finite_fields``).

Example:
    >>> parse_json('[' * 100_000)[1]
    'nested deeper than 64 levels'
    >>> cell = {"seed": 1, "m": 8, "lin_error": 0.1, "app_error": 0.2, "min_train_loss": 0.3,
    ...         "n": 256, "initial_train_loss": "nan"}
    >>> record_problem("figure1", cell, {"n": 256})
    "holds initial_train_loss 'nan', not a finite number"
    >>> record_problem("figure1", {**cell, "initial_train_loss": 0.5}, {"n": 128})
    'names n 256, the run has n 128'
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FIGURE1_FIELDS", "FIGURE2_FIELDS", "Field", "MAX_CONFIG_BYTES", "MAX_DEPTH",
           "MAX_RECORD_BYTES", "RecordError", "TABLE1_FIELDS", "TSWEEP_FIELDS", "fields_of",
           "finite_fields", "parse_json", "read_stored", "record_problem", "writable_problem"]

#: Largest cell file read (bytes): a cell holds a few dozen numbers; anything near this is not one.
MAX_RECORD_BYTES = 4 << 20

#: Largest ``config.json`` read (bytes): it lists every installed package, so it is larger.
MAX_CONFIG_BYTES = 16 << 20

#: Deepest nesting of objects and lists read (a cell records its parameters two levels down).
MAX_DEPTH = 64

#: How a run directory stores a number that is undefined by design (``"nan"``, ``"inf"``).
NON_FINITE_TEXT = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class RecordError(ValueError):
    """A record that a writer refuses to store (a NaN where a finite number belongs, a value that
    contradicts the run): storing it would put damage into every summary made from it."""


def _constant_as_text(name: str) -> str:
    """A ``NaN`` / ``Infinity`` literal (not standard JSON; no writer here writes one) read as the
    text a run directory stores such a number as, so that the field's rule judges it."""
    return {"NaN": "nan", "Infinity": "inf", "-Infinity": "-inf"}[name]


def _depth(data: Any) -> int:
    """Nesting depth of parsed JSON (0 for a scalar), without recursion."""
    deepest, stack = 0, [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            children: Any = value.values()
        elif isinstance(value, list):
            children = value
        else:
            continue
        deepest = max(deepest, level)
        if deepest > MAX_DEPTH:
            return deepest
        stack.extend((child, level + 1) for child in children)
    return deepest


def parse_json(text: str, limit: int = MAX_RECORD_BYTES) -> tuple[Any, str | None]:
    """``(data, None)`` for a stored JSON text within the bounds, else ``(None, why not)``: larger
    than ``limit`` bytes, nested deeper than :data:`MAX_DEPTH`, not JSON or truncated. A ``NaN``
    or ``Infinity`` literal is read as the text ``"nan"`` / ``"inf"`` (how a run directory
    stores such a number), so a field that must be finite refuses it. Never raises for any text.

    Example:
        >>> parse_json('{"a": [1, 2]}'), parse_json('{"a": NaN}')
        (({'a': [1, 2]}, None), ({'a': 'nan'}, None))
    """
    if len(text) > limit:
        return None, f"larger than {limit} bytes"
    try:
        data = json.loads(text, parse_constant=_constant_as_text)
    except RecursionError:
        return None, f"nested deeper than {MAX_DEPTH} levels"
    except ValueError as exc:
        return None, f"not valid JSON (truncated?): {exc}"
    if _depth(data) > MAX_DEPTH:
        return None, f"nested deeper than {MAX_DEPTH} levels"
    return data, None


@dataclass(frozen=True)
class Field:
    """What one field of a sound record holds.

    Attributes:
        kind: ``int`` (an integer, not a truth value), ``number`` (an integer or a float, or the
            text of :data:`NON_FINITE_TEXT` unless ``finite``), ``bool``, ``text``, ``list``.
        finite: a finite number (no NaN, no infinity, not the text of one).
        nonnegative: a number ≥ 0 where it is one (a loss, an error, a norm, a count).
        nullable: may be ``null`` (nothing to measure: no held-out sample).
        choices: the texts it may be.
        parameter: ``(record, run parameters) → the value it must equal``, or None when those
            parameters do not say (an older run that did not record them).
    """

    kind: str = "number"
    finite: bool = False
    nonnegative: bool = False
    nullable: bool = False
    choices: tuple[str, ...] = ()
    parameter: Callable[[Mapping[str, Any], Mapping[str, Any]], Any] | None = None


def _param(name: str) -> Callable[[Mapping[str, Any], Mapping[str, Any]], Any]:
    def value(record: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
        return params.get(name)
    value.__name__ = f"parameter {name}"
    return value


def _n_train(record: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    n, fraction = params.get("n"), params.get("val_fraction")
    if not isinstance(n, int) or isinstance(fraction, bool) \
            or not isinstance(fraction, (int, float)) or not math.isfinite(fraction):
        return None
    return n - int(fraction * n)


def _other_alignment(record: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    align = params.get("lin_align")
    return {"feature": "output", "output": "feature"}.get(align) if isinstance(align, str) \
        else None


def _lag_plus_one(record: Mapping[str, Any], params: Mapping[str, Any]) -> Any:
    L = record.get("L")
    return L + 1 if isinstance(L, int) and not isinstance(L, bool) else None


_COUNT = Field("int", nonnegative=True)
_MEASURED = Field(finite=True, nonnegative=True)     # every mean and yardstick uses it
_LOSS = Field(nonnegative=True)                      # may be "nan" by design (a diverged run)
_ALIGN = ("feature", "output")

_FIGURE1 = {
    "seed": _COUNT, "m": _COUNT,
    "n": Field("int", nonnegative=True, parameter=_param("n")),
    "n_train": Field("int", nonnegative=True, parameter=_n_train),
    "lin_error": _MEASURED, "lin_error_max": _LOSS, "lin_error_alt": _MEASURED,
    "lin_align": Field("text", choices=_ALIGN, parameter=_param("lin_align")),
    "lin_align_alt": Field("text", choices=_ALIGN, parameter=_other_alignment),
    "app_error": _MEASURED, "app_error_mean": _LOSS,
    "min_train_loss": _MEASURED, "final_train_loss": _LOSS, "initial_train_loss": _MEASURED,
    "final_val_loss": Field(finite=True, nonnegative=True, nullable=True),
    "label_rms": _MEASURED, "wall_s": _LOSS,
}

#: What a sound record of each experiment holds, field by field (module docstring); its
#: registry row names it (``record_fields``). A field absent from a record is not checked here
#: (cells written before it existed lack it; the registry's ``cell_fields`` say which must be
#: present).
FIGURE1_FIELDS: dict[str, Field] = _FIGURE1
TSWEEP_FIELDS: dict[str, Field] = {**_FIGURE1, "T": _COUNT}
FIGURE2_FIELDS: dict[str, Field] = {
    "model": Field("text", choices=("transformer", "indrnn")), "L": _COUNT,
    "T": Field("int", nonnegative=True, parameter=_lag_plus_one), "seed": _COUNT,
    "n_train": _COUNT, "n_val": _COUNT, "jacobian_block": Field("text", choices=("W", "u")),
    "max_jacobian": _MEASURED, "max_loss_gradient": _MEASURED,
    "jacobian_init": _LOSS, "jacobian_final": _LOSS, "min_val_loss": _LOSS,
    "min_val_step": _COUNT, "final_val_loss": _LOSS, "min_train_loss": _LOSS,
    "final_train_loss": _LOSS, "diverged": Field("bool"),
    "memory_floats_per_sample": _COUNT, "wall_s_per_seed": _LOSS,
}
TABLE1_FIELDS: dict[str, Field] = {
    "d_m": _COUNT, "N": _COUNT, "d_s": _COUNT, "d": _COUNT,
    "steps": Field("int", nonnegative=True, parameter=_param("steps")),
    "lr": Field(finite=True, parameter=_param("lr")),
    "n_test": _COUNT, "lowest_test_loss": _LOSS, "lowest_test_epoch": Field("int"),
    "final_test_loss": _LOSS, "max_test_loss": _LOSS, "min_train_loss": _LOSS,
    "paper_lowest_test_loss": _LOSS, "paper_epoch": Field("int"),
    "alpha": _MEASURED, "alpha_used": _MEASURED, "Phi0": Field(finite=True),
    # the bound as printed in the paper can be negative (its printed form's terms)
    "theorem5_bound": Field(), "theorem5_bound_printed": Field(),
    "zero_predictor_test_loss": _MEASURED, "initial_test_loss": _LOSS,
    "lowest_test_under_bound": Field("bool"), "all_conditions_hold": Field("bool"),
    "lemma4_applies": Field("bool"), "conditions_hold_count": Field("text"),
    "conditions_holding": Field("text"), "conditions_failing": Field("text"),
}


def fields_of(kind: str) -> Mapping[str, Field]:
    """The record schema of experiment ``kind``, as its registry row names it; empty for a kind
    without one (an unknown or a plug-in experiment that names none)."""
    from boundcalc.experiments.experiment_registry import EXPERIMENTS, load

    row = EXPERIMENTS.get(kind)
    return {} if row is None or row.record_fields is None else load(row.record_fields)


def finite_fields(kind: str) -> tuple[str, ...]:
    """The fields of ``kind`` that must be finite numbers (:func:`fields_of`).

    Example:
        >>> finite_fields("figure2")
        ('max_jacobian', 'max_loss_gradient')
    """
    return tuple(k for k, rule in fields_of(kind).items() if rule.finite)


def _number(value: Any) -> float | None:
    """``value`` as a float when it is a number or the stored text of a non-finite one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value) if not isinstance(value, int) or abs(value) < 2**1023 else math.inf
    if isinstance(value, str) and value in NON_FINITE_TEXT:
        return NON_FINITE_TEXT[value]
    return None


def _field_problem(name: str, rule: Field, value: Any) -> str | None:
    if value is None:
        return None if rule.nullable else f"holds {name} null"
    if rule.kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"holds {name} {value!r}, not an integer"
    elif rule.kind == "bool":
        return None if isinstance(value, bool) else f"holds {name} {value!r}, not true or false"
    elif rule.kind == "text":
        if not isinstance(value, str):
            return f"holds {name} {value!r}, not text"
        if rule.choices and value not in rule.choices:
            return f"holds {name} {value!r}, not one of {', '.join(rule.choices)}"
        return None
    number = _number(value)
    if number is None:
        return f"holds {name} {value!r}, not a number"
    if rule.finite and not math.isfinite(number):
        return f"holds {name} {value!r}, not a finite number"
    if rule.nonnegative and number < 0:
        return f"holds {name} {value!r}, below 0"
    return None


def record_problem(kind: str | None, record: Mapping[str, Any],
                   params: Mapping[str, Any] | None = None) -> str | None:
    """Why one record of a cell of experiment ``kind`` (in a run with ``params``) is not sound
    (module docstring), or None. A kind without a schema (:func:`fields_of`) has nothing
    checked here.

    Example:
        >>> record_problem("figure2", {"L": 4, "T": 9}), record_problem("table1", {"lr": "x"})
        ('names T 9, the run has T 5', "holds lr 'x', not a number")
    """
    rules = fields_of(kind or "")
    for name, rule in rules.items():
        if name not in record:
            continue
        value = record[name]
        problem = _field_problem(name, rule, value)
        if problem is not None:
            return problem
        if rule.parameter is not None:
            expected = rule.parameter(record, params or {})
            if expected is not None and not _same(value, expected):
                return f"names {name} {value!r}, the run has {name} {expected!r}"
    return None


def _same(value: Any, expected: Any) -> bool:
    if isinstance(value, bool) or isinstance(expected, bool):
        return value is expected
    return bool(value == expected)


def writable_problem(kind: str | None, record: Any, params: Mapping[str, Any] | None = None
                     ) -> str | None:
    """Why a writer must not store ``record`` (a cell: an object or a list of them) of ``kind``:
    :func:`record_problem` of each object, after the non-finite floats a measurement may hold by
    design are put as the text they are stored as. None when it may be stored.

    Example:
        >>> writable_problem("figure1", {"label_rms": float("nan")})
        "holds label_rms 'nan', not a finite number"
        >>> writable_problem("figure2", {"min_val_loss": float("nan")}) is None
        True
    """
    records = record if isinstance(record, list) else [record]
    for item in records:
        if not isinstance(item, Mapping):
            continue
        stored = {k: (str(v) if isinstance(v, float) and not math.isfinite(v) else v)
                  for k, v in item.items()}
        problem = record_problem(kind, stored, params)
        if problem is not None:
            return problem
    return None


def read_stored(path: str | os.PathLike, limit: int = MAX_RECORD_BYTES
                ) -> tuple[str | None, str | None]:
    """``(text, None)`` of a stored JSON file, reading at most ``limit`` + 1 bytes, else
    ``(None, why not)``: not a regular file (a folder, a FIFO, a device: never read, since
    reading one may never end), unreadable, larger than ``limit`` bytes, not UTF-8.

    Example:
        >>> read_stored("/dev/zero")
        (None, 'not a regular file')
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None, "not a regular file"
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        return None, f"unreadable: {exc.strerror or exc}"
    if len(data) > limit:
        return None, f"larger than {limit} bytes"
    try:
        return data.decode("utf-8"), None
    except UnicodeDecodeError as exc:
        return None, f"unreadable: not UTF-8 ({exc.reason} at byte {exc.start})"
