"""Definition 1: the event E_U = {max_i ‖U_i(0)‖ ≤ u_∞} has probability ≥ 1 − δ.

:func:`validate_event` draws many seeded initialisations and compares the measured max_i ‖U_i(0)‖
with the calculator's u_∞ (``evaluate('event')``): the violation rate must stay ≤ δ.
"""

from __future__ import annotations

import torch

from boundcalc.validation.settings import ValidationSettings

from ..device import resolve_device, resolve_dtype
from ..model import init_params
from .records import a_priori, check_args, record, record_settings

__all__ = ["validate_event", "cell"]


def validate_event(m: int, d: int, *, delta: object = "0.05", seeds: int = 200, seed: int = 0,
                   device: str | torch.device = "cpu",
                   dtype: torch.dtype | str = torch.float64) -> list[dict]:
    """Definition 1: max_i ‖U_i(0)‖ against u_∞ over ``seeds`` inits (seeds seed, …, seed+seeds−1).

    Under the symmetric init only U_1(0), …, U_{m/2}(0) are independent (the others are copies).
    Records: ``event.violation_rate`` (fraction of seeds with max_i ‖U_i(0)‖ > u_∞, bound δ; also
    the exact rate 1 − P(χ_d ≤ u_∞)^{m/2}) and ``event.u_inf`` (largest max_i ‖U_i(0)‖ seen vs u_∞).
    """
    check_args(m=m, d=d, T=1, starts=1, steps=0, seed=seed, activation="tanh", samples=seeds)
    dev, dt = resolve_device(device), resolve_dtype(dtype)
    ev = a_priori("event", m=m, d=d, rho="1", delta=delta)
    u_inf = ev["bound"]["u_inf"]
    norms = torch.stack([init_params(m, d, seed=s, dtype=dt, device=dev).U.norm(dim=-1).max()
                         for s in range(seed, seed + seeds)])
    rate = float((norms > u_inf).double().mean())
    chi_cdf = torch.special.gammainc(torch.tensor(d / 2.0, dtype=torch.float64),
                                     torch.tensor(u_inf**2 / 2.0, dtype=torch.float64))
    exact = float(1.0 - chi_cdf ** (m // 2))
    settings = record_settings(m, d, None, ("nan",) * 3, delta, None, None, None, seed, dev, dt)
    settings["seeds"] = seeds
    return [
        record("event.violation_rate", "seeds", rate, float(delta), settings,
               exact_rate=exact, u_inf=u_inf),
        record("event.u_inf", "seeds", float(norms.max()), u_inf, settings,
               median_max_norm=float(norms.median())),
    ]


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate event`` cell of ``seed``: Definition 1's radius u_∞ and the tight route's
    head-average radius ū, each over ``settings.rate_seeds`` inits (init seeds from
    ``seed * rate_seeds``), as measured-vs-bound records (the catalog's falsifier of ``event``).
    """
    from .tight import validate_head_average_event

    kwargs = {"delta": settings.delta, "seeds": settings.rate_seeds,
              "seed": seed * settings.rate_seeds, "device": settings.device,
              "dtype": settings.dtype}
    return (validate_event(settings.m, settings.d, **kwargs)
            + validate_head_average_event(settings.m, settings.d, **kwargs))
