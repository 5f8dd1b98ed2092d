"""The solvers behind ``width``, ``steps`` and every result's ``nonvacuous_from_m``.

* :func:`solve_width` finds the smallest even width m whose width-dependent terms of Theorem 1
  (B·ε_lin + B·ε_app + B·ε_cf) are at most a target: geometric doubling to a feasible m, then
  bisection over even m, so that the answer meets the target and m − 2 does not; the CLI then
  re-checks both with the exact evaluator.
* :func:`nonvacuous_width` finds the smallest even width m at which a statement's bound is
  non-vacuous, min_iterate < min(B², Y²) (the free bound), every other input fixed: a numpy float64
  grid (every even m up to :data:`DENSE_WIDTH`, then :data:`POINTS_PER_OCTAVE` points per octave
  up to 2^62), a vectorised bisection over the even integers between the last vacuous and the
  first non-vacuous grid point, then the exact (mpmath) evaluator confirms m non-vacuous and m − 2
  vacuous (moving the answer, galloping then bisecting, where float64 and mpmath disagree).
* :func:`solve_steps` gives the number of steps K that brings the optimization term under a
  target, in closed form from the theory's constants (‖ν‖, L, B): ⌈(‖ν‖LB/target)²⌉ at the
  theorem's step size η*, or ⌈‖ν‖²/(4η(target − ηL²B²))⌉ at a fixed η.

Nothing here imports torch or pandas.

* :func:`smallest_verified` re-checks a solver's answer with the exact (mpmath) evaluator and
  :func:`compare_text` prints a value with enough digits to compare with its target as it does.

Example:
    >>> solve_width(lambda m: 100.0 / m, 1.0).m
    100
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from boundcalc.errors import InputError, ResultOverflowError

__all__ = ["DENSE_WIDTH", "MAX_WIDTH", "POINTS_PER_OCTAVE", "WIDTH_TERMS", "NonvacuousAnswer",
           "StepsAnswer", "WidthAnswer", "bisect_even", "compare_text", "narrow_even",
           "nonvacuous_width", "point_arguments", "refuse_overflow", "smallest_verified",
           "solve_steps", "solve_width", "width_grid", "width_terms"]

#: ``width`` gives up above this width.
MAX_WIDTH = 2**62

#: Names of the Theorem 1 terms that shrink with the width m.
WIDTH_TERMS: tuple[str, ...] = ("linearization", "approximation", "change_of_feature")


# --------------------------------------------------------------------------- width


@dataclass(frozen=True)
class WidthAnswer:
    """Result of :func:`solve_width`.

    Attributes:
        m: the width found (even).
        value: width terms at ``m`` (search precision).
        previous: width terms at ``m - 2`` (None when ``m == 2``).
        evaluations: how many widths were evaluated.
    """

    m: int
    value: float
    previous: float | None
    evaluations: int


@cache
def _width_function(name: str) -> Callable[..., object]:
    """mpmath function of the argument values giving B·(ε_lin + ε_app + ε_cf) of ``name``: the
    statement's generated function (:func:`boundcalc.calc.api.statement_function`), summed."""
    from boundcalc.calc.evaluator import compiled_statement, statement_function

    keys = compiled_statement(name).keys
    index = [keys.index(f"terms.{k}") for k in WIDTH_TERMS]
    func = statement_function(name, "mpmath", False)

    def width(*args: object) -> object:
        out = func(*args)
        return out[index[0]] + out[index[1]] + out[index[2]]

    return width


def width_terms(name: str, args: dict[str, object], m: int, precision: int = 30) -> float:
    """B·ε_lin + B·ε_app + B·ε_cf of statement ``name`` at width ``m``.

    Args:
        name: ``theorem1``, ``prop1`` or ``remark9`` (statements with these three terms).
        args: mpmath values of every argument name except ``m`` (see :func:`point_arguments`).
        m: the width.
        precision: mpmath digits.
    """
    import mpmath

    from boundcalc.inputs.params import ARGUMENT_NAMES

    func = _width_function(name)
    with mpmath.workdps(precision):
        values = [mpmath.mpf(m) if a == "m" else args[a] for a in ARGUMENT_NAMES]
        return float(func(*values))


def point_arguments(inputs: object, precision: int = 30) -> dict[str, object]:
    """mpmath values of every argument name of validated ``inputs`` (η set to 1: the width
    terms do not contain it)."""
    import mpmath

    from boundcalc.calc.api import mp_arguments

    values = mp_arguments(inputs, precision)  # type: ignore[arg-type]
    with mpmath.workdps(precision):
        values["eta"] = mpmath.mpf(1)
    return values


def solve_width(terms_at: Callable[[int], float], target: float,
                max_width: int = MAX_WIDTH) -> WidthAnswer | None:
    """Smallest even m (doubling, then bisection) with ``terms_at(m) <= target``.

    Doubling from m = 2 stops at the first feasible power of two; bisection over even m then keeps
    ``terms_at(lo) > target >= terms_at(hi)`` until ``hi = lo + 2``. So the answer meets the target
    and m − 2 does not, whether or not the terms are monotone; when they decrease in m (they do for
    every m past a few units) the answer is the smallest such width.

    Args:
        terms_at: width terms as a function of m.
        target: the target (> 0).
        max_width: give up above this width.

    Returns:
        :class:`WidthAnswer`, or None if even ``max_width`` misses the target.

    Example:
        >>> solve_width(lambda m: 100 / m, 0.5).m
        200
    """
    evaluations = 0

    def f(m: int) -> float:
        nonlocal evaluations
        evaluations += 1
        return terms_at(m)

    first = f(2)
    if first <= target:
        return WidthAnswer(2, first, None, evaluations)
    lo, lo_value, hi = 2, first, 4
    while True:
        hi_value = f(hi)
        if hi_value <= target:
            break
        if hi >= max_width:
            return None
        lo, lo_value, hi = hi, hi_value, min(hi * 2, max_width)
    while hi - lo > 2:
        mid = (lo + hi) // 2
        mid -= mid % 2
        mid_value = f(mid)
        if mid_value <= target:
            hi, hi_value = mid, mid_value
        else:
            lo, lo_value = mid, mid_value
    return WidthAnswer(hi, hi_value, lo_value, evaluations)


# --------------------------------------------------------------------------- non-vacuous width

#: :func:`nonvacuous_width` evaluates every even width up to this one ...
DENSE_WIDTH = 8192

#: ... then this many widths per octave (a factor 2) up to :data:`MAX_WIDTH`.
POINTS_PER_OCTAVE = 64

#: Widths evaluated at once by each round of the vectorised bisection.
_REFINE_POINTS = 4096


@dataclass(frozen=True)
class NonvacuousAnswer:
    """Result of :func:`nonvacuous_width`.

    Attributes:
        m: the smallest even width found with min_iterate < min(B², Y²) (exact evaluator).
        evaluation: the exact :class:`~boundcalc.calc.api.Evaluation` at ``m``.
        previous: the exact evaluation at ``m - 2`` (vacuous), None when ``m == 2``.
        grid_points: widths evaluated with numpy (grid and bisection).
        exact_evaluations: widths evaluated with mpmath.
    """

    m: int
    evaluation: object
    previous: object | None
    grid_points: int
    exact_evaluations: int
    #: The last even width of the range that starts at :attr:`m` (exact: ``until`` informative,
    #: ``until + 2`` not), None when every width the scan checks up to ``max_width`` is.
    until: int | None = None
    #: Whether the scan finds informative widths again past ``until + 2`` (float64 grid).
    again: bool = False
    #: The largest width the scan checked.
    checked_to: int = MAX_WIDTH


def width_grid(extra: tuple[int, ...] = ()) -> list[int]:
    """The even widths :func:`nonvacuous_width` scans: 2, 4, ..., :data:`DENSE_WIDTH`, then
    :data:`POINTS_PER_OCTAVE` per octave (rounded to even integers) up to 2^62, plus the even
    widths ``extra`` up to 2^62; sorted, each once.

    Example:
        >>> grid = width_grid()
        >>> grid[:3], grid[4095:4098], grid[-1] == 2**62
        ([2, 4, 6], [8192, 8282, 8372], True)
    """
    widths = set(range(2, DENSE_WIDTH + 1, 2))
    octaves = (MAX_WIDTH // DENSE_WIDTH).bit_length() - 1
    for j in range(1, octaves * POINTS_PER_OCTAVE + 1):
        value = DENSE_WIDTH * 2.0 ** (j / POINTS_PER_OCTAVE)
        widths.add(min(2 * round(value / 2), MAX_WIDTH))
    widths.update(w for w in extra if 2 <= w <= MAX_WIDTH and w % 2 == 0)
    return sorted(widths)


def _grid_nonvacuous(name: str, inputs: object) -> Callable[[list[int]], list[bool]]:
    """Function of a list of widths giving, with the numpy evaluator, whether every condition
    holds and min_iterate is below the free bound min(B², Y²) at each (η* recomputed per width
    when ``inputs.eta`` is None, else the given η kept)."""
    import numpy as np

    from boundcalc.calc.api import FREE_BOUND_KEYS, VERDICT_BOUND, mp_arguments
    from boundcalc.calc.evaluator import compiled_statement, evaluate_grid

    keys = [k for k in FREE_BOUND_KEYS if k in compiled_statement(name).constants]
    conditions = [c.name for c in compiled_statement(name).conditions]

    columns: dict[str, object] = {k: float(v) for k, v in mp_arguments(inputs).items()}  # type: ignore[arg-type]
    if getattr(inputs, "eta", None) is None:
        columns["eta"] = None

    def check(widths: list[int]) -> list[bool]:
        columns["m"] = np.array(widths, dtype=float)
        grid = evaluate_grid(name, columns)
        free = np.minimum.reduce([np.asarray(grid[f"constants.{k}"], dtype=float)
                                  for k in keys])
        with np.errstate(invalid="ignore"):
            ok = grid[f"bound.{VERDICT_BOUND}"] < free
        for cond in conditions:  # informative only where the statement applies
            ok = ok & np.asarray(grid[f"condition.{cond}"], dtype=bool)
        return np.broadcast_to(ok, (len(widths),)).tolist()

    return check


def narrow_even(lo: int, hi: int, check: Callable[[list[int]], list[bool]], target: bool
                ) -> tuple[int, int, int]:
    """Narrow the even widths between ``lo`` (where ``check`` is not ``target``; 0 for none) and
    ``hi`` (where it is) to two neighbours, at most ``_REFINE_POINTS`` widths per call of
    ``check`` (one vectorised evaluation); returns the new ``lo``, ``hi`` and how many widths
    were checked.

    Example:
        >>> narrow_even(0, 64, lambda ws: [w >= 38 for w in ws], True)[:2]
        (36, 38)
        >>> narrow_even(10, 64, lambda ws: [w <= 20 for w in ws], False)[:2]
        (20, 22)
    """
    points = 0
    while hi - lo > 2:  # the even integers strictly between
        inner = (hi - lo) // 2 - 1
        if inner <= _REFINE_POINTS:
            widths = list(range(lo + 2, hi, 2))
        else:
            widths = sorted({lo + 2 * (((hi - lo) // 2) * k // (_REFINE_POINTS + 1))
                             for k in range(1, _REFINE_POINTS + 1)} - {lo, hi})
        points += len(widths)
        found = check(widths)
        if target in found:
            k = found.index(target)
            lo, hi = (widths[k - 1] if k else lo), widths[k]
        else:
            lo = widths[-1]
    return lo, hi, points


def nonvacuous_width(name: str, inputs: object, precision: int = 20,
                     max_width: int = MAX_WIDTH) -> NonvacuousAnswer | None:
    """Smallest even width m at which statement ``name`` is non-vacuous, min_iterate below the
    free bound min(B², Y²) (:attr:`boundcalc.calc.api.Evaluation.free_bound`: the trivial bound on
    Ω_ρ and the loss at initialization), every other input of ``inputs`` fixed (η* recomputed per m
    when η is not given; a given η kept).

    1. numpy (float64) over :func:`width_grid` (the width of ``inputs`` included): the first
       non-vacuous grid width, or None if there is none up to ``max_width``;
    2. bisection over the even integers between it and the vacuous grid width before it, each
       round evaluating up to 4096 widths at once;
    3. the exact evaluator (:func:`boundcalc.calc.api.evaluate`, mpmath at ``precision`` digits)
       confirms m non-vacuous and m − 2 vacuous; where it disagrees with float64 (bounds within
       ~1e-15 of the free bound, or widths past 2^53) the answer moves, galloping then
       bisecting with mpmath.

    The answer is thus exactly non-vacuous with m − 2 exactly vacuous (mpmath); it is the smallest
    such width when the bound crosses the free bound once, and always the first crossing the
    grid sees.

    Returns:
        :class:`NonvacuousAnswer`, or None if no even m up to ``max_width`` is non-vacuous.
    """
    from dataclasses import replace

    from boundcalc.calc.api import VERDICT_BOUND, evaluate

    check = _grid_nonvacuous(name, inputs)
    grid = [w for w in width_grid((getattr(inputs, "m", 2),)) if w <= max_width]
    points = len(grid)
    flags = check(grid)
    if not any(flags):
        first = None
    else:
        index = flags.index(True)
        lo, hi = (grid[index - 1] if index else 0), grid[index]
        # lo vacuous (0: none), hi non-vacuous
        lo, hi, checked = narrow_even(lo, hi, check, True)
        points += checked
        first = hi

    evaluations: dict[int, object] = {}

    def exact(w: int) -> object:
        if w not in evaluations:
            evaluations[w] = evaluate(name, replace(inputs, m=w), precision=precision)  # type: ignore[type-var]
        return evaluations[w]

    def ok(w: int) -> bool:
        ev = exact(w)
        value, free = ev.bound[VERDICT_BOUND], ev.free_bound  # type: ignore[attr-defined]
        return (ev.conditions_hold and value is not None  # type: ignore[attr-defined]
                and free is not None and bool(value < free[1]))

    if first is None:  # float64 found none; the exact evaluator has the last word at the top
        if not ok(grid[-1]):
            return None
        first = grid[-1]
    if ok(first):  # move down while m − 2 is non-vacuous too
        hi, step = first, 2
        lo = hi - 2
        while lo >= 2 and ok(lo):
            hi, step = lo, step * 2
            lo = max(hi - step, 0)
            lo -= lo % 2
    else:  # move up to a non-vacuous width
        lo, step = first, 2
        hi = min(lo + step, max_width)
        while not ok(hi):
            if hi >= max_width:
                return None
            lo, step = hi, step * 2
            hi = min(lo + step, max_width)
    hi = bisect_even(ok, lo, hi)  # lo vacuous (or 0), hi non-vacuous, both exact
    previous = exact(hi - 2) if hi > 2 else None
    until, again, extra = _range_end(check, ok, grid, flags, hi, max_width)
    return NonvacuousAnswer(hi, exact(hi), previous, points + extra, len(evaluations), until,
                            again, grid[-1])


def _range_end(check: Callable[[list[int]], list[bool]], ok: Callable[[int], bool],
               grid: list[int], flags: list[bool], first: int, max_width: int
               ) -> tuple[int | None, bool, int]:
    """Where the informative range that starts at ``first`` ends: (the last even width ``end``
    with ``ok(end)`` and not ``ok(end + 2)``, exact; None when every grid width past ``first``
    is informative), whether the grid finds informative widths again beyond, and the widths
    evaluated with numpy. The grid's first vacuous width past ``first`` brackets the end; a
    vectorised bisection (float64) then the exact evaluator (galloping, then bisecting) place
    it."""
    after = [i for i, w in enumerate(grid) if w > first and not flags[i]]
    if not after:
        return None, False, 0
    j = after[0]
    lo = max(first, grid[j - 1]) if j else first
    hi = grid[j]
    lo, hi, points = narrow_even(lo, hi, check, False)  # lo informative, hi vacuous (float64)
    end = lo  # float64's last informative width; the exact evaluator has the last word
    if ok(end):  # move up while end + 2 is informative too
        lo, step = end, 2
        hi = min(lo + step, max_width)
        while ok(hi):
            if hi >= max_width:
                return None, False, points
            lo, step = hi, step * 2
            hi = min(lo + step, max_width)
    else:  # move down to an informative width (first is one)
        hi, step = end, 2
        lo = max(hi - step, first)
        while not ok(lo):
            hi, step = lo, step * 2
            lo = max(hi - step, first)
    while hi - lo > 2:  # lo informative, hi vacuous, both exact
        mid = (lo + hi) // 2
        mid -= mid % 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    again = any(flags[i] for i in range(len(grid)) if grid[i] > hi)
    return lo, again, points


def bisect_even(ok: Callable[[int], bool], lo: int, hi: int) -> int:
    """Smallest even m in (lo, hi] with ``ok(m)``, given ``ok(hi)`` and not ``ok(lo)`` (lo, hi
    even; ``ok`` monotone on that bracket).

    Example:
        >>> bisect_even(lambda m: m >= 610, 512, 1024)
        610
    """
    while hi - lo > 2:
        mid = (lo + hi) // 2
        mid -= mid % 2
        if ok(mid):
            hi = mid
        else:
            lo = mid
    return hi


# --------------------------------------------------------------------------- steps


@dataclass(frozen=True)
class StepsAnswer:
    """Result of :func:`solve_steps`: ``steps`` K, or ``steps=None`` with ``reason``."""

    steps: int | None
    floor: float
    reason: str = ""


def solve_steps(transport_norm: object, lipschitz: object, envelope: object, target: object,
                eta: object | None = None, precision: int = 30) -> StepsAnswer:
    """Smallest K with optimization term ≤ ``target``, from ‖ν‖, L and B (Theorem 1).

    At η* = ‖ν‖/(2LB√K) the term is ‖ν‖LB/√K, so K = ⌈(‖ν‖LB/target)²⌉. At a fixed η it is
    ‖ν‖²/(4ηK) + ηL²B², which never goes below ``floor`` = ηL²B²: K = ⌈‖ν‖²/(4η(target − floor))⌉
    when target > floor, else no K works.

    Args:
        transport_norm, lipschitz, envelope: ‖ν‖, L, B (numbers or mpmath values).
        target: the target (> 0).
        eta: fixed step size, or None for η*.
        precision: mpmath digits of the closed form.

    Example:
        >>> solve_steps(1, 1, 1, 0.1).steps   # (1·1·1/0.1)² = 100
        100
        >>> solve_steps(1, 1, 1, 0.1, eta=0.5).steps is None   # η L² B² = 0.5 ≥ 0.1
        True
    """
    import mpmath

    with mpmath.workdps(precision):
        nu, lip, env = (mpmath.mpf(str(v)) if not isinstance(v, mpmath.mpf) else v
                        for v in (transport_norm, lipschitz, envelope))
        tgt = mpmath.mpf(str(target))
        if eta is None:
            k = mpmath.ceil((nu * lip * env / tgt) ** 2)
            return StepsAnswer(max(int(k), 1), 0.0)
        step = mpmath.mpf(str(eta))
        floor = step * lip**2 * env**2
        if floor >= tgt:
            return StepsAnswer(None, float(floor),
                               f"the term never drops below eta L^2 B^2 = "
                               f"{mpmath.nstr(floor, 6)}")
        k = mpmath.ceil(nu**2 / (4 * step * (tgt - floor)))
        return StepsAnswer(max(int(k), 1), float(floor))


# --------------------------------------------------------------------------- overflow


def refuse_overflow(name: str, given: Mapping[str, str], evaluation: Any, precision: int,
                    **at: Any) -> None:
    """The solvers' overflow rule: a solver never answers from quantities beyond the float range.

    When ``evaluation`` (of statement ``name`` at the validated ``given`` flags, with the fields
    ``at`` replaced, e.g. ``m=...``) has a quantity that overflows float64
    (:attr:`boundcalc.calc.api.Evaluation.overflow`), raise a one-line
    :class:`~boundcalc.errors.ResultOverflowError` naming the flag(s) without which it does not
    overflow (each tried at its default), else saying that the inputs overflow the float range.
    """
    from dataclasses import replace

    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    over = evaluation.overflow
    if not over:
        return
    culprits = []
    for flag in given:
        rest = {k: v for k, v in given.items() if k != flag}
        try:
            trial = replace(validate(**rest, statement=name), **at)
            if not evaluate(name, trial, precision).overflow:
                culprits.append(f"--{flag}")
        except InputError:
            continue
    names = ", ".join(q.split(".")[-1] for q in over[:4]) + (", ..." if len(over) > 4 else "")
    what = f"({names} beyond the float range); no answer is given"
    if culprits:
        verb = "makes" if len(culprits) == 1 else "make"
        raise ResultOverflowError(", ".join(culprits),
                                  f"{verb} the solver's quantities overflow {what}")
    raise ResultOverflowError("the inputs", f"overflow the float range {what}")


# --------------------------------------------------------------------------- exact re-checks


def smallest_verified(exact: Any, start: int, step: int, goal: Any
                       ) -> tuple[int, Any, Any, Any]:
    """Re-check a solver's answer with the exact (mpmath) evaluator: move up by ``step`` until the
    value meets ``goal``, then down while the next smaller candidate still meets it (the float
    search and the exact evaluation disagree only at ~1e-15 of the target, so 16 moves suffice).

    ``exact(x)`` returns (evaluation, value). Returns (x, evaluation, value, value at x − step or
    None when x is the smallest candidate, ``step``).
    """
    found = start
    ev, value = exact(found)
    for _ in range(16):
        if value <= goal:
            break
        found += step
        ev, value = exact(found)
    previous = None
    for _ in range(16):
        if found <= step:
            break
        previous = exact(found - step)[1]
        if previous > goal:
            break
        found -= step
        ev, value = exact(found)
    return found, ev, value, previous


def compare_text(value: Any, goal: float) -> str:
    """``value`` with 12 significant digits, or as many more as it takes for the shown number
    to compare with ``goal`` as ``value`` does (no "0.1 > 0.1")."""
    import mpmath

    exact, aim = mpmath.mpf(value), mpmath.mpf(goal)
    want = (exact > aim) - (exact < aim)
    for digits in range(12, 60):
        text = mpmath.nstr(exact, digits)
        shown = mpmath.mpf(text)
        if (shown > aim) - (shown < aim) == want:
            return text
    return mpmath.nstr(exact, 60)
