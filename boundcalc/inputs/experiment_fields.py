"""Every field of every experiment config: one row each (type, range, unit, meaning), the presets,
the rules over several fields, and the one check of ``reproduce --set/--config`` and
:func:`boundcalc.reproduce` that runs before any run directory, lock or torch import.

An experiment's settings are one frozen dataclass in :mod:`boundcalc.validators.experiments`
(imported with torch); this module holds what the user may give to it, torch-free:

* a :class:`Field` row per field — its type (the dataclass's annotation), its range, unit and
  meaning; ``check`` converts a text or TOML value (:func:`boundcalc.inputs.overrides.convert`)
  and checks the range, so a bad value is an :class:`~boundcalc.errors.InputError` naming the
  option and the key (``--set nu must be one or three non-negative numbers, got '-1'``);
* the presets, as the fields they change from the defaults (the validators build their
  ``PRESETS`` from them, so a preset is written once);
* a :class:`Rule` per condition over several fields: ``refuse`` (exit 2: the run cannot be made,
  e.g. no validation sample is left) or ``not_applicable`` (the run is made, and a statement's
  conditions fail, e.g. ρ < ν for Theorem 1: the summaries, tables and figures say so from the
  calculator's own conditions, :func:`boundcalc.runs.summaries.figure1_theory`);
* :meth:`ExperimentInputs.check`: the preset with the overrides, every field and every refusing
  rule checked.

The sizes (widths, samples, dimensions, steps) are at most :data:`MAX_SIZE` = 2**24: the
experiments hold dense tensors with that many rows (a width-m student, n samples, K rows of
per-step history), which past 2**24 rows no longer fit a device's memory, and float32 counts
exactly only up to 2**24. A list holds at most :data:`MAX_ITEMS` values (each is a cell of the
run, or a seed of every cell); seeds are below 2**32 (numpy's and torch's generators take them
whole, with room for the seeds derived from them).

Example:
    >>> FIGURE1.fields["nu"].check("--set nu", "2,3,1")
    (2.0, 3.0, 1.0)
    >>> FIGURE1.check("quick", {"nu": "-1"}, {"nu": "--set"})
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --set nu must be one or three non-negative numbers, got (-1.0, \
-1.0, -1.0)
    >>> FIGURE1.check("quick", {"widths": "8,16", "seeds": "2"}, {"widths": "--set"})
    (2, {'widths': (8, 16)})
    >>> [rule.name for rule in FIGURE1.failing({**FIGURE1.preset("quick"), "rho": (2.0,) * 3})]
    ['rho_ge_nu']
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boundcalc.errors import InputError
from boundcalc.inputs.overrides import MAX_SEEDS, convert, parse_seeds, refuse_keys

__all__ = ["EXPERIMENT_INPUTS", "FIGURE1", "FIGURE2", "MAX_ITEMS", "MAX_SEED", "MAX_SIZE",
           "TABLE1", "TSWEEP", "ExperimentInputs", "Field", "Rule", "check_out", "field_table"]

#: The largest size (width, samples, dimension, length, steps) an experiment takes (module
#: docstring).
MAX_SIZE = 2**24
#: The most values a list setting holds (widths, lags, seeds, …).
MAX_ITEMS = MAX_SEEDS
#: The largest seed.
MAX_SEED = 2**32 - 1

_SIZE_WHY = ("(2**24: the experiments hold dense tensors with that many rows, and float32 counts "
             "exactly only up to 2**24)")

#: What a rule's failure does: ``refuse`` (exit 2) or ``not_applicable`` (the run is made; the
#: statement is marked not applicable wherever its bound appears).
CONSEQUENCES = ("refuse", "not_applicable")


@dataclass(frozen=True)
class Field:
    """One field of an experiment config.

    Attributes:
        name: the field (a ``--set`` key, a TOML key, a keyword of :func:`boundcalc.reproduce`).
        type: its type, the dataclass's annotation (``int``, ``tuple[int, ...]``, ``int | None``).
        default: its value in the dataclass (the paper's setting).
        unit: the unit (``heads``, ``samples``, ``steps``; ``""`` for a pure number).
        meaning: what it sets, in one line.
        low, high: each number (each item of a list) lies in ``[low, high]``; None: unbounded.
        low_open: ``low`` itself is excluded (``> 0``).
        high_open: ``high`` itself is excluded (``< 1``).
        even: integers must be even (a symmetric init pairs the heads).
        choices: the texts it may be (compared in lower case); empty: any.
        min_items: a list holds at least that many values.
        distinct: a list's values are distinct.
        own_option: the option that sets it instead of ``--set`` (``--device``); None: ``--set``.
        says: the range as the error message says it (``one or three non-negative numbers``);
            None: from the bounds.
    """

    name: str
    type: Any
    default: Any
    unit: str
    meaning: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    even: bool = False
    choices: tuple[str, ...] = ()
    min_items: int = 1
    distinct: bool = False
    own_option: str | None = None
    says: str | None = None

    @property
    def is_list(self) -> bool:
        """Whether the field holds a list (``tuple[X, ...]`` or a fixed-length tuple)."""
        return typing.get_origin(self.type) is tuple

    @property
    def item_type(self) -> Any:
        """The type of one value (of a list's items; of an optional field's value)."""
        if self.is_list:
            return typing.get_args(self.type)[0]
        args = [a for a in typing.get_args(self.type) if a is not type(None)]
        return args[0] if args else self.type

    def range_text(self) -> str:
        """The range, in words (the ``range`` column of :func:`field_table`).

        Example:
            >>> FIGURE1.fields["widths"].range_text()
            'positive even integers, at most 16777216'
            >>> FIGURE1.fields["delta"].range_text()
            'a number in (0, 1)'
        """
        base = self.says or self._bounds_text()
        if self.high is not None and self.says is None and not self._interval():
            base += f", at most {_number(self.high)}"
        return base

    def _interval(self) -> bool:
        return self.low is not None and self.high is not None and self.item_type is float

    def _bounds_text(self) -> str:
        many = self.is_list and not self._fixed_length()
        if self.choices:
            return "one of " + ", ".join(self.choices)
        kind = self.item_type
        if self._interval():
            left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
            return (f"numbers in {left}{_number(self.low)}, {_number(self.high)}{right}" if many
                    else f"a number in {left}{_number(self.low)}, {_number(self.high)}{right}")
        if kind is int:
            if self.even:
                return "positive even integers" if many else "a positive even integer"
            word = {1: "positive integers", 0: "non-negative integers"}.get(
                int(self.low) if self.low is not None else -1)
            if many:
                return word or f"integers >= {_number(self.low)}"
            return f">= {_number(self.low)}" if self.low is not None else "an integer"
        sign = ">" if self.low_open else ">="
        return f"{sign} {_number(self.low)}" if self.low is not None else "a number"

    def _fixed_length(self) -> int:
        args = typing.get_args(self.type)
        return 0 if len(args) == 2 and args[1] is Ellipsis else len(args)

    def check(self, flag: str, value: Any) -> Any:
        """``value`` (text, or a Python / TOML value) as this field's type, in its range;
        :class:`InputError` of ``flag`` otherwise.

        Example:
            >>> FIGURE1.fields["steps"].check("--set steps", "1e3")
            1000
            >>> FIGURE1.fields["steps"].check("--set steps", 99999999999999999999)
            Traceback (most recent call last):
            ...
            boundcalc.errors.InputError: --set steps must be <= 16777216 (2**24: the experiments \
hold dense tensors with that many rows, and float32 counts exactly only up to 2**24), got \
99999999999999999999
        """
        if value is None and type(None) in typing.get_args(self.type):
            return None
        typed = convert(flag, self.type, value)
        if typed is None:
            return None
        items = list(typed) if self.is_list else [typed]
        if self.is_list and not self._fixed_length() and len(items) > MAX_ITEMS:
            raise InputError(flag, f"takes at most {MAX_ITEMS} values, got {len(items)}")
        if len(items) < self.min_items:
            raise InputError(flag, f"must be {self.range_text()}, got {_shown(value, typed)}")
        if self.distinct and len(set(items)) != len(items):
            raise InputError(flag, f"must be distinct, got {_shown(value, typed)}")
        checked = [self._item(flag, item, value, typed) for item in items]
        return tuple(checked) if self.is_list else checked[0]

    def _item(self, flag: str, item: Any, given: Any, typed: Any) -> Any:
        shown = _shown(given, typed)
        if self.choices:
            key = str(item).strip().lower()
            if key not in self.choices:
                raise InputError(flag, f"must be {self.range_text()}, got {shown}")
            return key
        if self.item_type is str:  # a number kept as its text (δ of figure 1)
            try:
                number = float(item)
            except ValueError:
                raise InputError(flag, f"must be {self.range_text()}, got {shown}") from None
        else:
            number = item
        if not math.isfinite(number):
            raise InputError(flag, f"must be {self.range_text()}, got {shown}")
        low_fails = self.low is not None and (number <= self.low if self.low_open
                                              else number < self.low)
        high_fails = self.high is not None and (number >= self.high if self.high_open
                                                else number > self.high)
        if low_fails or (self.even and number % 2) or (high_fails and self._interval()):
            raise InputError(flag, f"must be {self.says or self._bounds_text()}, got {shown}")
        if high_fails:
            why = f" {_SIZE_WHY}" if self.high == MAX_SIZE else ""
            raise InputError(flag, f"must be <= {_number(self.high)}{why}, got {shown}")
        return item


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _shown(given: Any, typed: Any) -> str:
    """The value as it was read (``'8,9'`` → ``(8, 9)``), as Python writes it."""
    return repr(typed)


@dataclass(frozen=True)
class Rule:
    """A condition over several fields of a config.

    Attributes:
        name: its name (``rho_ge_nu``).
        inputs: the fields it reads; an error names the first of them the user gave.
        holds: ``config values → whether it holds``.
        message: what fails, read after the flag (``must leave …``); ``{name}`` fields of the
            config are filled in.
        consequence: ``refuse`` (exit 2, before anything is written) or ``not_applicable`` (the
            run is made; the statement ``statement`` is not applicable, and says so).
        statement: the statement that becomes not applicable (``Theorem 1``).
        extra: ``config values → further values`` the message names (``{need}``).
    """

    name: str
    inputs: tuple[str, ...]
    holds: Callable[[Mapping[str, Any]], bool]
    message: str
    consequence: str = "refuse"
    statement: str = ""
    extra: Callable[[Mapping[str, Any]], Mapping[str, Any]] | None = None

    def __post_init__(self) -> None:
        if self.consequence not in CONSEQUENCES:
            raise ValueError(f"a rule's consequence is one of {CONSEQUENCES}, got "
                             f"{self.consequence!r}")

    def text(self, values: Mapping[str, Any]) -> str:
        """The message with the config's values filled in."""
        more = dict(self.extra(values)) if self.extra is not None else {}
        return self.message.format(**{k: _plain(v) for k, v in {**values, **more}.items()})


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return ",".join(_number(v) if isinstance(v, float) else str(v) for v in value)
    return value


@dataclass(frozen=True)
class ExperimentInputs:
    """What the user may set of one experiment: its :class:`Field` rows, presets and rules.

    Attributes:
        name: the experiment (its registry row's name).
        fields: name → row, in the dataclass's order.
        presets: preset → the fields it sets away from the defaults.
        rules: the conditions over several fields.
        first_seed: a seed count k means the seeds first_seed … first_seed + k − 1; None: the
            experiment has no seeds (its ``seeds`` is not a field).
    """

    name: str
    fields: Mapping[str, Field]
    presets: Mapping[str, Mapping[str, Any]]
    rules: tuple[Rule, ...] = ()
    first_seed: int | None = 1
    _own: Mapping[str, str] = field(default_factory=dict, repr=False)

    def preset(self, name: str) -> dict[str, Any]:
        """Every field's value in the preset ``name``.

        Example:
            >>> FIGURE2.preset("quick")["m"], FIGURE2.preset("paper")["seed_batch"]
            (16, 20)
        """
        if name not in self.presets:
            raise InputError("--preset", f"must be {' or '.join(self.presets)}, got {name!r}")
        values = {key: row.default for key, row in self.fields.items()}
        values.update(self.presets[name])
        return values

    def settable(self) -> tuple[str, ...]:
        """The fields ``--set`` takes (not those set by an option of their own)."""
        return tuple(k for k, row in self.fields.items() if row.own_option is None)

    def check(self, preset: str, values: Mapping[str, Any], origin: Mapping[str, str],
              data: str | None = None, refused: Mapping[str, str] | None = None
              ) -> tuple[int | list[int] | None, dict[str, Any]]:
        """``values`` (key → text or value, each given by the option ``origin[key]``) checked
        against the preset ``preset``: every field in its range, every refusing rule holding;
        ``refused`` maps keys that are no setting to why (the registry row's ``refused``).
        Returns ``(seeds, fields)`` as :func:`boundcalc.validators.experiments.configure.
        run_named` takes them: ``seeds`` a count or a list (None: not given), ``fields`` the
        other values, typed.

        Raises:
            InputError: an unknown key, a key set by an option of its own, a value out of its
                field's range, or a refusing rule that fails; the flag is the option and the
                key (``--set nu``), or ``--preset`` when only the preset's values break a rule.

        Example:
            >>> TABLE1.check("quick", {"n_generated": "100"}, {"n_generated": "--set"})
            Traceback (most recent call last):
            ...
            boundcalc.errors.InputError: --set n_generated leaves too few generated images: \
n_generated = 100 must exceed max(Ns) + n_test = 256 (set n_generated, or give --data)
        """
        rest = dict(values)
        refuse_keys(refused, rest, origin)
        seeds: int | list[int] | None = None
        if "seeds" in rest and self.first_seed is not None:
            flag = f"{origin.get('seeds', '--set')} seeds"
            seeds = parse_seeds(rest.pop("seeds"), flag=flag)
            listed = (list(range(self.first_seed, self.first_seed + seeds))
                      if isinstance(seeds, int) else seeds)
            if len(listed) > MAX_ITEMS:
                raise InputError(flag, f"takes at most {MAX_ITEMS} seeds, got {len(listed)}")
            if max(listed) > MAX_SEED:
                raise InputError(flag, f"must be seeds <= {MAX_SEED} (2**32 - 1), got "
                                       f"{max(listed)}")
        checked: dict[str, Any] = {}
        for key, value in rest.items():
            flag = f"{origin.get(key, '--set')} {key}"
            row = self.fields.get(key)
            if row is None:
                raise InputError(origin.get(key, "--set"),
                                 f"has no setting {key!r}; the settings are "
                                 f"{', '.join(self.settable())}")
            if row.own_option is not None:
                raise InputError(flag, f"is set by {row.own_option}")
            checked[key] = row.check(flag, value)
        config = {**self.preset(preset), **checked}
        if seeds is not None:
            config["seeds"] = tuple(listed)
        if data is not None and "data" in self.fields:
            config["data"] = str(data)
        self._refuse(config, {**origin, **({"seeds": origin.get("seeds", "--set")}
                                           if seeds is not None else {})})
        return seeds, checked

    def check_config(self, values: Mapping[str, Any]) -> None:
        """A whole config (a dataclass's fields, as :func:`dataclasses.asdict` gives them)
        checked: every field in its range, every refusing rule holding. Errors name the field
        as ```key``` (the validators' config check, which has no option to name).

        Example:
            >>> FIGURE1.check_config({**FIGURE1.preset("quick"), "steps": 0})
            Traceback (most recent call last):
            ...
            boundcalc.errors.InputError: `steps` must be >= 1, got 0
        """
        for key, row in self.fields.items():
            if key in values and row.own_option is None:
                row.check(f"`{key}`", values[key])
        self._refuse(values, {})

    def failing(self, values: Mapping[str, Any], consequence: str = "not_applicable"
                ) -> list[Rule]:
        """The rules of ``consequence`` that ``values`` (a whole config) break.

        Example:
            >>> [r.name for r in TSWEEP.failing({**TSWEEP.preset("quick"), "delta": "0.5"})]
            ['delta_lt_half']
        """
        return [rule for rule in self.rules if rule.consequence == consequence
                and all(k in values for k in rule.inputs) and not rule.holds(values)]

    def notes(self, preset: str, fields: Mapping[str, Any]) -> list[str]:
        """One line per statement the preset with the checked ``fields`` makes not applicable
        (the rules of consequence ``not_applicable`` that fail), for ``reproduce`` to say before
        it runs.

        Example:
            >>> FIGURE1.notes("quick", {"rho": (2.0, 2.0, 2.0)})  # doctest: +NORMALIZE_WHITESPACE
            ['Theorem 1 is not applicable at these settings: rho = 2,2,2 < nu = 3,3,3 in a
              component: the transported parameters do not lie in Omega_rho']
        """
        config = {**self.preset(preset), **fields}
        return [f"{rule.statement} is not applicable at these settings: {rule.text(config)}"
                for rule in self.failing(config)]

    def _refuse(self, values: Mapping[str, Any], origin: Mapping[str, str]) -> None:
        for rule in self.failing(values, "refuse"):
            key = next((k for k in rule.inputs if k in origin), None)
            if key is not None:
                flag = f"{origin[key]} {key}"
            elif origin:
                flag = "--preset"
            else:
                flag = f"`{rule.inputs[0]}`"
            raise InputError(flag, rule.text(values))


def check_out(out: Any, flag: str = "--out") -> str | None:
    """The run directory ``out`` as text: None stays None (the default folder), an empty or
    blank text is an :class:`InputError` (it would write the run into the current folder).

    Example:
        >>> check_out("runs/a"), check_out(None)
        ('runs/a', None)
        >>> check_out(" ")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --out must name a folder, got ' '
    """
    if out is None:
        return None
    text = str(out)
    if not text.strip() or "\x00" in text:
        raise InputError(flag, f"must name a folder, got {text!r}")
    return text


def field_table(inputs: ExperimentInputs) -> list[dict[str, str]]:
    """One row per field: ``field``, ``type``, ``range``, ``unit``, ``meaning`` (the docs'
    table of the experiments' settings).

    Example:
        >>> field_table(TABLE1)[0]
        {'field': 'dms', 'type': 'tuple[int, ...]', 'range': 'positive integers, at most \
16777216', 'unit': 'units', 'meaning': 'encoder widths d_m swept'}
    """
    return [{"field": row.name, "type": _type_name(row.type), "range": row.range_text(),
             "unit": row.unit, "meaning": row.meaning} for row in inputs.fields.values()]


def _type_name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


# --------------------------------------------------------------------------- the rows


def _rows(*rows: Field) -> dict[str, Field]:
    return {row.name: row for row in rows}


def _split(values: Mapping[str, Any]) -> bool:
    n, held_out = int(values["n"]), int(float(values["val_fraction"]) * int(values["n"]))
    return 1 <= held_out < n


_SPLIT = Rule("split", ("n", "val_fraction"), _split,
              "leaves no training or no validation sample: floor(val_fraction n) = "
              "floor({val_fraction} * {n}) = {held_out} must be >= 1 and < n = {n}",
              extra=lambda v: {"held_out": int(float(v["val_fraction"]) * int(v["n"]))})
_RHO_GE_NU = Rule("rho_ge_nu", ("rho", "nu"),
                  lambda v: all(r >= u for r, u in zip(v["rho"], v["nu"], strict=True)),
                  "rho = {rho} < nu = {nu} in a component: the transported parameters do not lie "
                  "in Omega_rho", "not_applicable", "Theorem 1")
_DELTA_LT_HALF = Rule("delta_lt_half", ("delta",), lambda v: float(v["delta"]) < 0.5,
                      "delta = {delta} >= 1/2: the bound holds with probability 1 - 2 delta",
                      "not_applicable", "Theorem 1")
_NU_POSITIVE = Rule("nu_positive", ("nu",), lambda v: any(float(x) > 0 for x in v["nu"]),
                    "needs a positive component (the bounds' step size is proportional to "
                    "||nu||), got {nu}")

_SEEDS = Field("seeds", tuple[int, ...], tuple(range(1, 11)), "seeds",
               "the seeds (one teacher and one init per seed); --set seeds=K: the first K",
               low=0, high=MAX_SEED, distinct=True)
_DTYPE = Field("dtype", str, "float64", "", "torch floating-point type of every tensor",
               choices=("float32", "float64"))
_DEVICE = Field("device", str, "cpu", "", "torch device", own_option="--device")
_TRIPLE_NN = "one or three non-negative numbers"

#: The fields figure 1 and the T sweep share (figure 1's teacher–student protocol).
_TEACHER_STUDENT = _rows(
    Field("n", int, 5000, "samples", "samples X_1 … X_n (train and validation)", low=1,
          high=MAX_SIZE),
    Field("d", int, 8, "", "token dimension", low=1, high=MAX_SIZE),
    Field("T", int, 16, "tokens", "sequence length", low=1, high=MAX_SIZE),
    Field("teacher_width", int, 8192, "heads", "width M of the teacher f*_M", low=1,
          high=MAX_SIZE),
    Field("anchors", int, 16, "", "anchor points of the teacher's transport map", low=1,
          high=MAX_SIZE),
    Field("nu", tuple[float, float, float], (3.0, 3.0, 3.0), "", "transport budgets "
          "(nu_c, nu_u, nu_w) of the teacher", low=0, says=_TRIPLE_NN),
    Field("rho", tuple[float, float, float], (3.0, 3.0, 3.0), "", "projection radii "
          "(rho_c, rho_u, rho_w) of ProjGD and of the boundary point", low=0, low_open=True,
          says="one or three positive numbers"),
    Field("steps", int, 4000, "steps", "ProjGD steps K", low=1, high=MAX_SIZE),
    Field("step_constant", float, 1.75, "", "step size eta = step_constant / sqrt(K)", low=0,
          low_open=True),
    Field("val_fraction", float, 0.2, "", "share of the samples held out for validation",
          low=0, high=1, low_open=True, high_open=True),
    Field("activation", str, "tanh", "", "activation of teacher and student",
          choices=("tanh", "erf")),
    Field("lin_align", str, "feature", "", "what panel (a)'s boundary point aligns with",
          choices=("feature", "output")),
    Field("delta", str, "0.05", "", "failure probability of the bounds", low=0, high=1,
          low_open=True, high_open=True, says="a number in (0, 1)"),
    _DTYPE,
    _DEVICE,
)
_TEACHER_STUDENT_RULES = (_SPLIT, _NU_POSITIVE, _RHO_GE_NU, _DELTA_LT_HALF)

FIGURE1 = ExperimentInputs(
    name="figure1",
    fields=_rows(
        Field("widths", tuple[int, ...], (8, 16, 32, 64, 128, 256), "heads",
              "student widths m swept", low=2, high=MAX_SIZE, even=True, distinct=False),
        _SEEDS, *_TEACHER_STUDENT.values()),
    presets={"paper": {}, "quick": {"widths": (8, 16, 32, 64), "seeds": (1, 2), "n": 256,
                                    "steps": 100, "teacher_width": 1024}},
    rules=_TEACHER_STUDENT_RULES)

TSWEEP = ExperimentInputs(
    name="tsweep",
    fields=_rows(
        Field("widths", tuple[int, ...], (64, 256), "heads", "the fixed width m of each panel",
              low=2, high=MAX_SIZE, even=True),
        Field("Ts", tuple[int, ...], (4, 16, 64, 256, 1024), "tokens",
              "sequence lengths T swept (at least two, for a slope)", low=1, high=MAX_SIZE,
              min_items=2, distinct=True, says="at least two distinct integers >= 1"),
        _SEEDS, *(row for key, row in _TEACHER_STUDENT.items() if key != "T")),
    presets={"paper": {}, "quick": {"widths": (16, 64), "Ts": (4, 16, 64, 256),
                                    "seeds": (1, 2, 3), "n": 128, "steps": 100,
                                    "teacher_width": 512, "anchors": 8}},
    rules=_TEACHER_STUDENT_RULES)

FIGURE2 = ExperimentInputs(
    name="figure2",
    fields=_rows(
        Field("lags", tuple[int, ...], (4, 16, 72, 96), "steps back",
              "lags L of the AR task swept (sequence length T = L + 1)", low=1,
              high=MAX_SIZE),
        Field("seeds", tuple[int, ...], tuple(range(20)), "seeds",
              "the seeds (data and init); --set seeds=K: the first K", low=0, high=MAX_SEED,
              distinct=True),
        Field("n", int, 5000, "windows", "windows of the series (train and validation)",
              low=1, high=MAX_SIZE),
        Field("val_fraction", float, 0.2, "", "share of the windows held out for validation",
              low=0, high=1, low_open=True, high_open=True),
        Field("m", int, 64, "heads", "width m of both models", low=2, high=MAX_SIZE,
              even=True),
        Field("activation", str, "tanh", "", "activation of both models",
              choices=("tanh", "erf")),
        Field("alpha", float, 1.5, "", "the IndRNN's recurrent init scale (u_i = +-alpha)",
              low=0, low_open=True),
        Field("steps", int, 5000, "steps", "GD steps K", low=1, high=MAX_SIZE),
        Field("lr", float, 0.05, "", "GD step size", low=0, low_open=True),
        Field("ar_coefficient", float, 0.9, "", "coefficient a of x_t = a x_(t-L) + noise "
              "(stationary: |a| < 1)", low=-1, high=1, low_open=True, high_open=True),
        Field("noise_variance", float, 0.1, "", "variance of the AR noise", low=0),
        Field("burn_in", int, 800, "steps", "series values dropped before the first window",
              low=0, high=MAX_SIZE),
        Field("positional_pairs", int, 8, "", "sine/cosine pairs of positional channels "
              "(d = 1 + 2 pairs)", low=1, high=MAX_SIZE),
        Field("base_period", float, 32.0, "steps", "period of the first positional pair",
              low=0, low_open=True),
        Field("dtype", str, "float32", "", "torch floating-point type of every tensor",
              choices=("float32", "float64")),
        Field("seed_batch", int, 1, "seeds", "seeds trained together in one computation",
              low=1, high=MAX_ITEMS),
        _DEVICE),
    presets={"paper": {"seed_batch": 20},
             "quick": {"seeds": (0, 1), "n": 320, "m": 16, "steps": 150}},
    rules=(_SPLIT,), first_seed=0)


def _generated_pool(values: Mapping[str, Any]) -> bool:
    return (values.get("data") is not None
            or int(values["n_generated"]) >= max(values["Ns"]) + (values["n_test"] or 0) + 1)


TABLE1 = ExperimentInputs(
    name="table1",
    fields=_rows(
        Field("dms", tuple[int, ...], (64, 1024, 4096), "units", "encoder widths d_m swept",
              low=1, high=MAX_SIZE),
        Field("Ns", tuple[int, ...], (400, 1200, 10000), "images",
              "training set sizes N swept", low=2, high=MAX_SIZE),
        Field("steps", int, 1000, "epochs", "full-batch GD steps (one epoch each)", low=1,
              high=MAX_SIZE),
        Field("lr", float, 0.1, "", "GD step size", low=0, low_open=True),
        Field("patch", int, 8, "pixels", "side of the square patch that is one token (the "
              "28 x 28 image is padded to a multiple)", low=1, high=28),
        Field("scale", str, "pixel", "", "token scale: pixel (R_X = patch) or unit (R_X = 1)",
              choices=("pixel", "unit")),
        Field("digits", tuple[int, int], (0, 1), "", "the two MNIST digits told apart",
              low=0, high=9, distinct=True),
        Field("n_test", int | None, None, "images", "test images (none: the whole test "
              "split)", low=1, high=MAX_SIZE),
        Field("seed", int, 0, "", "seed of the permutation, the init and the generated images",
              low=0, high=MAX_SEED),
        Field("delta", float, 0.05, "", "failure probability of Theorem 5", low=0, high=1,
              low_open=True, high_open=True),
        Field("dtype", str, "float32", "", "torch floating-point type of every tensor",
              choices=("float32", "float64")),
        Field("data", str | None, None, "", "the MNIST folder or .npz (none: generated "
              "images)", own_option="--data"),
        Field("n_generated", int, 0, "images", "generated images (train and test pool; "
              "without --data)", low=0, high=MAX_SIZE),
        _DEVICE),
    presets={"paper": {}, "quick": {"dms": (16, 32), "Ns": (64, 128), "steps": 300,
                                    "n_test": 128, "dtype": "float64", "n_generated": 257}},
    rules=(Rule("generated_pool", ("n_generated", "Ns", "n_test", "data"), _generated_pool,
                "leaves too few generated images: n_generated = {n_generated} must exceed "
                "max(Ns) + n_test = {need} (set n_generated, or give --data)",
                extra=lambda v: {"need": max(v["Ns"]) + (v["n_test"] or 0)}),),
    first_seed=None)

#: The inputs of every experiment, by name.
EXPERIMENT_INPUTS: dict[str, ExperimentInputs] = {
    inputs.name: inputs for inputs in (FIGURE1, FIGURE2, TABLE1, TSWEEP)}
