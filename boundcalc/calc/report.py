"""The result of a point evaluation as the CLI reports it: the verdict and where each input
came from.

:func:`with_verdict` adds to :meth:`boundcalc.calc.api.Evaluation.to_dict` the verdict against the
free bound min(B², Y²) and the smallest even width at which the bound is non-vacuous
(:func:`boundcalc.calc.solvers.nonvacuous_width`); :func:`input_sources` says, for each input shown,
whether it was given (naming its flag from :data:`boundcalc.inputs.params.PARAMS`), defaulted,
computed (η*) or taken from the activation, and whether the statement uses it at all.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from boundcalc.calc.api import has_verdict
from boundcalc.calc.evaluator import compiled_statement
from boundcalc.calc.solvers import nonvacuous_width
from boundcalc.inputs.params import PARAMS, Param

__all__ = ["input_sources", "with_verdict"]

#: The parameter each key of ``Evaluation.to_dict()["inputs"]`` comes from (σ₀, σ₁, σ₂ from the
#: activation).
_PARAM_OF_COLUMN: dict[str, Param] = {
    **{col: p for p in PARAMS.values() for col in p.columns},
    **{sym: PARAMS["activation"] for sym in PARAMS["activation"].symbols},
}


def input_sources(statement: str, given: Mapping[str, str], inputs: Mapping[str, Any]
                   ) -> dict[str, str]:
    """Source of each shown input (given flag, default, η*, activation) and whether the statement
    uses it at all."""
    st = compiled_statement(statement)
    used = st.used
    sources = {}
    for key in inputs:
        param = _PARAM_OF_COLUMN.get(key)
        if param is None:
            continue
        if key.startswith("sigma"):
            text = f"from --activation {inputs.get('activation', '')}"
        elif param.name in given:
            text = f"given ({param.flag})"
        elif key == "eta" and inputs.get("eta_source") not in (None, "not used"):
            text = str(inputs["eta_source"])
        else:
            text = "default"
        if key not in ("activation", "eta") and param.symbols and key not in used:
            text += ", not used by this statement"
        if key == "eta" and "eta" not in used and not st.step:
            text += ", not used by this statement"
        sources[key] = text
    return sources


def with_verdict(name: str, result: Any, inputs: Any, precision: int,
                 search: Any = None) -> dict[str, Any]:
    """``result.to_dict()`` with, for a statement with the free bounds B² and Y², the top-level
    keys ``verdict`` (:attr:`boundcalc.calc.api.Evaluation.verdict`), ``free_bound`` (the key of the
    constant it compares min_iterate with, the smaller of ``trivial_bound_B2`` and
    ``initial_loss_bound``), ``average_iterate_verdict`` (average_iterate against B²),
    ``nonvacuous_from_m`` (the smallest even m with min_iterate below the free bound, every other
    input fixed, every condition holding: :func:`boundcalc.calc.solvers.nonvacuous_width`; None
    if none up to 2^62, so None where a condition fails at every m), ``nonvacuous_until_m`` (the
    last even m of that range, where it ends: m + 2 is vacuous again, exact; None when every
    width scanned up to ``nonvacuous_checked_to_m`` is informative — a scan, not a proof of
    monotonicity) and ``nonvacuous_again`` (whether the scan finds informative widths again past
    that end), these three after ``active_drift_bound`` (tight route; else None), all right
    after ``statement``.
    ``search``: a function of no argument giving that width (int or None) in place of
    :func:`boundcalc.calc.solvers.nonvacuous_width` (prop2 at another α).

    Example:
        >>> from boundcalc.calc.api import evaluate
        >>> from boundcalc.inputs.params import validate
        >>> inputs = validate(m=512, n=1000, rho="2")
        >>> data = with_verdict("theorem1_paper", evaluate("theorem1_paper", inputs), inputs, 20)
        >>> data["verdict"], data["free_bound"], data["nonvacuous_from_m"]
        ('vacuous', 'initial_loss_bound', 10465658)
    """
    data = result.to_dict()
    over = data.pop("overflow", None)
    data.pop("verdict", None)
    if result.verdict is None:
        return data
    head: dict[str, Any] = {"statement": data.pop("statement"), "verdict": result.verdict}
    if over:
        head["overflow"] = over
    if has_verdict(name):
        free = result.free_bound
        head["free_bound"] = None if free is None else free[0]
        head["average_iterate_verdict"] = result.average_iterate_verdict
        until: int | None = None
        again: bool | None = None
        checked: int | None = None
        if over:
            head["nonvacuous_from_m"] = None
        elif search is not None:
            head["nonvacuous_from_m"] = search()
        else:
            answer = nonvacuous_width(name, inputs, precision)
            head["nonvacuous_from_m"] = None if answer is None else answer.m
            if answer is not None:
                until, again, checked = answer.until, answer.again, answer.checked_to
        head["active_drift_bound"] = None if over else result.active_drift_bound
        head["nonvacuous_until_m"] = until
        head["nonvacuous_again"] = again
        head["nonvacuous_checked_to_m"] = checked
    return {**head, **data}
