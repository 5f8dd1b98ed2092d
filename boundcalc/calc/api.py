"""Evaluate a statement at one parameter point: the Python API behind the point commands.

:func:`evaluate` runs the generated code of a statement (:mod:`boundcalc.calc.evaluator`) with
mpmath at ``precision`` significant digits. The inputs (:class:`boundcalc.inputs.params.Inputs`)
are exact decimal strings, so ``δ = 0.05`` is 1/20 rounded once to the working precision, not its
binary float; the conditions are decided exactly with :class:`fractions.Fraction` where every value
is rational. The result, :class:`Evaluation`, carries the verdict against the free bound min(B², Y²)
and the overflow contract (a value beyond float64 is text, never ``inf``); ``to_dict()`` is the JSON
contract. Where the generated code divides by zero (a quantity undefined at the point) each
expression is evaluated on its own from exact sympy values. Nothing here imports torch.

Example:
    >>> from boundcalc.calc.api import evaluate
    >>> from boundcalc.inputs.params import validate
    >>> res = evaluate("theorem1", validate(m=512, n=1000, rho="2"))
    >>> sorted(res.to_dict())
    ['bound', 'conditions', 'constants', 'inputs', 'probability', 'statement', 'terms', 'version']
"""

from __future__ import annotations

import dataclasses
import html
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import mpmath

from boundcalc.calc.evaluator import (
    STEP_KEY,
    CompiledStatement,
    activation_values,
    compiled_statement,
    condition_holds,
    statement_function,
)
from boundcalc.errors import StepSizeUndefinedError
from boundcalc.inputs.calculator_flags import DEFAULT_PRECISION
from boundcalc.inputs.params import ARGUMENT_NAMES, PARAMS, Inputs
from boundcalc.inputs.rules import apply_rules
from boundcalc.version import __version__

__all__ = ["AVERAGE_BOUND", "DEFAULT_MIN_PROBABILITY", "DRIFT_BOUNDS", "FLOAT_MAX",
           "FREE_BOUND_KEYS", "FREE_BOUND_TEXT",
           "INITIAL_LOSS_KEY", "OVERFLOW", "TRIVIAL_KEY", "VERDICTS", "VERDICT_BOUND",
           "ConditionResult", "Evaluation", "Number", "condition_results", "evaluate",
           "free_bound_of",
           "has_verdict", "mp_arguments", "out_of_range", "overflow_text", "overflows",
           "probability_sufficient", "step_source",
           "show_number", "symbol_values", "underflows", "verdict_column"]

#: Verdicts of a statement whose constants include the free bounds B² and Y² (see
#: :attr:`Evaluation.verdict`): every condition holds and min_iterate < min(B², Y²); every
#: condition holds and min_iterate ≥ min(B², Y²) (the bound says nothing: R̂ ≤ B² on Ω_ρ, and
#: min_k R̂(θ_k) ≤ R̂(θ_0) ≤ Y²); a condition fails; a quantity exceeds the float range
#: (:data:`OVERFLOW`, any statement).
VERDICTS: tuple[str, ...] = ("guaranteed", "vacuous", "not_guaranteed", "overflow")

#: Verdict of a result with a quantity beyond the float range (see :func:`overflows`): never a
#: number, never ``inf``; the exact mpmath value is shown as text and no bound is guaranteed.
OVERFLOW = "overflow"

#: Largest finite float64.
FLOAT_MAX = sys.float_info.max

#: The smallest probability at which a bound counts as guaranteed unless ``--min-probability``
#: says otherwise (the default of that row of :data:`boundcalc.inputs.params.PARAMS`): a
#: statement that holds with probability below ½ is more likely false than true at the draw.
DEFAULT_MIN_PROBABILITY = float(PARAMS["min_probability"].default or "0.5")


def probability_sufficient(probability: Any, min_probability: Any) -> bool:
    """Whether ``probability`` (an mpmath or float value; None: undefined) reaches
    ``min_probability``, compared exactly: the threshold is read from its shortest decimal text
    (``0.5``, not its binary float), the probability as held.

    Example:
        >>> probability_sufficient(mpmath.mpf("0.9"), 0.5), probability_sufficient(0.02, 0.5)
        (True, False)
    """
    if probability is None:
        return False
    mp = _exact_number(probability)
    if mp is None or mpmath.isnan(mp):
        return False
    return bool(mp >= mpmath.mpf(repr(float(min_probability))))


def _exact_number(value: Any) -> mpmath.mpf | None:
    """``value`` as an mpmath number; None for None, a bool, a text or anything mpmath cannot
    read (those are never out of the float range)."""
    if value is None or isinstance(value, (bool, str)):
        return None
    try:
        return mpmath.mpf(value) if not isinstance(value, mpmath.mpf) else value
    except (TypeError, ValueError):
        return None


def overflows(value: Any) -> bool:
    """Whether a (finite) mpmath / exact value lies beyond the float64 range, i.e. ``float`` of
    it would be ``inf`` (or it is already infinite).

    Example:
        >>> overflows(mpmath.mpf(10) ** 400), overflows(mpmath.mpf(10) ** 300), overflows(None)
        (True, False, False)
    """
    mp = _exact_number(value)
    if mp is None or mpmath.isnan(mp):
        return False
    return bool(mpmath.isinf(mp) or abs(mp) > FLOAT_MAX)


def underflows(value: Any) -> bool:
    """Whether a (finite) mpmath / exact value is nonzero but below the float64 range, i.e.
    ``float`` of it would be 0.0 (η* = 7.09e-900 is not η = 0).

    Example:
        >>> underflows(mpmath.mpf(10) ** -400), underflows(mpmath.mpf(10) ** -300), underflows(0)
        (True, False, False)
    """
    mp = _exact_number(value)
    if mp is None or not mpmath.isfinite(mp) or mp == 0:
        return False
    return float(mp) == 0.0


def out_of_range(value: Any) -> bool:
    """Whether float64 cannot hold ``value``: it :func:`overflows` or :func:`underflows`; such a
    value is shown as the text of its exact value (:func:`overflow_text`), never as a float."""
    return overflows(value) or underflows(value)


def overflow_text(value: Any) -> str:
    """Exact value of a quantity beyond (or, nonzero, below) the float range in scientific
    notation, as text (7 digits).

    Example:
        >>> overflow_text(mpmath.mpf(2) ** 2048), overflow_text(mpmath.mpf(2) ** -2048)
        ('3.231701e+616', '3.094346e-617')
    """
    mp = mpmath.mpf(value)
    if mpmath.isinf(mp):
        return "-infinite" if mp < 0 else "infinite"
    return mpmath.nstr(mp, 7, min_fixed=1, max_fixed=0, strip_zeros=False)

#: Key of the trivial bound B² among the constants, and of the bound it is compared with.
TRIVIAL_KEY, VERDICT_BOUND = "trivial_bound_B2", "min_iterate"

#: Key of Y² ≥ R̂(θ_0) among the constants: f(θ(0)) = 0 under the symmetric initialization, so the
#: loss at k = 0, an iterate, is mean y² ≤ Y² (``theory.theorem1.initial_loss_bound``).
INITIAL_LOSS_KEY = "initial_loss_bound"

#: The constants that bound min_iterate for free; the smallest one present is the verdict's
#: yardstick (:attr:`Evaluation.free_bound`).
FREE_BOUND_KEYS: tuple[str, ...] = (TRIVIAL_KEY, INITIAL_LOSS_KEY)

#: How the status line names each free bound.
FREE_BOUND_TEXT: dict[str, str] = {
    TRIVIAL_KEY: "B², the largest loss on Ω_ρ",
    INITIAL_LOSS_KEY: "Y², the loss at initialization (f(θ(0)) = 0)",
}

#: The bound on the loss at the average iterate; its yardstick is B² alone (f(θ̂_K) ≠ 0).
AVERAGE_BOUND = "average_iterate"


def free_bound_of(constants: Mapping[str, Any]) -> tuple[str, Any] | None:
    """The smallest of the free bounds (:data:`FREE_BOUND_KEYS`) among ``constants``, as
    ``(key, value)``; None when there is none (the lemmas) or one is undefined (None).

    Example:
        >>> free_bound_of({"trivial_bound_B2": 183.9, "initial_loss_bound": 9.0})
        ('initial_loss_bound', 9.0)
        >>> free_bound_of({"eps_lin": 1.0}) is None
        True
    """
    present = [(k, constants[k]) for k in FREE_BOUND_KEYS if k in constants]
    if not present or any(v is None for _, v in present):
        return None
    return min(present, key=lambda item: item[1])

#: The tight route's bounds on min_iterate, by the name of their drift bound (the gradnorm
#: route's third only there); on a tie the earlier name is the active one.
DRIFT_BOUNDS: dict[str, str] = {"cauchy_schwarz": "min_iterate_cauchy_schwarz",
                                "linear_drift": "min_iterate_linear_drift",
                                "gradient_cauchy_schwarz": "min_iterate_gradient_cauchy_schwarz"}


# --------------------------------------------------------------------------- results

#: A value of an :class:`Evaluation`: mpmath from :func:`evaluate`, a float in its
#: :meth:`~Evaluation.floats` view (mpmath there too beyond the float range).
Number = mpmath.mpf | float


@dataclass(frozen=True)
class ConditionResult:
    """One evaluated hypothesis: ``{name, holds, detail}`` in JSON."""

    name: str
    holds: bool
    detail: str


@dataclass(frozen=True)
class Evaluation:
    """A statement evaluated at one point. ``to_dict()`` is the stable JSON contract; a quantity
    undefined at the point (η* when L·B = 0 and η is given) is None there.

    ``statement`` is the :class:`CompiledStatement` (or any object with ``name``, ``title`` and
    ``summary``, such as a sympy :class:`~boundcalc.theory.statement.Statement`).

    :func:`evaluate` gives mpmath values; :meth:`floats` the same result with Python floats
    (``exact`` then holds the mpmath one, from which the verdict, the overflow list and
    ``to_dict()`` are still decided). :meth:`to_frame` is one row per quantity and condition, and
    a notebook shows the result as HTML tables (``_repr_html_``).

    Example:
        >>> from boundcalc.inputs.params import validate
        >>> res = evaluate("theorem1", validate(m=512, n=1000, rho="2")).floats()
        >>> type(res.bound["min_iterate"]).__name__, res.verdict, res.free_bound
        ('float', 'vacuous', ('initial_loss_bound', 9.0))
        >>> res.to_frame().columns.tolist()
        ['section', 'name', 'value', 'description']
    """

    statement: Any
    inputs: dict[str, Any]
    constants: dict[str, Number | None]
    terms: dict[str, Number | None]
    bound: dict[str, Number | None]
    probability: Number
    conditions: tuple[ConditionResult, ...]
    precision: int
    #: The mpmath evaluation this float view was rounded from (:meth:`floats`); None: this one.
    exact: Evaluation | None = dataclasses.field(default=None, repr=False, compare=False)

    @property
    def conditions_hold(self) -> bool:
        """True when every condition holds (the bound then holds on its event)."""
        return all(c.holds for c in self.conditions)

    @property
    def min_probability(self) -> float:
        """The smallest probability at which a bound counts as guaranteed: the input
        ``min_probability`` (``--min-probability``), :data:`DEFAULT_MIN_PROBABILITY` when the
        inputs do not carry it."""
        value = self.inputs.get("min_probability")
        return DEFAULT_MIN_PROBABILITY if value is None else float(value)  # type: ignore[arg-type]

    @property
    def probability_sufficient(self) -> bool:
        """Whether the statement's probability reaches :attr:`min_probability` (decided on the
        exact value: the threshold's decimal text against the mpmath probability)."""
        if self.exact is not None:
            return self.exact.probability_sufficient
        return probability_sufficient(self.probability, self.min_probability)

    @property
    def guaranteed(self) -> bool:
        """True when the result says something: every condition holds, the probability reaches
        :attr:`min_probability`, no quantity overflows and, for a statement with a
        :attr:`verdict`, min_iterate is below its free bound (the verdict is ``guaranteed``)."""
        return (self.conditions_hold and self.probability_sufficient
                and self.verdict in (None, "guaranteed"))

    @property
    def free_bound(self) -> tuple[str, Number] | None:
        """``(key, value)`` of the smallest bound on min_iterate that holds without the theorem:
        B² (``trivial_bound_B2``) or Y² (``initial_loss_bound``), see :func:`free_bound_of`;
        None for a statement without them. (A :meth:`floats` view gives the float value; the
        verdict is decided on the exact one.)"""
        return free_bound_of(self.constants)

    @property
    def overflow(self) -> tuple[str, ...]:
        """``group.name`` of every quantity (and input σ) beyond the float range, in order."""
        if self.exact is not None:
            return self.exact.overflow
        out = [f"{group}.{k}" for group in ("constants", "terms", "bound")
               for k, v in getattr(self, group).items() if overflows(v)]
        out += [f"inputs.{k}" for k in ("sigma0", "sigma1", "sigma2")
                if overflows(self.inputs.get(k))]
        if overflows(self.probability):
            out.append("probability")
        return tuple(out)

    @property
    def verdict(self) -> str | None:
        """``overflow`` (a quantity exceeds the float range: :attr:`overflow`; no bound is
        guaranteed), else ``not_guaranteed`` (a condition fails), ``vacuous`` (min_iterate ≥
        min(B², Y²): R̂ ≤ B² for every θ and min_k R̂(θ_k) ≤ R̂(θ_0) ≤ Y², so the bound says
        nothing, whatever its probability), ``guaranteed`` (min_iterate < min(B², Y²) and the
        statement's probability reaches :attr:`min_probability`) or ``not_guaranteed`` (below
        it: the bound would say something, but holds too rarely); None for a statement without
        B² (the lemmas) that does not overflow.
        Decided at the working precision (a quantity undefined at the point counts as
        vacuous)."""
        if self.exact is not None:
            return self.exact.verdict
        return self._verdict_of(VERDICT_BOUND, self.free_bound)

    @property
    def average_iterate_verdict(self) -> str | None:
        """:attr:`verdict` of ``average_iterate`` against B² alone (the average iterate's loss is
        not bounded by Y²: f(θ̂_K) ≠ 0); None for a statement without both."""
        if self.exact is not None:
            return self.exact.average_iterate_verdict
        trivial = self.constants.get(TRIVIAL_KEY)
        if AVERAGE_BOUND not in self.bound or TRIVIAL_KEY not in self.constants:
            return None
        return self._verdict_of(AVERAGE_BOUND, None if trivial is None else (TRIVIAL_KEY, trivial))

    def _verdict_of(self, key: str, free: tuple[str, Any] | None) -> str | None:
        if self.overflow:
            return OVERFLOW
        if TRIVIAL_KEY not in self.constants or key not in self.bound:
            return None
        if not self.conditions_hold:
            return "not_guaranteed"
        value = self.bound[key]
        if value is None or free is None or not value < free[1]:
            return "vacuous"  # at or above a free bound, which holds surely: nothing to gate
        return "guaranteed" if self.probability_sufficient else "not_guaranteed"

    @property
    def active_drift_bound(self) -> str | None:
        """On the tight and gradnorm routes, which drift bound gives min_iterate: the smallest
        of :data:`DRIFT_BOUNDS` present (``cauchy_schwarz`` on a tie, then ``linear_drift``);
        None elsewhere (one bound only)."""
        if self.exact is not None:
            return self.exact.active_drift_bound
        present = [(self.bound[key], name) for name, key in DRIFT_BOUNDS.items()
                   if self.bound.get(key) is not None]
        if len(present) < 2:
            return None
        best = present[0]
        for item in present[1:]:
            if item[0] < best[0]:
                best = item
        return best[1]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys statement, inputs, constants, terms, bound, conditions,
        probability, version (floats are finite). A quantity beyond the float range is the text of
        its exact value (``"1.234567e+612"``), and the dict then also has ``verdict: "overflow"``
        and ``overflow``, the list of those quantities (:attr:`overflow`). A nonzero quantity
        below the float range (float64 would round it to 0.0) is the text of its exact value too
        (``"7.094503e-900"``), without changing the verdict."""
        if self.exact is not None:
            return self.exact.to_dict()

        def one(v: Any) -> float | str | None:
            if v is None:
                return None
            return overflow_text(v) if out_of_range(v) else float(v)

        def fl(group: dict[str, Number | None]) -> dict[str, float | str | None]:
            return {k: one(v) for k, v in group.items()}

        over = self.overflow
        head: dict[str, Any] = {"verdict": OVERFLOW, "overflow": list(over)} if over else {}
        inputs = {k: (overflow_text(v) if out_of_range(v) else v) for k, v in self.inputs.items()}
        return {
            **head,
            "statement": {
                "name": self.statement.name,
                "title": self.statement.title,
                "summary": self.statement.summary,
                "guaranteed": self.guaranteed,
                "conditions_hold": self.conditions_hold,
                "probability_sufficient": self.probability_sufficient,
                "route": getattr(self.statement, "route", "") or None,
                "precision_digits": self.precision,
            },
            "inputs": inputs,
            "constants": fl(self.constants),
            "terms": fl(self.terms),
            "bound": fl(self.bound),
            "conditions": [
                {"name": c.name, "holds": c.holds, "detail": c.detail} for c in self.conditions
            ],
            "probability": one(self.probability),
            "version": __version__,
        }


    def floats(self) -> Evaluation:
        """This result with every number a Python float (the inputs already are); a quantity
        beyond the float range, or nonzero below it, keeps its mpmath value (never ``inf``, never
        a 0.0 that is not zero), None stays None. :attr:`exact` holds this mpmath result."""
        if self.exact is not None:
            return self

        def one(v: Any) -> Any:
            return v if v is None or out_of_range(v) else float(v)

        def group(values: dict[str, Any]) -> dict[str, Any]:
            return {k: one(v) for k, v in values.items()}

        return dataclasses.replace(self, constants=group(self.constants),
                                   terms=group(self.terms), bound=group(self.bound),
                                   probability=one(self.probability), exact=self)

    def to_frame(self) -> Any:
        """A :class:`pandas.DataFrame`, one row per input, constant, term, bound, the probability,
        each condition and the verdict: columns ``section``, ``name``, ``value`` (the number as
        held here, the input's value, the condition's ``holds``, the verdict's text) and
        ``description`` (the quantity's description, or the condition's detail)."""
        import pandas as pd

        descriptions = getattr(self.statement, "descriptions", None) or {}
        rows: list[tuple[str, str, Any, str]] = [
            ("inputs", k, v, "") for k, v in self.inputs.items()]
        for group in ("constants", "terms", "bound"):
            rows += [(group, k, v, descriptions.get(k, ""))
                     for k, v in getattr(self, group).items()]
        rows.append(("probability", "probability", self.probability,
                     "probability of the event on which the bound holds"))
        rows += [("conditions", c.name, c.holds, c.detail) for c in self.conditions]
        rows += [("verdict", k, v, "") for k, v in self._verdict_rows()]
        frame = pd.DataFrame(rows, columns=["section", "name", "value", "description"])
        frame.attrs.update(statement=self.statement.name,
                           route=getattr(self.statement, "route", "") or None,
                           version=__version__)
        return frame

    def __repr__(self) -> str:
        """One line: the statement, its route, the verdict (whether the conditions hold, for a
        statement without one) and the bound, 6 significant digits.

        Example:
            >>> from boundcalc.inputs.params import validate
            >>> repr(evaluate("theorem1", validate(m=512, n=1000, rho=2)))[:71]
            'Evaluation(theorem1, route=tight, verdict=vacuous, min_iterate=23.2556,'
        """
        route = getattr(self.statement, "route", "") or ""
        parts = [str(self.statement.name)] + ([f"route={route}"] if route else [])
        parts.append(f"verdict={self.verdict}" if self.verdict is not None
                     else f"conditions_hold={self.conditions_hold}")
        for key, value in self.bound.items():
            if value is None:
                shown = "undefined"
            elif out_of_range(value):
                shown = overflow_text(value)
            else:
                shown = f"{float(value):.6g}"
            parts.append(f"{key}={shown}")
        return f"Evaluation({', '.join(parts)})"

    def _verdict_rows(self) -> list[tuple[str, Any]]:
        rows: list[tuple[str, Any]] = [("guaranteed", self.guaranteed),
                                       ("conditions_hold", self.conditions_hold),
                                       ("probability_sufficient", self.probability_sufficient)]
        if self.verdict is not None:
            rows.append(("verdict", self.verdict))
        if self.free_bound is not None:
            rows.append(("free_bound", self.free_bound[0]))
        if self.average_iterate_verdict is not None:
            rows.append(("average_iterate_verdict", self.average_iterate_verdict))
        if self.active_drift_bound is not None:
            rows.append(("active_drift_bound", self.active_drift_bound))
        if self.overflow:
            rows.append(("overflow", " ".join(self.overflow)))
        return rows

    def _repr_html_(self) -> str:
        """The result as HTML tables (a notebook shows it): the statement, then one table per
        section of :meth:`to_frame` (inputs, constants, terms, bound, probability, conditions,
        verdict), numbers with 6 significant digits, conditions PASS/FAIL."""
        from boundcalc.render.cell_text import DISPLAY_DIGITS, format_value

        def cell(section: str, value: Any) -> str:
            if section == "conditions":
                return "PASS" if value else "FAIL"
            if value is None:
                return "undefined"
            if out_of_range(value):
                return overflow_text(value)
            if isinstance(value, mpmath.mpf):
                value = float(value)
            return format_value(value, DISPLAY_DIGITS)

        frame = self.to_frame()
        frame["value"] = [cell(s, v) for s, v in zip(frame["section"], frame["value"],
                                                      strict=True)]
        route = getattr(self.statement, "route", "") or ""
        title = f"{self.statement.name}: {self.statement.title}"
        parts = [f"<div><p><strong>{html.escape(title)}</strong>"
                 + (f" ({html.escape(route)} route)" if route else "") + "</p>"]
        for section, rows in frame.groupby("section", sort=False):
            table = rows.drop(columns="section").set_index("name")
            if not table["description"].astype(bool).any():
                table = table.drop(columns="description")
            parts.append(f"<p><em>{html.escape(str(section))}</em></p>")
            parts.append(table.to_html(index_names=False))
        return "\n".join(parts) + "</div>"


# --------------------------------------------------------------------------- evaluation


def _mp(value: int | Fraction) -> mpmath.mpf:
    if isinstance(value, int):
        return +mpmath.mpf(value)
    return mpmath.mpf(value.numerator) / value.denominator


def mp_arguments(inputs: Inputs, precision: int = DEFAULT_PRECISION) -> dict[str, mpmath.mpf]:
    """mpmath value of every argument name at ``precision`` digits, each input rounded once;
    ``eta`` is the given step size, or 0 when η is not given (eta* replaces it)."""
    values = inputs.exact_values()
    with mpmath.workdps(precision):
        out = {k: _mp(v) for k, v in values.items() if not k.startswith("sigma")}
        out.update(zip(("sigma0", "sigma1", "sigma2"),
                       activation_values(inputs.activation, precision), strict=True))
        out.setdefault("eta", mpmath.mpf(0))
    return {k: out[k] for k in ARGUMENT_NAMES}


def show_number(value: Any) -> str:
    """A number in a condition's detail: integers as integers, others with 6 significant digits.

    Example:
        >>> show_number(512), show_number(Fraction(1, 20)), show_number(Fraction(1, 3))
        ('512', '0.05', '0.333333')
        >>> show_number(Fraction(10**40)), show_number(2**62)
        ('1e+40', '4.61169e+18')
    """
    if isinstance(value, bool):
        return str(value)
    whole = (value if isinstance(value, int) else value.numerator
             if isinstance(value, Fraction) and value.denominator == 1
             else int(value) if getattr(value, "is_Integer", False) else None)
    if whole is not None:  # past 15 digits an integer shows as a number, not 40 digits
        return str(whole) if abs(whole) < 10**15 else f"{float(whole):.6g}"
    number = float(value)
    if number.is_integer() and abs(number) < 1e15:
        return str(int(number))
    return f"{number:.6g}"


def _check_step_budget(st: CompiledStatement, inputs: Inputs) -> None:
    apply_rules("calculator", {"nu": inputs.nu, "eta_star": st.step and inputs.eta is None})


def condition_results(st: CompiledStatement, inputs: Inputs, args: Mapping[str, mpmath.mpf],
                      precision: int, extra: Mapping[str, int | Fraction] | None = None
                      ) -> tuple[ConditionResult, ...]:
    """Every hypothesis of ``st`` decided at ``inputs`` (:func:`boundcalc.calc.evaluator.
    condition_holds`: exactly where it can, else on the mpmath ``args`` by name), with the
    detail the CLI shows. ``extra``: exact values of symbols beyond the inputs (α)."""
    exact = {**inputs.exact_values(), **(extra or {})}
    out = []
    for cond in st.conditions:
        holds = condition_holds(cond, exact, args, precision)
        source = exact if cond.exact else args
        text = ", ".join(f"{s} = {show_number(source[s])}" for s in cond.symbols)
        detail = f"{cond.requirement} {'holds' if holds else 'FAILS'} ({text})"
        out.append(ConditionResult(cond.name, holds, detail if holds else f"{detail}: {cond.why}"))
    return tuple(out)


def evaluate(name: str, inputs: Inputs, precision: int = DEFAULT_PRECISION) -> Evaluation:
    """Evaluate statement ``name`` at ``inputs`` with mpmath at ``precision`` digits.

    Args:
        name: a key of :data:`boundcalc.theory.registry.BUILDERS` (``theorem1``, ``lemma2`` ...).
        inputs: validated inputs (:func:`boundcalc.inputs.params.validate`).
        precision: significant decimal digits of the mpmath evaluation (≥ 10).

    Returns:
        :class:`Evaluation`. η is the given ``inputs.eta``, else the theorem's step size η* for
        statements that define one; ``inputs["eta"]`` is the η used (or the given η, which such a
        statement does not use), None when neither, and ``inputs["eta_source"]`` says which.

    Raises:
        InputError: η* is needed and undefined: ``--nu`` when ν = 0 (η* would be 0, the input
            layer's rule), a :class:`~boundcalc.errors.StepSizeUndefinedError` naming ``--eta``
            when L·B = 0.
    """
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    st = compiled_statement(name)
    _check_step_budget(st, inputs)
    star = st.step and inputs.eta is None
    func = statement_function(name, "mpmath", star)
    with mpmath.workdps(precision):
        args = mp_arguments(inputs, precision)
        try:
            values = [+mpmath.mpf(v) for v in func(*args.values())]
        except ZeroDivisionError:  # a quantity undefined at this point (eta* when L·B = 0)
            values = _evaluate_exactly(name, inputs, star, precision)
        out = dict(zip(st.keys, values, strict=True))
        result_inputs = inputs.as_dict()
        if star:  # mpmath where float64 cannot hold it (to_dict: its exact text)
            step = out[f"constants.{STEP_KEY}"]
            eta_used = step if out_of_range(step) else float(step)
            source = step_source(st)
        elif inputs.eta is not None:
            eta_used, source = float(args["eta"]), "given"
        else:
            eta_used, source = None, "not used"
        result_inputs["eta"] = eta_used
        result_inputs["eta_source"] = source
        for sym_name in ("sigma0", "sigma1", "sigma2"):  # mpmath where beyond the float range
            sigma = args[sym_name]
            result_inputs[sym_name] = sigma if out_of_range(sigma) else float(sigma)
        constants = {k: out[f"constants.{k}"] for k in st.constants}
        terms = {k: out[f"terms.{k}"] for k in st.terms}
        bound = {k: out[f"bound.{k}"] for k in st.bound}
        probability = out["probability"]
    conditions = condition_results(st, inputs, args, precision)
    return Evaluation(st, result_inputs, constants, terms, bound, probability, conditions,
                      precision)


def step_source(statement: Any) -> str:
    """``eta_source`` of a result whose η is the statement's own step size: η_g on the gradnorm
    route (derivations.md §7.9: ‖ν‖ / (2L√K·ε + 2‖ν‖L²)), the theorem's η* elsewhere.

    Example:
        >>> step_source(compiled_statement("theorem1_gradnorm")), step_source(
        ...     compiled_statement("theorem1"))
        ('gradnorm step size eta_g', 'theorem step size eta*')
    """
    if getattr(statement, "route", "") == "gradnorm":
        return "gradnorm step size eta_g"
    return "theorem step size eta*"


def _evaluate_exactly(name: str, inputs: Inputs, star: bool, precision: int
                      ) -> list[mpmath.mpf | None]:
    """Every expression of ``name`` evaluated one by one from exact sympy values (the slow path,
    taken only when the generated code divides by zero): None for a quantity undefined at this
    point; η* undefined when it is needed is an :class:`InputError` (``--eta``)."""
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.registry import get_statement

    st = get_statement(name)
    values = symbol_values(inputs)
    if star:
        step = sp.sympify(st.constants[STEP_KEY]).xreplace(values)
        if not (step.is_finite and step.is_positive):
            raise StepSizeUndefinedError("--eta", "must be given here: the theorem's step size "
                                                  "eta* = ||nu||/(2 L B sqrt(K)) is undefined, "
                                                  "since L*B = 0")
        values[S.eta] = step
    elif inputs.eta is not None:
        values[S.eta] = sp.Rational(inputs.eta)
    out: list[mpmath.mpf | None] = []
    for expr in st.expressions().values():
        value = sp.N(sp.sympify(expr).xreplace(values), precision + 5)
        out.append(+mpmath.mpf(value) if value.is_real and value.is_finite else None)
    return out


def has_verdict(name: str) -> bool:
    """Whether statement ``name`` reports the trivial bound B² next to min_iterate (Theorem 1,
    Proposition 1, Remark 9 on both routes, Proposition 2), i.e. has a :attr:`Evaluation.verdict`.

    Example:
        >>> has_verdict("theorem1_paper"), has_verdict("lemma2")
        (True, False)
    """
    st = compiled_statement(name)
    return TRIVIAL_KEY in st.constants and VERDICT_BOUND in st.bound


def verdict_column(conditions_hold: Any, bound: Any, free: Any, probability: Any = None,
                   min_probability: Any = DEFAULT_MIN_PROBABILITY):
    """:attr:`Evaluation.verdict` of every row of a grid (numpy): rows whose conditions all hold
    and whose ``bound`` (min_iterate) is below ``free`` (the free bound min(B², Y²)) are
    ``guaranteed`` when their ``probability`` reaches ``min_probability`` (None: not checked),
    else ``not_guaranteed``; the other rows whose conditions hold ``vacuous`` (NaN counts as
    vacuous), the rest ``not_guaranteed``. Returns an array of ``int8`` codes into
    :data:`VERDICTS`.

    Example:
        >>> [VERDICTS[c] for c in verdict_column([True, True, False], [1.0, 3.0, 1.0], 2.0)]
        ['guaranteed', 'vacuous', 'not_guaranteed']
        >>> [VERDICTS[c] for c in verdict_column([True, True], [1.0, 1.0], 2.0, [0.9, 0.02])]
        ['guaranteed', 'not_guaranteed']
    """
    import numpy as np

    with np.errstate(invalid="ignore"):
        below = np.asarray(bound, dtype=float) < np.asarray(free, dtype=float)
        probable = (True if probability is None
                    else np.asarray(probability, dtype=float)
                    >= np.asarray(min_probability, dtype=float))
    ok = np.asarray(conditions_hold, dtype=bool)
    return np.where(ok, np.where(below, np.where(probable, 0, 2), 1), 2).astype(np.int8)


# --------------------------------------------------------------------------- sympy helpers


def symbol_values(inputs: Inputs) -> dict[Any, Any]:
    """Exact sympy values of every argument symbol except η (which may be defaulted), from the
    parameter table: each row's :attr:`~boundcalc.inputs.params.Param.symbols` at its exact value
    (:meth:`~boundcalc.inputs.params.Inputs.exact_values`), the activation's σ₀, σ₁, σ₂ from its
    definition (a preset's are not rational).

    Example:
        >>> from boundcalc.inputs.params import validate
        >>> values = symbol_values(validate(m=64, rho="2,3,1", delta="0.05"))
        >>> {str(s): v for s, v in values.items() if str(s) in ("m", "rho_u", "delta")}
        {'m': 64, 'delta': 1/20, 'rho_u': 3}
    """
    import sympy as sp

    from boundcalc.theory import symbols as S
    from boundcalc.theory.activations import get_activation

    by_name = {s.name: s for s in S.ALL}
    values: dict[Any, Any] = {
        by_name[name]: sp.Integer(v) if isinstance(v, int) else sp.Rational(v.numerator,
                                                                            v.denominator)
        for name, v in inputs.exact_values().items() if name != "eta"}
    act = get_activation(inputs.activation)
    values.update(zip((by_name[name] for name in PARAMS["activation"].symbols),
                      (act.sigma0, act.sigma1, act.sigma2), strict=True))
    return values


def _to_mpf(value: Any) -> mpmath.mpf:
    import sympy as sp

    return mpmath.mpf(sp.N(value, mpmath.mp.dps + 5))


def _condition_detail(cond: Any, values: Mapping[Any, Any], holds: bool) -> str:
    """Detail of a sympy :class:`~boundcalc.theory.statement.Condition` at exact sympy
    ``values`` (integers shown as integers, other numbers with 6 significant digits)."""
    shown = ", ".join(f"{s.name} = {show_number(values[s])}"
                      for s in sorted(cond.relation.free_symbols, key=str))
    text = f"{cond.requirement} {'holds' if holds else 'FAILS'} ({shown})"
    return text if holds else f"{text}: {cond.why}"
