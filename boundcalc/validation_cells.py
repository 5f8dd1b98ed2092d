"""The measurement of one ``boundcalc validate`` cell: one statement at one seed.

A cell is the unit a validation run stores (:class:`boundcalc.rundir.RunDirectory`) and skips when
run again. :func:`cell_runner` maps a (statement, settings, seed) to the validator that measures
what could falsify the statement's bound — the adversarial searches, the training runs, paper
003's encoder, the IndRNN — as a zero-argument callable returning measured-vs-bound records;
:func:`tag_record` and :func:`bound_not_positive` normalise each record before it is stored.
The validators (and torch) are imported only when a cell runs.

Example:
    >>> tag_record({"name": "L", "statement": "claim"}, "lemma2", 0, 1.23456)
    {'statement': 'lemma2', 'seed': 0, 'seconds': 1.235, 'name': 'L', 'claim': 'claim'}
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from boundcalc import validation_settings
from boundcalc.params import InputError
from boundcalc.validation_settings import (
    DEFAULT_INDRNN_ALPHA,
    GENERALIZATION,
    INDRNN,
    STATEMENTS,
    GeneralizationSettings,
    ValidationSettings,
    generalization_data,
)

__all__ = ["bound_not_positive", "cell_runner", "load_training_kernel", "tag_record"]


def _search_kwargs(s: ValidationSettings, seed: int) -> dict[str, Any]:
    """Keyword arguments of an adversarial search at the run's effort level."""
    effort = validation_settings.EFFORT[s.effort]
    return {"delta": s.delta, "activation": s.activation, "starts": effort["starts"],
            "steps": effort["search_steps"], "samples": effort["samples"], "seed": seed,
            "device": s.device, "dtype": s.dtype}


def _training_kwargs(s: ValidationSettings, seed: int) -> dict[str, Any]:
    """Keyword arguments of a ProjGD / ProjSGD run of one seed."""
    return {"m": s.m, "n": s.n, "d": s.d, "T": s.T, "rho": s.rho, "nu": s.nu, "delta": s.delta,
            "activation": s.activation, "steps": s.steps, "seeds": [seed],
            "teacher_width": s.teacher_width, "device": s.device, "dtype": s.dtype}


def cell_runner(statement: str, s: ValidationSettings, seed: int) -> Callable[[], list[dict]]:
    """The measurement of one (statement, seed) cell, as a zero-argument callable."""
    from boundcalc.validators.checks import (
        event,
        lemma2,
        lemma3,
        lemma5,
        lemma6,
        remark3,
        tight,
        training,
    )

    rho = ",".join(str(r) for r in s.rho)
    if statement == GENERALIZATION:
        g = s.extra.get(GENERALIZATION)
        if not isinstance(g, GeneralizationSettings):
            raise InputError("STATEMENT", "generalization needs its settings "
                             "(make_generalization_settings)")
        return lambda: _generalization_cell(g, seed)
    if statement == INDRNN:
        alpha = float(s.extra.get(INDRNN, {}).get("alpha", DEFAULT_INDRNN_ALPHA))
        return lambda: _prop2_cell(s, seed, alpha)
    if statement == "event":
        event_kwargs = {"delta": s.delta, "seeds": s.rate_seeds, "seed": seed * s.rate_seeds,
                        "device": s.device, "dtype": s.dtype}
        return lambda: (event.validate_event(s.m, s.d, **event_kwargs)
                        + tight.validate_head_average_event(s.m, s.d, **event_kwargs))
    if statement == "lemma2":
        return lambda: lemma2.validate_lemma2(s.m, s.d, s.T, rho, **_search_kwargs(s, seed))
    if statement == "lemma3":
        return lambda: lemma3.validate_lemma3(s.m, s.d, s.T, rho, **_search_kwargs(s, seed))
    if statement == "lemma6":
        nu = ",".join(str(v) for v in s.nu)
        return lambda: lemma6.validate_lemma6(s.m, s.d, s.T, rho, nu=nu,
                                              **_search_kwargs(s, seed))
    if statement == "remark3":
        kwargs = _search_kwargs(s, seed)
        kwargs.pop("samples")
        return lambda: remark3.remark3_table(s.m, s.d, rho, **kwargs)
    if statement == "lemma5":
        return lambda: lemma5.measure_lemma5(
            m=s.m, n=s.n, d=s.d, T=s.T, nu=s.nu, delta=s.delta, activation=s.activation,
            seeds=s.rate_seeds, teacher_seed=seed, data_seed=seed,
            teacher_width=s.teacher_width, device=s.device, dtype=s.dtype,
            routes=("paper", "tight"))
    if statement == "tight":
        nu = ",".join(str(v) for v in s.nu)
        return lambda: tight.validate_tight(s.m, s.d, s.T, rho, nu=nu, **_search_kwargs(s, seed))
    if statement == "theorem1":
        return lambda: training.measure_theorem1(**_training_kwargs(s, seed))
    if statement == "prop1":
        return lambda: training.measure_prop1(**_training_kwargs(s, seed),
                                              batch_size=s.batch_size)
    raise InputError("STATEMENT", f"must be one of {', '.join(STATEMENTS)}, all or {INDRNN}, "
                     f"got {statement!r}")


def _generalization_cell(g: GeneralizationSettings, seed: int) -> list[dict]:
    """One ``generalization`` cell (one init seed); one torch thread on the CPU."""
    import torch

    from boundcalc.validators.encoder import validate_cell

    previous = torch.get_num_threads()
    if g.device == "cpu":
        torch.set_num_threads(1)
    try:
        return validate_cell(generalization_data(g.N, g.n_test, g.data), d_m=g.d_m, seed=seed,
                             steps=g.steps, lr=g.lr, delta=g.delta, radii=g.radii,
                             hidden_constants=g.hidden_constants,
                             dtype=getattr(torch, g.dtype), device=g.device)
    finally:
        torch.set_num_threads(previous)


def _prop2_cell(s: ValidationSettings, seed: int, alpha: float) -> list[dict]:
    """One ``prop2`` cell: :func:`boundcalc.validators.indrnn.measure_prop2` on ``samples``
    sequences (the ``--effort`` level's), as measured/bound records; one torch thread on the CPU."""
    import torch

    from boundcalc.validators.indrnn import measure_prop2

    previous = torch.get_num_threads()
    if s.device == "cpu":
        torch.set_num_threads(1)
    try:
        samples = validation_settings.EFFORT[s.effort]["samples"]
        rows = measure_prop2(m=s.m, d=s.d, T=s.T, n=max(2, samples),
                             alpha=alpha, rho=s.rho, seed=seed, activation=s.activation,
                             device=s.device, dtype=s.dtype)
    finally:
        torch.set_num_threads(previous)
    u_max = alpha + s.rho[1] / math.sqrt(s.m)
    return [{"name": f"prop2.{r['quantity']}", "method": "boundary_point",
             "measured": r["measured"], "bound": r["bound"], "ratio": r["ratio"],
             "holds": bool(r["measured"] <= r["bound"]),
             **{k: r[k] for k in ("free_cap", "bound_over_free_cap") if k in r},
             "alpha": alpha, "u_max": u_max,
             "m": s.m, "d": s.d, "T": s.T, "activation": s.activation, "device": s.device,
             "dtype": s.dtype} for r in rows]


def load_training_kernel(s: ValidationSettings) -> None:
    """Build or load the compiled training step for the run's (d, dtype) where it applies (CPU,
    tanh); its backend and, for torch, the reason are then in
    :func:`boundcalc.rundir.environment` (``cpu_kernel``)."""
    import torch

    from boundcalc.validators.model import get_activation
    from boundcalc.validators.train import _kernel_for

    _kernel_for(get_activation(s.activation), getattr(torch, s.dtype), torch.device(s.device),
                s.d)


def bound_not_positive(record: dict) -> dict:
    """A record with conditions (``generalization``) whose bound is <= 0 bounds nothing: it is
    not applicable (``conditions_hold`` false, ``cond_bound_positive`` false, ``bound_positive``
    among ``failing``, ``verdict`` not_guaranteed), has no ratio (None, never ``inf``) and says why
    in ``not_applicable``.
    Other records are returned unchanged."""
    if "conditions_hold" not in record:
        return record
    try:
        bound = float(record["bound"])
    except (KeyError, TypeError, ValueError):
        return record
    if not bound <= 0:
        return record
    form = "printed" if "printed" in str(record.get("method", "")) else "derived"
    sign = "negative" if bound < 0 else "zero"
    failing = [f for f in str(record.get("failing", "none")).split(",")
               if f and f not in ("none", "bound_positive")]
    verdict = ({"verdict": "not_guaranteed", "bound_over_free": None} if "verdict" in record
               else {})
    return {**record, **verdict, "ratio": None, "conditions_hold": False,
            "cond_bound_positive": False,
            "failing": ",".join([*failing, "bound_positive"]),
            "not_applicable": f"not applicable (the {form} bound is {sign}: {bound:.6g} <= 0 "
                              f"bounds no loss, so no ratio)"}


def tag_record(record: dict, statement: str, seed: int, seconds: float) -> dict:
    """Prefix a measurement with its cell; a validator's own ``statement`` text is ``claim``."""
    rest = dict(record)
    claim = rest.pop("statement", None)
    tagged = {"statement": statement, "seed": seed, "seconds": round(seconds, 3), **rest}
    if claim is not None:
        tagged["claim"] = claim
    return tagged
