"""The verdict of ``boundcalc validate``: one summary row per measurement, and which rows fail it.

A validator's record holds a measured value, its bound and whether it ``holds``. The exit status
counts a measurement above its bound as a *violation* (exit 1, a warning on stderr) unless the
record says that the conditions its bound is stated under fail (``conditions_hold`` false): then
the bound does not apply and the row is reported as *not applicable*. :func:`summary_rows` keeps
the worst measurement per (statement, name, method) — per seed for records with conditions.

Example:
    >>> is_violation({"holds": False}), is_violation({"holds": False, "conditions_hold": False})
    (True, False)
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["VERDICT_KEYS", "is_not_applicable", "is_violation", "summary_rows",
           "violation_warning"]

#: What a record with conditions says beside ``holds`` about its bound (``generalization``):
#: the verdict against the free yardsticks, the binding one, bound / free bound, and the
#: yardsticks themselves (:func:`boundcalc.validators.encoder.validation_records`).
VERDICT_KEYS: tuple[str, ...] = ("verdict", "free_bound", "free_bound_name", "bound_over_free",
                                 "loss_range", "zero_predictor_loss", "initial_loss")


def summary_rows(records: list[dict]) -> list[dict]:
    """One row per (statement, name, method): worst measurement, its bound and ratio, holds.

    Records that carry conditions (``generalization``) keep one row per seed (cell), with
    ``seed``, ``conditions_hold``, ``failing`` and the ``cond_<name>`` columns, and the bound's
    ``verdict`` with its free yardsticks (:data:`VERDICT_KEYS`) where the record has them.
    """
    groups: dict[tuple[Any, ...], list[dict]] = {}
    for rec in records:
        key: tuple[Any, ...] = (rec.get("statement", ""), rec["name"],
                                str(rec.get("method", "")))
        if "conditions_hold" in rec:
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
        if "not_applicable" in worst:
            row["not_applicable"] = worst["not_applicable"]
        if len(key) == 4:
            row = {"statement": statement, "seed": key[3], **{k: v for k, v in row.items()
                                                            if k != "statement"}}
            row["conditions_hold"] = all(bool(r["conditions_hold"]) for r in recs)
            row["failing"] = worst.get("failing", "")
            row.update({k: worst[k] for k in VERDICT_KEYS if k in worst})
            row.update({k: v for k, v in worst.items() if k.startswith("cond_")})
        rows.append(row)
    return rows


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
