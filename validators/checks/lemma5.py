"""Lemma 5: max_j |f_lin(X_j; θ̄) − f*(X_j)| ≤ ε_app with probability ≥ 1 − δ over the init.

:func:`measure_lemma5` builds the teacher f*_M and, for every student seed, the transported θ̄ of
eq. (11), and counts the seeds whose error exceeds ε_app − ε_T (ε_T: the teacher's Monte Carlo
error, see :mod:`.training`): a violation rate ≤ δ is evidence for the lemma. It compares with the
paper route's ε_app (record ``lemma5``) and, with ``routes`` containing ``"tight"``, the tight
route's d-free ε_app (record ``tight.eps_app``).
"""

from __future__ import annotations

import time

import torch
from boundcalc.theory.catalog import FALSIFIER

from boundcalc.calc.api import evaluate
from boundcalc.validation.settings import ValidationSettings

from ..data.inputs import derived_seed, synthetic_inputs
from ..device import resolve_device, resolve_dtype
from ..model import init_params, linearized_output
from ..teacher import build_teacher, transported_params
from ..train import intra_op_threads, small_work_threads
from .training import (
    DEFAULT_TEACHER_DELTA,
    calculator_inputs,
    check_routes,
    check_seeds,
    check_triple,
    measured_record,
)

__all__ = ["measure_lemma5", "cell"]


def measure_lemma5(*, m: int, n: int, d: int, T: int, nu=1.0, delta: float = 0.05,
                   activation: str = "tanh", seeds=200, teacher_seed: int = 0,
                   data_seed: int = 0, teacher_width: int = 8192, anchors: int = 16,
                   teacher_delta: float = DEFAULT_TEACHER_DELTA, device="cpu",
                   dtype="float64", routes=("paper",)) -> list[dict]:
    """Lemma 5: max_j |f_lin(X_j; θ̄) − f*(X_j)| ≤ ε_app w.p. ≥ 1 − δ over the initialisation.

    One teacher (``teacher_seed``) and one data set X (n, T, d) (``data_seed``) are fixed, as in
    the lemma; for every student seed s, θ̄ is built from ``init_params(m, d, seed=s)`` by eq. (11)
    and E_s = max_j |f_lin(X_j; θ̄) − f*_M(X_j)| is measured.

    Returns one record per route of ``routes`` (the same errors E_s): ``lemma5`` for
    ``"paper"`` (ε_app of ``evaluate('lemma5')``, d degrees of freedom) and ``tight.eps_app``
    for ``"tight"`` (the d-free ε_app of ``evaluate('theorem1')``). measured = max_s E_s,
    bound = ε_app, ratio; holds = (conservative violation rate ≤ δ) where a violation is
    E_s > ε_app − ε_T (module docstring). Details: both violation rates, ε_T, the (1 − δ)-quantile
    and mean of E_s, seeds.
    """
    nu_t = check_triple("nu", nu)
    routes = check_routes(routes)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    seed_list = check_seeds(seeds)
    start = time.perf_counter()
    inputs = calculator_inputs(m=m, n=n, d=d, T=T, delta=delta, rho=nu_t, nu=nu_t, steps=1,
                               activation=activation)
    bounds = {"paper": float(evaluate("lemma5", inputs).bound["eps_app"])}
    if "tight" in routes:
        bounds["tight"] = float(evaluate("theorem1", inputs).constants["eps_app"])
    teacher = build_teacher(d, T, seed=teacher_seed, nu=nu_t, anchors=anchors,
                            width=teacher_width, activation=activation, device=dev)
    X = synthetic_inputs(n, T, d, seed=derived_seed(data_seed, "data"), device=dev)
    q = teacher.queries(X)
    target = teacher(X, q).to(dt)
    Xd, qd = X.to(dt), q.to(dt)
    eps_t = teacher.mc_error_bound(n, teacher_delta)
    errors = []
    with intra_op_threads(small_work_threads(n * T * m, dev)):
        for s in seed_list:
            p0 = init_params(m, d, seed=s, dtype=dt, device=dev)
            f_lin = linearized_output(p0, transported_params(p0, teacher), Xd, qd, teacher.act)
            errors.append(float((f_lin - target).abs().max()))
    err = torch.tensor(errors, dtype=torch.float64)
    seconds = time.perf_counter() - start
    records = []
    for route in routes:
        eps_app = bounds[route]
        rate_conservative = float((err > eps_app - eps_t).double().mean())
        rate_vs_teacher = float((err > eps_app).double().mean())
        tight = route == "tight"
        records.append(measured_record(
            "tight.eps_app" if tight else "lemma5", float(err.max()), eps_app,
            holds=rate_conservative <= float(delta),
            statement=("Lemma 5" + (" (d-free attention part, tight route)" if tight else "")
                       + ": max_j |f_lin(X_j; theta_bar) - f*(X_j)| <= eps_app w.p. >= "
                       "1 - delta"),
            violation_rate=rate_conservative, violation_rate_vs_mc_teacher=rate_vs_teacher,
            delta=float(delta), seeds=len(seed_list),
            quantile_1_minus_delta=float(torch.quantile(err, 1 - float(delta))),
            mean_error=float(err.mean()), teacher_mc_error_bound=eps_t,
            teacher_delta=float(teacher_delta), teacher_width=teacher.width,
            label_sup=float(target.abs().max()), m=m, n=n, d=d, T=T, nu=list(nu_t),
            activation=activation, route=route, device=str(dev),
            dtype=str(dt).replace("torch.", ""), seconds=seconds,
        ))
    return records


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate lemma5`` cell of ``seed`` (teacher and data seed): :func:`measure_lemma5`
    over ``settings.rate_seeds`` inits on the routes of the catalog's falsifier row of ``lemma5``
    (paper, then tight)."""
    s = settings
    return measure_lemma5(m=s.m, n=s.n, d=s.d, T=s.T, nu=s.nu, delta=s.delta,
                          activation=s.activation, seeds=s.rate_seeds, teacher_seed=seed,
                          data_seed=seed, teacher_width=s.teacher_width, device=s.device,
                          dtype=s.dtype, routes=FALSIFIER["lemma5"].routes)
