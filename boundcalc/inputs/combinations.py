"""Flags that exclude or need each other, one :class:`Combination` row each.

A value is checked by its row (:mod:`boundcalc.inputs.params`, :mod:`boundcalc.inputs.surfaces`)
and a condition over several numbers by a rule (:mod:`boundcalc.inputs.rules`); what is left is
which flags go together: ``--symbolic`` with a text format, ``--target`` or ``--nonvacuous``, the
Slurm flags with ``--executor slurm``. Each surface states the flags it was given (by keyword,
None: not given) and :func:`check_combinations` refuses the first row that applies, naming its
flag, exit code 2, before any work.

Example:
    >>> check_combinations("width", {"target": None, "nonvacuous": False})
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --target is required (or give --nonvacuous)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.executor_flags import EXECUTORS as _EXECUTORS

__all__ = ["COMBINATIONS", "Combination", "SLURM_FLAGS", "check_combinations"]


#: The Slurm flags (keyword → flag), for ``--executor slurm`` only.
SLURM_FLAGS = {"slurm_partition": "--slurm-partition", "slurm_time": "--slurm-time",
               "slurm_gpus_per_task": "--slurm-gpus-per-task",
               "slurm_cpus_per_task": "--slurm-cpus-per-task",
               "slurm_array_parallelism": "--slurm-array-parallelism",
               "slurm_setup": "--slurm-setup"}

Values = Mapping[str, Any]


@dataclass(frozen=True)
class Combination:
    """One way flags may not go together.

    Attributes:
        surface: the command (``point``, ``width``, ``generalization``, ``validate``,
            ``executor``).
        flag: the flag an error names, or a function of the values that gives it.
        refused: ``refused(values)`` → whether this combination was given.
        message: the text after the flag (``{name}`` fields filled from the values), or a
            function of the values.
    """

    surface: str
    flag: str | Callable[[Values], str]
    refused: Callable[[Values], bool]
    message: str | Callable[[Values], str]

    def error(self, values: Values) -> InputError:
        flag = self.flag(values) if callable(self.flag) else self.flag
        text = self.message(values) if callable(self.message) else self.message.format(
            **values)
        return InputError(flag, text)


def _given(values: Values, key: str) -> bool:
    value = values.get(key)
    return value is not None and value is not False and value != () and value != []


def _first_given(values: Values, flags: Mapping[str, str]) -> str | None:
    return next((flag for key, flag in flags.items() if _given(values, key)), None)


#: The flags measured by ``generalization --data`` (keyword → flag): refused beside it.
_MEASURED_BY_DATA = {"alpha": "--alpha", "phi0": "--phi0", "N": "--N", "ds": "--ds", "d": "--d",
                     "wq_fro": "--wq-fro", "wk_fro": "--wk-fro", "wv_fro": "--wv-fro",
                     "wq_spec": "--wq-spec", "wk_spec": "--wk-spec", "wv_spec": "--wv-spec",
                     "wo_norm": "--wo-norm"}

_SLURM_MINIMUM = {"slurm_gpus_per_task": 0, "slurm_array_parallelism": 1,
                  "slurm_cpus_per_task": 1}


def _below_slurm_minimum(values: Values) -> str | None:
    return next((key for key, low in _SLURM_MINIMUM.items()
                 if values.get(key) is not None and values[key] < low), None)


#: Every combination of flags a surface refuses, in the order they are checked.
COMBINATIONS: tuple[Combination, ...] = (
    Combination("point", "--symbolic",
                lambda v: bool(v.get("symbolic")) and v.get("fmt") in ("json", "csv"),
                "works with --format table, markdown or latex (JSON and CSV keep the data "
                "contract), got --format {fmt}"),
    Combination("point", "--symbolic",
                lambda v: bool(v.get("symbolic")) and v.get("other_alpha") is not None,
                "shows the registered statement (alpha = 1.5); drop it or --alpha {alpha}"),
    Combination("width", "--nonvacuous",
                lambda v: bool(v.get("nonvacuous")) and v.get("target") is not None,
                "cannot be combined with --target (give one of them)"),
    Combination("width", "--target",
                lambda v: not v.get("nonvacuous") and v.get("target") is None,
                "is required (or give --nonvacuous)"),
    Combination("python", "alpha",
                lambda v: v.get("alpha") is not None and v.get("statement") != "prop2",
                "is for prop2 only, not {statement}"),
    Combination("sweep", "--alpha",
                lambda v: v.get("alpha") is not None and v.get("statement") != "prop2",
                "is for prop2 only (the IndRNN's recurrent scale), not {statement}"),
    Combination("generalization", "--symbolic",
                lambda v: bool(v.get("symbolic")) and v.get("fmt") == "csv",
                "works with --format table, json, markdown or latex, got --format csv"),
    Combination("generalization", "--symbolic",
                lambda v: bool(v.get("symbolic")) and v.get("fmt") == "json"
                and bool(v.get("needs_numbers")),
                "with --format json prints the formulas alone (give no --alpha/--phi0/init "
                "flags): the JSON result keeps the data contract"),
    Combination("generalization", lambda v: _first_given(v, _MEASURED_BY_DATA) or "--data",
                lambda v: _given(v, "data") and _first_given(v, _MEASURED_BY_DATA) is not None,
                "is measured by --data; do not give both"),
    Combination("validate", "--jobs",
                lambda v: v.get("executor") == "processes" and v.get("jobs", 1) != 1,
                "is for --executor dask with validate (processes computes the cells here, one "
                "after the other)"),
    Combination("validate", "--executor",
                lambda v: bool(v.get("decompose")) and v.get("executor") != "processes",
                "--decompose runs here (--executor processes)"),
    Combination("executor", "--executor", lambda v: v.get("kind") not in _EXECUTORS,
                lambda v: f"must be {', '.join(_EXECUTORS[:-1])} or {_EXECUTORS[-1]}, got "
                          f"{v.get('kind')!r}"),
    Combination("executor", "--jobs", lambda v: v.get("jobs", 1) < 1,
                "must be >= 1, got {jobs}"),
    Combination("executor", "--cells-per-task", lambda v: v.get("cells_per_task", 1) < 1,
                "must be >= 1, got {cells_per_task}"),
    Combination("executor", lambda v: _first_given(v, SLURM_FLAGS) or "--executor",
                lambda v: v.get("kind") != "slurm" and _first_given(v, SLURM_FLAGS) is not None,
                "is for --executor slurm, not {kind}"),
    Combination("executor", "--dask-address",
                lambda v: v.get("kind") != "dask" and v.get("dask_address") is not None,
                "is for --executor dask, not {kind}"),
    Combination("executor", "--dask-dashboard",
                lambda v: v.get("kind") != "dask" and bool(v.get("dask_dashboard")),
                "is for --executor dask, not {kind}"),
    Combination("executor", "--cells-per-task",
                lambda v: v.get("kind") == "processes" and v.get("cells_per_task", 1) != 1,
                "is for --executor dask or slurm"),
    Combination("executor", lambda v: SLURM_FLAGS[_below_slurm_minimum(v) or "slurm_time"],
                lambda v: _below_slurm_minimum(v) is not None,
                lambda v: f"must be >= {_SLURM_MINIMUM[_below_slurm_minimum(v)]}, got "
                          f"{v[_below_slurm_minimum(v)]}"),
)


def check_combinations(surface: str, values: Values) -> None:
    """Refuse the first :data:`COMBINATIONS` row of ``surface`` that ``values`` (by keyword)
    give, raising its :class:`InputError`.

    Example:
        >>> check_combinations("point", {"symbolic": True, "fmt": "table"}) is None
        True
    """
    for row in COMBINATIONS:
        if row.surface == surface and row.refused(values):
            raise row.error(values)
