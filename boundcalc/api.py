"""Evaluate the paper's statements for concrete sizes: the Python API behind the CLI.

Two evaluators read the same sympy expressions of :mod:`boundcalc.theory`:

* :func:`evaluate` — one parameter point, mpmath at ``precision`` significant digits (inputs are
  passed as exact decimal strings, so ``δ = 0.05`` is 1/20, not its binary float);
* :func:`evaluate_grid` — numpy-vectorised (``sympy.lambdify`` with common-subexpression
  elimination) over arrays of parameters, for sweeps.

Neither imports torch.

Example:
    >>> from boundcalc.api import evaluate
    >>> from boundcalc.params import validate
    >>> res = evaluate("theorem1", validate(m=512, n=1000, rho="2"))
    >>> sorted(res.to_dict())
    ['bound', 'conditions', 'constants', 'inputs', 'probability', 'statement', 'terms', 'version']
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

import mpmath
import sympy as sp

from boundcalc import __version__
from boundcalc.params import Inputs
from boundcalc.theory import symbols as S
from boundcalc.theory.activations import get_activation
from boundcalc.theory.registry import get_statement
from boundcalc.theory.statement import Statement

#: Argument order of every lambdified function.
ARGUMENTS: tuple[sp.Symbol, ...] = (
    S.m, S.n, S.d, S.T, S.delta, S.rho_c, S.rho_u, S.rho_w, S.nu_c, S.nu_u, S.nu_w,
    S.sigma0, S.sigma1, S.sigma2, S.K, S.eta, S.b, S.eps_mis,
)
ARGUMENT_NAMES: tuple[str, ...] = tuple(s.name for s in ARGUMENTS)

DEFAULT_PRECISION = 20


@dataclass(frozen=True)
class ConditionResult:
    """One evaluated hypothesis: ``{name, holds, detail}`` in JSON."""

    name: str
    holds: bool
    detail: str


@dataclass(frozen=True)
class Evaluation:
    """A statement evaluated at one point. ``to_dict()`` is the stable JSON contract."""

    statement: Statement
    inputs: dict[str, Any]
    constants: dict[str, mpmath.mpf]
    terms: dict[str, mpmath.mpf]
    bound: dict[str, mpmath.mpf]
    probability: mpmath.mpf
    conditions: tuple[ConditionResult, ...]
    precision: int

    @property
    def guaranteed(self) -> bool:
        """True when every condition holds (the bound is then guaranteed on its event)."""
        return all(c.holds for c in self.conditions)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with keys statement, inputs, constants, terms, bound, conditions,
        probability, version (floats are finite)."""
        def fl(group: dict[str, mpmath.mpf]) -> dict[str, float]:
            return {k: float(v) for k, v in group.items()}

        return {
            "statement": {
                "name": self.statement.name,
                "title": self.statement.title,
                "summary": self.statement.summary,
                "guaranteed": self.guaranteed,
                "precision_digits": self.precision,
            },
            "inputs": dict(self.inputs),
            "constants": fl(self.constants),
            "terms": fl(self.terms),
            "bound": fl(self.bound),
            "conditions": [
                {"name": c.name, "holds": c.holds, "detail": c.detail} for c in self.conditions
            ],
            "probability": float(self.probability),
            "version": __version__,
        }


def _exact(text: str | int) -> sp.Rational:
    return sp.Rational(str(text))


def symbol_values(inputs: Inputs) -> dict[sp.Symbol, sp.Expr]:
    """Exact sympy values of every argument symbol except η (which may be defaulted)."""
    act = get_activation(inputs.activation)
    return {
        S.m: sp.Integer(inputs.m), S.n: sp.Integer(inputs.n), S.d: sp.Integer(inputs.d),
        S.T: sp.Integer(inputs.T), S.delta: _exact(inputs.delta),
        S.rho_c: _exact(inputs.rho[0]), S.rho_u: _exact(inputs.rho[1]),
        S.rho_w: _exact(inputs.rho[2]),
        S.nu_c: _exact(inputs.nu[0]), S.nu_u: _exact(inputs.nu[1]), S.nu_w: _exact(inputs.nu[2]),
        S.sigma0: act.sigma0, S.sigma1: act.sigma1, S.sigma2: act.sigma2,
        S.K: sp.Integer(inputs.steps), S.b: sp.Integer(inputs.batch_size),
        S.eps_mis: _exact(inputs.misspecification),
    }


@cache
def _compiled(name: str, module: str):
    """lambdify every expression of a statement once per process (keys, function)."""
    statement = get_statement(name)
    exprs = statement.expressions()
    keys = tuple(exprs)
    func = sp.lambdify(ARGUMENTS, [exprs[k] for k in keys], modules=module, cse=True)
    step = statement.constants.get("theorem_step_size")
    step_func = (sp.lambdify(ARGUMENTS, step, modules=module, cse=True)
                 if step is not None else None)
    return keys, func, step_func


def _to_mpf(value: sp.Expr) -> mpmath.mpf:
    return mpmath.mpf(sp.N(value, mpmath.mp.dps + 5))


def _condition_detail(cond, values: dict[sp.Symbol, sp.Expr], holds: bool) -> str:
    shown = ", ".join(
        f"{s.name} = {sp.N(values[s], 6)}" for s in sorted(cond.relation.free_symbols, key=str)
    )
    status = "holds" if holds else "FAILS"
    text = f"{cond.requirement} {status} ({shown})"
    return text if holds else f"{text}: {cond.why}"


def evaluate(name: str, inputs: Inputs, precision: int = DEFAULT_PRECISION) -> Evaluation:
    """Evaluate statement ``name`` at ``inputs`` with mpmath at ``precision`` digits.

    Args:
        name: a key of :data:`boundcalc.theory.registry.BUILDERS` (``theorem1``, ``lemma2`` ...).
        inputs: validated inputs (:func:`boundcalc.params.validate`).
        precision: significant decimal digits of the mpmath evaluation (≥ 10).

    Returns:
        :class:`Evaluation`; η defaults to the theorem's step size η* when ``inputs.eta`` is None.
    """
    if precision < 10:
        raise ValueError(f"`precision` must be >= 10 digits, got {precision}")
    statement = get_statement(name)
    keys, func, step_func = _compiled(name, "mpmath")
    values = symbol_values(inputs)
    with mpmath.workdps(precision):
        args = [_to_mpf(values[s]) if s is not S.eta else mpmath.mpf(0) for s in ARGUMENTS]
        eta_index = ARGUMENTS.index(S.eta)
        if inputs.eta is not None:
            args[eta_index] = mpmath.mpf(inputs.eta)
        elif step_func is not None:
            args[eta_index] = step_func(*args)
        out = dict(zip(keys, func(*args), strict=True))
        result_inputs = inputs.as_dict()
        result_inputs["eta"] = float(args[eta_index]) if step_func is not None else None
        result_inputs["eta_source"] = (
            "given" if inputs.eta is not None else
            ("theorem step size eta*" if step_func is not None else "not used")
        )
        for sym_name in ("sigma0", "sigma1", "sigma2"):
            result_inputs[sym_name] = float(args[ARGUMENT_NAMES.index(sym_name)])
        constants = {k: +out[f"constants.{k}"] for k in statement.constants}
        terms = {k: +out[f"terms.{k}"] for k in statement.terms}
        bound = {k: +out[f"bound.{k}"] for k in statement.bound}
        probability = +out["probability"]
    conditions = []
    for cond in statement.conditions:
        holds = bool(cond.relation.subs(values))
        conditions.append(ConditionResult(cond.name, holds, _condition_detail(cond, values, holds)))
    return Evaluation(statement, result_inputs, constants, terms, bound, probability,
                      tuple(conditions), precision)


def evaluate_grid(name: str, columns: dict[str, Any]):
    """Vectorised evaluation over broadcastable numpy arrays (sweeps).

    Args:
        name: statement name.
        columns: one entry per argument name of :data:`ARGUMENT_NAMES` (floats or arrays, all
            broadcastable to one shape). ``eta`` may be ``None`` or NaN entries to use η*.

    Returns:
        dict of numpy arrays: every argument, every ``group.key`` expression, and
        ``condition.<name>`` booleans, all of the broadcast shape.
    """
    import numpy as np

    statement = get_statement(name)
    keys, func, step_func = _compiled(name, "numpy")
    missing = [a for a in ARGUMENT_NAMES if a not in columns]
    if missing:
        raise ValueError(f"`columns` is missing {missing}")
    with np.errstate(all="ignore"):
        arrays = [np.asarray(columns[a] if columns[a] is not None else np.nan, dtype=float)
                  for a in ARGUMENT_NAMES]
        arrays = list(np.broadcast_arrays(*arrays))
        eta_index = ARGUMENT_NAMES.index("eta")
        if step_func is not None:
            eta = arrays[eta_index].copy()
            default = np.isnan(eta)
            if default.any():
                eta[default] = np.broadcast_to(step_func(*arrays), eta.shape)[default]
            arrays[eta_index] = eta
        outputs = func(*arrays)
    result = {a: arrays[i] for i, a in enumerate(ARGUMENT_NAMES)}
    shape = arrays[0].shape
    for key, value in zip(keys, outputs, strict=True):
        result[key] = np.broadcast_to(np.asarray(value, dtype=float), shape)
    for cond in statement.conditions:
        cfunc = _condition_function(name, cond.name)
        result[f"condition.{cond.name}"] = np.broadcast_to(np.asarray(cfunc(*arrays)), shape)
    return result


@cache
def _condition_function(name: str, condition: str):
    statement = get_statement(name)
    cond = next(c for c in statement.conditions if c.name == condition)
    return sp.lambdify(ARGUMENTS, cond.relation, modules="numpy")
