"""Measurements against Theorem 1 and Proposition 1 on real ProjGD / ProjSGD runs, and the
teacher–student set-up they share with Lemma 5 (:mod:`.lemma5`).

Every function takes plain arguments (m, n, d, T, rho, nu, delta, activation, steps, seeds, device,
dtype, …) and returns a list of records ``{name, measured, bound, ratio, holds, …details}``; the
bounds come from :func:`boundcalc.calc.api.evaluate`, i.e. the same sympy expressions the calculator
prints.

Teacher Monte Carlo error (see :mod:`boundcalc.validators.teacher` and docs/validation.md). The
labels are the Monte Carlo teacher f*_M (M = ``teacher_width`` fresh init samples), not the exact
expectation f* of Lemma 5. Its error is bounded by the Lemma 5 expression itself at m = 2M:
max_j |f*_M(X_j) − f*(X_j)| ≤ ε_T with probability ≥ 1 − δ_T over the teacher's samples
(``teacher_delta``, default 10⁻⁶). Hence

* :func:`~.lemma5.measure_lemma5` counts a seed as a violation when
  max_j |f_lin(X_j; θ̄) − f*_M(X_j)| > ε_app − ε_T (it cannot certify the lemma's inequality for
  the exact f*); this over-counts, so a rate ≤ δ is evidence for the lemma, and any true
  violation would be counted;
* :func:`measure_theorem1` / :func:`measure_prop1` train on y = f*_M, which are f* up to
  ε_mis ≤ ε_T, and compare with Remark 9's bound at ε_mis = ε_T and the step size η* of the
  realizable Theorem 1 (any η > 0 is admissible in the derivation); the realizable bound is
  reported next to it (``bound_realizable``). Probability of the guarantee: ≥ 1 − 2δ − δ_T.
  One run is compared with **both proof routes** (``routes``): the tight route (statements
  ``theorem1`` / ``prop1`` / ``remark9``, on E_avg) and the paper's (``*_paper``, on E_U), each
  a priori and a posteriori (measured u0_rms = √((1/m)Σ_i ‖U_i(0)‖²) on the tight route,
  u0_max = max_i ‖U_i(0)‖ on the paper route); the step is η* of the first route.
* :func:`~.lemma5.measure_lemma5` compares the same errors with the paper route's ε_app (d degrees
  of freedom, record ``lemma5``) and, with ``routes`` containing ``"tight"``, with the tight route's
  d-free ε_app (``attention_dof="one"``, record ``tight.eps_app``); ε_T is the paper route's in
  both (it does not rely on the d-free claim under test).

Seeds: seed s gives the student initialisation ``init_params(m, d, seed=s)``; its teacher, data
and minibatches use streams derived from s (:func:`boundcalc.validators.data.inputs.derived_seed`),
so the teacher's samples are independent of the student's heads.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from functools import cache

import torch
from boundcalc.theory.catalog import DEFAULT_ROUTE, FALSIFIER, MEASURED_ROUTES, Route, route_key

from boundcalc.calc.evaluator import compile_function
from boundcalc.runs.validation_summary import yardstick_fields
from boundcalc.validation.settings import ValidationSettings

from ..data.inputs import derived_seed, synthetic_inputs
from ..device import resolve_device, resolve_dtype
from ..model import init_params
from ..teacher import Teacher, build_teacher, eps_teacher
from ..train import proj_gd, proj_sgd

__all__ = ["DEFAULT_TEACHER_DELTA", "measure_prop1", "measure_theorem1",
           "prop1_cell", "theorem1_cell"]


DEFAULT_TEACHER_DELTA = 1e-6


# ------------------------------------------------------------------------------------ helpers

def check_triple(name: str, value) -> tuple[float, float, float]:
    """One number or three (ρ or ν of the three blocks c, U, W), each finite and non-negative,
    as three floats, or ValueError naming ``name``.

    >>> check_triple("nu", 1), check_triple("rho", [2, 3, 4])
    ((1.0, 1.0, 1.0), (2.0, 3.0, 4.0))
    """
    values = value if isinstance(value, (tuple, list)) else (value,) * 3
    try:
        out = tuple(float(v) for v in values)
    except (TypeError, ValueError):
        raise ValueError(f"`{name}` must be one or three non-negative numbers, "
                         f"got {value!r}") from None
    if len(out) != 3 or any(not math.isfinite(v) or v < 0 for v in out):
        raise ValueError(f"`{name}` must be one or three non-negative numbers, got {value!r}")
    return out  # type: ignore[return-value]


def check_routes(routes) -> tuple[Route, ...]:
    """The proof routes a measurement reports, distinct, of
    :data:`boundcalc.theory.catalog.MEASURED_ROUTES` (one name or several), or ValueError naming
    `routes`.

    >>> check_routes("paper"), check_routes(["tight", "paper"])
    (('paper',), ('tight', 'paper'))
    """
    out = (routes,) if isinstance(routes, str) else tuple(routes)
    if not out or any(r not in MEASURED_ROUTES for r in out) or len(set(out)) != len(out):
        raise ValueError(f"`routes` must list distinct routes of {MEASURED_ROUTES}, got "
                         f"{routes!r}")
    return out


def check_seeds(seeds) -> list[int]:
    """The seeds of a measurement: a count n (seeds 0 … n−1) or the seeds themselves, at least
    one and none negative, or ValueError naming `seeds`.

    >>> check_seeds(3), check_seeds([5, 7])
    ([0, 1, 2], [5, 7])
    """
    out = list(range(int(seeds))) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not out or any(s < 0 for s in out):
        raise ValueError(f"`seeds` must be a positive count or non-negative seeds, got {seeds!r}")
    return out


def _text(values: Iterable[float]) -> str:
    return ",".join(repr(float(v)) for v in values)


def calculator_inputs(*, m, n, d, T, delta, rho, nu, steps, activation, eta=None, batch_size=1,
                      misspecification=0.0):
    """The calculator's ``Inputs`` for a measurement's arguments:
    :func:`boundcalc.inputs.params.validate` with exact decimal strings (floats by their repr), so
    the bound a measurement is compared to is the one the CLI prints for the same values, after the
    calculator's own checks.

    >>> calculator_inputs(m=8, n=16, d=2, T=3, delta=0.05, rho=(2, 2, 2), nu=(1, 1, 1), steps=10,
    ...                   activation="tanh").m
    8
    """
    from boundcalc.inputs.params import validate

    return validate(m=m, n=n, d=d, T=T, delta=repr(float(delta)), rho=_text(rho), nu=_text(nu),
                    steps=steps, eta=None if eta is None else repr(float(eta)),
                    activation=activation, batch_size=batch_size,
                    misspecification=repr(float(misspecification)))


def _evaluate(name: str, inputs):
    from boundcalc.calc.api import evaluate

    return evaluate(name, inputs)


def measured_record(name: str, measured: float, bound: float, holds: bool | None = None,
                    **details) -> dict:
    """``{name, measured, bound, ratio, holds, **details}`` (ratio = measured / bound, inf for a
    bound ≤ 0; holds = measured ≤ bound unless ``holds`` is given): a record of the training
    and probability measurements.

    >>> measured_record("lemma5", 0.5, 2.0, seeds=4)
    {'name': 'lemma5', 'measured': 0.5, 'bound': 2.0, 'ratio': 0.25, 'holds': True, 'seeds': 4}
    """
    ratio = measured / bound if bound > 0 else math.inf
    return {"name": name, "measured": float(measured), "bound": float(bound),
            "ratio": float(ratio), "holds": bool(measured <= bound if holds is None else holds),
            **details}


def teacher_data(teacher: Teacher, n: int, T: int, d: int, seed: int, dtype, device):
    """Training inputs X (n, T, d) (seeded by ``derived_seed(seed, 'data')``), queries q (n, d)
    and teacher labels y (n,), in ``dtype`` on ``device``: the data set of the training cell of
    ``seed``, drawn in float64 so that it does not depend on the dtype trained in."""
    X = synthetic_inputs(n, T, d, seed=derived_seed(seed, "data"), dtype=torch.float64,
                         device=device)
    q = teacher.queries(X)
    y = teacher(X, q)
    return X.to(dtype), q.to(dtype), y.to(dtype)


# --------------------------------------------------------------------- Theorem 1 / Prop. 1

def _a_posteriori(inputs, eta: float, eps_mis: float, u0_max: float, x_max: float,
                  q_max: float, u0_rms: float | None = None,
                  route: Route = DEFAULT_ROUTE) -> dict:
    """Theorem 1's bounds on ``route`` with measured (u0_max on the paper route, u0_rms on the
    tight route, x_max, q_max, g_max = x_max²) (aposteriori.py).

    Returns {"misspecified": every bound at ε_mis = ``eps_mis``, "realizable": the same at
    ε_mis = 0 (``theorem1_a_posteriori(route)``)}.
    """
    if route == "tight" and u0_rms is None:
        raise ValueError("the tight route's a-posteriori bound needs `u0_rms`")
    import mpmath
    import sympy as sp
    from boundcalc.theory import symbols as S

    from boundcalc.calc.api import symbol_values

    values = {sym: float(sp.N(val, 30)) for sym, val in symbol_values(inputs).items()}
    values.update({S.eta: eta, S.eps_mis: eps_mis, S.u0_max: u0_max, S.x_max: x_max,
                   S.q_max: q_max, S.g_max: x_max**2})
    if u0_rms is not None:
        values[S.u0_rms] = u0_rms
    out = {}
    for label, (keys, syms, func) in _a_posteriori_functions(route).items():
        with mpmath.workdps(20):
            numbers = func(*[mpmath.mpf(values[s]) for s in syms])
        out[label] = {k: float(v) for k, v in zip(keys, numbers, strict=True)}
    return out


@cache
def _a_posteriori_functions(route: Route):
    """Lambdified a-posteriori Theorem 1 bounds on ``route`` (built once per process).

    "misspecified": ``build_bound(eps_mis, a_priori=False, route=route)``; "realizable":
    ``theorem1_a_posteriori(route)``. Each entry is (keys, symbols, mpmath function).
    """
    import sympy as sp
    from boundcalc.theory import symbols as S
    from boundcalc.theory.aposteriori import theorem1_a_posteriori
    from boundcalc.theory.theorem1 import build_bound

    _, _, mis_bound = build_bound(S.eps_mis, a_priori=False, route=route)
    functions = {}
    for label, exprs in (("misspecified", mis_bound),
                         ("realizable", dict(theorem1_a_posteriori(route).bound))):
        keys = list(exprs)
        syms = sorted(set().union(*(sp.sympify(e).free_symbols for e in exprs.values())),
                      key=lambda s: s.name)
        functions[label] = (keys, syms, compile_function(tuple(exprs[k] for k in keys),
                                                         tuple(syms)))
    return functions


def _training_measurement(kind: str, *, m, n, d, T, rho, nu, delta, activation, steps, seeds,
                          eta, batch_size, runs, teacher_width, anchors, teacher_delta,
                          device, dtype, routes=MEASURED_ROUTES) -> list[dict]:
    rho_t, nu_t = check_triple("rho", rho), check_triple("nu", nu)
    if any(r < v for r, v in zip(rho_t, nu_t, strict=True)):
        raise ValueError(f"`rho` must be >= `nu` componentwise for {kind} (Remark 10: the "
                         f"transported parameters must lie in Omega_rho), got rho={rho_t}, "
                         f"nu={nu_t}")
    if int(steps) != steps or steps < 1:
        raise ValueError(f"`steps` must be a positive integer, got {steps}")
    routes = check_routes(routes)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    seed_list = check_seeds(seeds)
    b = 1 if batch_size is None else int(batch_size)
    start = time.perf_counter()

    def inputs(eta_value, misspecification=0.0):
        return calculator_inputs(m=m, n=n, d=d, T=T, delta=delta, rho=rho_t, nu=nu_t,
                                 steps=steps, activation=activation, eta=eta_value,
                                 batch_size=b, misspecification=misspecification)

    # η: the given step, else η* of the first route's realizable statement; every route's bound
    # is evaluated at that one η (the derivation admits any η > 0 on either route)
    first = _evaluate(route_key(kind, routes[0]), inputs(eta))
    step = float(first.inputs["eta"])
    eps_t = eps_teacher(n, d, nu_t, activation, teacher_width, teacher_delta)
    realizable, rigorous = {}, {}
    for route in routes:
        realizable[route] = (first if route == routes[0]
                             else _evaluate(route_key(kind, route), inputs(step)))
        rigorous[route] = _evaluate(route_key("remark9", route), inputs(step, eps_t))
        if kind == "prop1":   # Proposition 1's bound is Theorem 1's (derivations.md §8)
            same = _evaluate(route_key("theorem1", route), inputs(step))
            for key, value in realizable[route].bound.items():
                if abs(float(value) - float(same.bound[key])) > 1e-12 * abs(float(value)):
                    raise RuntimeError(f"prop1 and theorem1 bounds differ for {key} on the "
                                       f"{route} route: the misspecified (Remark 9) bound "
                                       "would not apply to ProjSGD")
    mis_inputs = inputs(step, eps_t)
    per_seed = []
    for s in seed_list:
        teacher = build_teacher(d, T, seed=derived_seed(s, "teacher"), nu=nu_t,
                                anchors=anchors, width=teacher_width, activation=activation,
                                device=dev)
        X, q, y = teacher_data(teacher, n, T, d, s, dt, dev)
        p0 = init_params(m, d, seed=s, dtype=dt, device=dev)
        if kind == "theorem1":
            results = [proj_gd(p0, X, q, y, teacher.act, steps=int(steps), eta=step,
                               rho=rho_t)]
        else:
            results = [proj_sgd(p0, X, q, y, teacher.act, steps=int(steps), eta=step,
                                rho=rho_t, batch_size=b, seed=derived_seed(s, f"minibatch{r}"))
                       for r in range(runs)]
        geometry = {"u0_max": float(p0.U.norm(dim=-1).max()),
                    "u0_rms": float(p0.U.pow(2).sum(-1).mean().sqrt()),
                    "x_max": float(X.norm(dim=-1).max()), "q_max": float(q.norm(dim=-1).max())}
        post = {route: _a_posteriori(mis_inputs, step, eps_t, route=route, **geometry)
                for route in routes}
        per_seed.append({
            "seed": s,
            "min_iterate": sum(r.min_loss for r in results) / len(results),
            "average_iterate": sum(r.average_loss for r in results) / len(results),
            "initial_loss": results[0].initial_loss,
            "final_loss": sum(r.final_loss for r in results) / len(results),
            "max_radius": [max(r.radius[:, j].max().item() for r in results) for j in range(3)],
            **geometry,
            "a_posteriori": {route: post[route]["misspecified"] for route in routes},
            "a_posteriori_realizable": {route: post[route]["realizable"] for route in routes},
            "runs": len(results),
            "seconds_per_step": sum(r.seconds for r in results) / (len(results) * int(steps)),
        })
    records = []
    initial = min(r["initial_loss"] for r in per_seed)
    for route in routes:
        statement = route_key(kind, route)
        conditions = rigorous[route].conditions_hold and realizable[route].conditions_hold
        for key in ("min_iterate", "average_iterate"):
            bound = float(rigorous[route].bound[key])
            worst = max(per_seed, key=lambda r, k=key: r[k])
            ratios_post = [r[key] / r["a_posteriori"][route][key] for r in per_seed]
            free = _free_bounds(rigorous[route], key, initial)
            chance = 1 - 2 * float(delta) - float(teacher_delta)  # the record's probability
            judged = yardstick_fields(bound, free, conditions, chance)
            post_verdict = yardstick_fields(worst["a_posteriori"][route][key], free,
                                            conditions, chance)["verdict"]
            records.append(measured_record(
                f"{statement}.{key}", worst[key], bound,
                holds=all(r[key] <= bound for r in per_seed),
                statement=(("E over minibatches of " if kind == "prop1" else "")
                           + ("min_{k<K} R(theta_k)" if key == "min_iterate"
                              else "R(average iterate)") + f" <= {statement} bound"),
                route=route,
                bound_realizable=float(realizable[route].bound[key]),
                a_posteriori_bound=worst["a_posteriori"][route][key],
                a_posteriori_ratio=max(ratios_post),
                a_posteriori_holds=all(r <= 1 for r in ratios_post),
                eps_mis_teacher=eps_t, teacher_delta=float(teacher_delta),
                teacher_width=int(teacher_width),
                probability=chance,
                terms={k: float(v) for k, v in rigorous[route].terms.items()},
                initial_loss=initial,
                trivial_bound_B2=float(rigorous[route].constants["trivial_bound_B2"]),
                initial_loss_bound=float(rigorous[route].constants["initial_loss_bound"]),
                **judged, conditions_hold=conditions, a_posteriori_verdict=post_verdict,
                eta=step, eta_source=first.inputs["eta_source"],
                eta_route=routes[0], K=int(steps),
                batch_size=b if kind == "prop1" else n, runs=runs if kind == "prop1" else 1,
                seeds=len(seed_list), per_seed=per_seed, m=m, n=n, d=d, T=T, rho=list(rho_t),
                nu=list(nu_t), delta=float(delta), activation=activation, device=str(dev),
                dtype=str(dt).replace("torch.", ""), seconds=time.perf_counter() - start,
            ))
    return records


def _free_bounds(evaluation, key: str, initial_loss: float) -> dict[str, float]:
    """The bounds on the loss of ``key`` that hold without the theorem (its free yardsticks):
    for ``min_iterate`` B² (every residual ≤ B on Ω_ρ), Y² (the symmetric init gives
    f(θ(0)) = 0, so R̂(θ_0) = mean y² ≤ Y², ε_mis included) and the run's measured R̂(θ_0)
    (k = 0 is an iterate, so min_k R̂(θ_k) ≤ R̂(θ_0)); for ``average_iterate`` B² alone
    (f(θ̂_K) ≠ 0)."""
    free = {"trivial_bound_B2": float(evaluation.constants["trivial_bound_B2"])}
    if key == "min_iterate":
        free["initial_loss_bound"] = float(evaluation.constants["initial_loss_bound"])
        free["initial_loss"] = float(initial_loss)
    return free


def measure_theorem1(*, m: int, n: int, d: int, T: int, rho=2.0, nu=1.0, delta: float = 0.05,
                     activation: str = "tanh", steps: int = 4000, seeds=1,
                     eta: float | None = None, teacher_width: int = 8192, anchors: int = 16,
                     teacher_delta: float = DEFAULT_TEACHER_DELTA, device="cpu",
                     dtype="float64", routes=MEASURED_ROUTES) -> list[dict]:
    """Theorem 1: a real ProjGD run on a teacher–student problem against both routes' bounds.

    Per seed s: teacher (seed ``derived_seed(s, 'teacher')``), inputs X (n, T, d), labels
    y = f*_M(X), student θ(0) = ``init_params(m, d, seed=s)``; K = ``steps`` ProjGD steps on Ω_ρ
    with η = η* of the first route's statement (``evaluate('theorem1')``, the tight route, by
    default) unless ``eta`` is given; every route's bound is evaluated at that η.

    Returns two records per route of ``routes`` (default ``("tight", "paper")``), named by the
    route's statement: ``theorem1.min_iterate`` / ``theorem1_paper.min_iterate``
    (min_{k<K} R̂(θ_k)) and ``….average_iterate`` (R̂((1/K)Σ_{k<K} θ_k)), each with ``route``:
    measured = the worst seed; bound = Remark 9's bound of the route at ε_mis = ε_T (the
    teacher's MC error), holds iff every seed is below it; ``bound_realizable`` = Theorem 1 as
    stated; ``a_posteriori_bound`` = the route's expressions with the seed's measured geometry
    (u0_rms = √((1/m)Σ_i ‖U_i(0)‖²) on the tight route, u0_max = max_i ‖U_i(0)‖ on the paper
    route, max token norm, max query norm and g_max = x_max²; theory/aposteriori.py), and
    ``a_posteriori_ratio`` the worst measured/a-posteriori ratio. Each record is also judged
    against its free yardstick (:func:`_free_bounds`; B² alone for the average iterate):
    ``initial_loss`` (the run's measured R̂(θ_0), smallest over the seeds), ``trivial_bound_B2``,
    ``initial_loss_bound`` (Y²), ``free_bound``, ``free_bound_key``, ``bound_over_free_bound``,
    ``verdict`` / ``a_posteriori_verdict``
    (:data:`boundcalc.runs.validation_summary.MEASURED_VERDICTS`), ``conditions_hold`` and
    ``guaranteed`` (the verdict is ``informative``).
    """
    return _training_measurement(
        "theorem1", m=m, n=n, d=d, T=T, rho=rho, nu=nu, delta=delta, activation=activation,
        steps=steps, seeds=seeds, eta=eta, batch_size=None, runs=1,
        teacher_width=teacher_width, anchors=anchors, teacher_delta=teacher_delta,
        device=device, dtype=dtype, routes=routes)


def measure_prop1(*, m: int, n: int, d: int, T: int, rho=2.0, nu=1.0, delta: float = 0.05,
                  activation: str = "tanh", steps: int = 4000, seeds=1, batch_size: int = 8,
                  runs: int = 4, eta: float | None = None, teacher_width: int = 8192,
                  anchors: int = 16, teacher_delta: float = DEFAULT_TEACHER_DELTA,
                  device="cpu", dtype="float64", routes=MEASURED_ROUTES) -> list[dict]:
    """Proposition 1: ProjSGD (minibatch ``batch_size``) against both routes' bounds, in
    expectation.

    As :func:`measure_theorem1` (records ``prop1.*``, ``prop1_paper.*``), with ``runs``
    independent minibatch sequences per seed; the
    measured value of a seed is the mean over its runs of min_{k<K} R̂(θ_k) (resp. R̂ at the
    average iterate) — the empirical version of the expectation that Proposition 1 bounds.
    R̂(θ_k) is the full-batch loss, evaluated at every step.
    """
    if int(runs) != runs or runs < 1:
        raise ValueError(f"`runs` must be a positive integer, got {runs}")
    if int(batch_size) != batch_size or not 1 <= batch_size <= n:
        raise ValueError(f"`batch_size` must be an integer in [1, n={n}], got {batch_size}")
    return _training_measurement(
        "prop1", m=m, n=n, d=d, T=T, rho=rho, nu=nu, delta=delta, activation=activation,
        steps=steps, seeds=seeds, eta=eta, batch_size=batch_size, runs=int(runs),
        teacher_width=teacher_width, anchors=anchors, teacher_delta=teacher_delta,
        device=device, dtype=dtype, routes=routes)


def theorem1_cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate theorem1`` cell of ``seed``: :func:`measure_theorem1`, one ProjGD run (the
    catalog's falsifier of ``theorem1`` and of ``remark9``), on the routes of its row."""
    return measure_theorem1(**settings.training_kwargs(seed), routes=FALSIFIER["theorem1"].routes)


def prop1_cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate prop1`` cell of ``seed``: :func:`measure_prop1`, ProjSGD runs of minibatch
    ``settings.batch_size`` (the catalog's falsifier of ``prop1``), on the routes of its row."""
    return measure_prop1(**settings.training_kwargs(seed), batch_size=settings.batch_size,
                         routes=FALSIFIER["prop1"].routes)
