"""The verdict of ``boundcalc validate``: one summary row per measurement, and which rows fail it.

A validator's record holds a measured value, its bound and whether it ``holds``. The exit status
counts a measurement above its bound as a *violation* (exit 1, a warning on stderr) unless the
record says that the conditions its bound is stated under fail (``conditions_hold`` false): then
the bound does not apply and the row is reported as *not applicable*. :func:`summary_rows` keeps
the worst measurement per (statement, name, method) — per seed for records with conditions.

A measurement below its bound says nothing about the bound when the bound is at or above what
holds without the theorem (its *free yardstick*: for a min-iterate training bound
min(B², Y², R̂(θ_0)), B² the largest loss on Ω_ρ, Y² ≥ mean y² the loss at initialization under
the symmetric init, R̂(θ_0) the run's own measured loss at k = 0, which the minimum over the
iterates never exceeds). Records that name such a yardstick carry :func:`yardstick_fields`: the
yardstick, which one binds, bound / yardstick and a ``verdict`` (:data:`MEASURED_VERDICTS`); the
table prints ``holds`` only with it (:func:`holds_text`).

Example:
    >>> is_violation({"holds": False}), is_violation({"holds": False, "conditions_hold": False})
    (True, False)
    >>> fields = yardstick_fields(498.2, {"trivial_bound_B2": 90.8, "initial_loss": 6.3e-4})
    >>> fields["free_bound_key"], fields["verdict"], holds_text(True, fields["verdict"])
    ('initial_loss', 'vacuous', 'true, vacuous')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

#: What a record with conditions says beside ``holds`` about its bound (``generalization``):
#: the verdict against the free yardsticks, the binding one, bound / free bound, and the
#: yardsticks themselves (:func:`boundcalc.validators.encoder.validation_records`).
VERDICT_KEYS: tuple[str, ...] = ("verdict", "free_bound", "free_bound_name", "bound_over_free",
                                 "loss_range", "zero_predictor_loss", "initial_loss")

__all__ = ["MEASURED_VERDICTS", "VERDICT_KEYS", "YARDSTICK_SYMBOL", "YARDSTICK_TEXT",
           "free_yardstick", "holds_text", "is_not_applicable", "is_violation", "summary_rows",
           "verdict_of_rows", "violation_warning", "yardstick_fields"]

#: Verdicts of a measured bound against its free yardstick (:func:`yardstick_fields`):
#: ``vacuous`` — the bound is at or above the yardstick (or not a number), so it says nothing,
#: whether or not its conditions hold; ``not_guaranteed`` — below it, but a condition of the
#: statement fails; ``informative`` — below it with every condition holding.
MEASURED_VERDICTS: tuple[str, ...] = ("informative", "vacuous", "not_guaranteed")

#: What each free yardstick is, as the rows and the docs name it.
YARDSTICK_TEXT: dict[str, str] = {
    "trivial_bound_B2": "B², the largest loss on Ω_ρ (every residual ≤ B)",
    "initial_loss_bound": "Y², bounds the loss at initialization (f(θ(0)) = 0 under the "
                          "symmetric init)",
    "initial_loss": "R̂(θ_0), the run's measured loss at k = 0 (k = 0 is an iterate)",
    "zero_predictor_test_loss": "the held-out loss of the zero predictor",
    "initial_test_loss": "the held-out loss of the model at initialization",
}

#: How a table names each free yardstick (``binds``).
YARDSTICK_SYMBOL: dict[str, str] = {
    "trivial_bound_B2": "B²", "initial_loss_bound": "Y²", "initial_loss": "R̂(θ_0)",
    "zero_predictor_test_loss": "zero predictor", "initial_test_loss": "model at init",
}


def free_yardstick(candidates: Mapping[str, Any]) -> tuple[str, float] | None:
    """``(key, value)`` of the smallest finite number among ``candidates`` (in their order on a
    tie); None when there is none.

    Example:
        >>> free_yardstick({"trivial_bound_B2": 90.8, "initial_loss_bound": 12.5,
        ...                 "initial_loss": None})
        ('initial_loss_bound', 12.5)
    """
    present = [(k, float(v)) for k, v in candidates.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)
               and math.isfinite(float(v))]
    return min(present, key=lambda item: item[1]) if present else None


def yardstick_fields(bound: Any, candidates: Mapping[str, Any],
                     conditions_hold: bool = True, probability: Any = None,
                     min_probability: float = 0.5) -> dict[str, Any]:
    """The fields a record gets from comparing ``bound`` with its free yardstick, the smallest
    of ``candidates`` (:func:`free_yardstick`): ``free_bound``, ``free_bound_key`` (which one
    binds), ``bound_over_free_bound``, ``verdict`` (:data:`MEASURED_VERDICTS`) and
    ``guaranteed`` (the verdict is ``informative``: every condition holds, the bound is below
    the yardstick and the statement's ``probability``, when given, reaches ``min_probability``;
    below it a bound that would be informative is ``not_guaranteed``). Without a yardstick the
    verdict is decided by the conditions (and the probability) alone.

    Example:
        >>> yardstick_fields(1.0, {"trivial_bound_B2": 9.0}, True, probability=0.02)["verdict"]
        'not_guaranteed'
    """
    free = free_yardstick(candidates)
    try:
        value = float(bound)
    except (TypeError, ValueError):
        value = math.nan
    if free is not None and not value < free[1]:
        verdict = "vacuous"
    else:
        probable = probability is None or float(probability) >= min_probability
        verdict = "informative" if conditions_hold and probable else "not_guaranteed"
    out: dict[str, Any] = {"free_bound": None if free is None else free[1],
                           "free_bound_key": None if free is None else free[0],
                           "bound_over_free_bound": (value / free[1] if free is not None
                                                     and free[1] > 0 else None),
                           "verdict": verdict, "guaranteed": verdict == "informative"}
    return out


def holds_text(holds: Any, verdict: str | None) -> str:
    """``holds`` as the table prints it: with the verdict beside it when the row has one
    (``true, vacuous``), so that a measurement under a bound that says nothing is never read as
    support for it."""
    text = "true" if bool(holds) else "false"
    return text if not verdict else f"{text}, {verdict.replace('_', ' ')}"


def verdict_of_rows(verdicts: list[str]) -> str | None:
    """The verdict of several records of one row: ``vacuous`` if any is, else
    ``not_guaranteed`` if any is, else ``informative``; None when none has a verdict."""
    present = [v for v in verdicts if v]
    if not present:
        return None
    for verdict in ("vacuous", "not_guaranteed"):
        if verdict in present:
            return verdict
    return "informative"


def summary_rows(records: list[dict]) -> list[dict]:
    """One row per (statement, name, method): worst measurement, its bound and ratio, holds.

    Records that name their failing conditions (``generalization``) keep one row per seed
    (cell), with ``seed``, ``conditions_hold``, ``failing`` and the ``cond_<name>`` columns; other
    records with ``conditions_hold`` (the training bounds) give it over the group. Records with
    a free yardstick (:func:`yardstick_fields`) give ``initial_loss`` (the smallest measured),
    ``free_bound`` and ``free_bound_key`` (the smallest yardstick), ``bound_over_free_bound``
    (the largest) and ``verdict`` (:func:`verdict_of_rows`). Per-seed rows also take the bound's
    ``verdict`` with its free yardsticks (:data:`VERDICT_KEYS`) from their record where it has
    them.
    """
    groups: dict[tuple[Any, ...], list[dict]] = {}
    for rec in records:
        key: tuple[Any, ...] = (rec.get("statement", ""), rec["name"],
                                str(rec.get("method", "")))
        if "failing" in rec:
            key += (rec.get("seed"),)
        groups.setdefault(key, []).append(rec)
    rows = []
    for key, recs in groups.items():
        statement, name, method = key[:3]
        worst = max(recs, key=lambda r: _finite(r.get("ratio")))
        row = {"statement": statement, "name": name, "method": method, "count": len(recs),
               "measured": worst["measured"], "bound": worst["bound"], "ratio": worst["ratio"],
               "holds": all(bool(r["holds"]) for r in recs)}
        if "a_posteriori_bound" in worst:
            row["a_posteriori_bound"] = worst["a_posteriori_bound"]
        row.update({k: worst[k] for k in ("free_cap", "bound_over_free_cap") if k in worst})
        if "not_applicable" in worst:
            row["not_applicable"] = worst["not_applicable"]
        row.update(_yardstick_row(recs))
        if len(key) == 3 and any("conditions_hold" in r for r in recs):
            row["conditions_hold"] = all(bool(r.get("conditions_hold", True)) for r in recs)
        if len(key) == 4:
            row = {"statement": statement, "seed": key[3], **{k: v for k, v in row.items()
                                                            if k != "statement"}}
            row["conditions_hold"] = all(bool(r["conditions_hold"]) for r in recs)
            row["failing"] = worst.get("failing", "")
            row.update({k: worst[k] for k in VERDICT_KEYS if k in worst})
            row.update({k: v for k, v in worst.items() if k.startswith("cond_")})
        rows.append(row)
    return rows


def _yardstick_row(recs: list[dict]) -> dict[str, Any]:
    """The free-yardstick columns of a summary row (:func:`summary_rows`); none when no record
    has a verdict."""
    verdict = verdict_of_rows([r.get("verdict") for r in recs])
    if verdict is None:
        return {}
    row: dict[str, Any] = {}
    initial = [r["initial_loss"] for r in recs if r.get("initial_loss") is not None]
    if initial:
        row["initial_loss"] = min(initial)
    frees = [r for r in recs if r.get("free_bound") is not None]
    if frees:
        smallest = min(frees, key=lambda r: r["free_bound"])
        row["free_bound"], row["free_bound_key"] = (smallest["free_bound"],
                                                    smallest.get("free_bound_key"))
        ratios = [r["bound_over_free_bound"] for r in frees
                  if r.get("bound_over_free_bound") is not None]
        row["bound_over_free_bound"] = max(ratios, key=_finite) if ratios else None
    row["verdict"] = verdict
    return row


def is_violation(row: dict) -> bool:
    """The exit-status rule: a measurement above its bound (``holds`` false) is a violation,
    unless the row says the bound's conditions fail (``conditions_hold`` false: not applicable).
    Rows without ``conditions_hold`` (the Transformer statements) count whenever ``holds`` is
    false."""
    return not bool(row["holds"]) and bool(row.get("conditions_hold", True))


def is_not_applicable(row: dict) -> bool:
    """A measurement above a bound whose conditions fail: reported, not a violation."""
    return not bool(row["holds"]) and not bool(row.get("conditions_hold", True))


def violation_warning(row: dict) -> str:
    """The one-line stderr warning for a violation (no trailing newline)."""
    where = row.get("statement", "")
    if row.get("seed") is not None:
        where += f" seed {row['seed']}"
    method = f" ({row['method']})" if row.get("method") else ""
    tail = (" with every condition of the statement holding: a finding against it"
            if "conditions_hold" in row else "")
    return (f"warning: VIOLATION {where} {row['name']}{method}: measured {row['measured']:.6g} "
            f"> bound {row['bound']:.6g}{tail}")


def _finite(value: Any) -> float:
    """A ratio as a float for ranking: unreadable → −inf, non-finite → +inf."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return number if math.isfinite(number) else math.inf
