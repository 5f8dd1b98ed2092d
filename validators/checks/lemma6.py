"""Lemma 6: the output envelope |f| ≤ F and the loss-gradient envelope ‖∇R̂‖ ≤ 2LB on Ω_ρ.

:func:`validate_lemma6` ascends |f(X; θ)| and the loss gradient's norm over θ ∈ Ω_ρ, the init, the
inputs and labels |y| ≤ Y, against the calculator's F and 2LB (``evaluate('lemma6')``), and on one
seeded init and synthetic data against the a-posteriori ones.
"""

from __future__ import annotations

import torch

from boundcalc.validation.settings import ValidationSettings

from .adversary import (
    fixed_init_config,
    init_and_data,
    loss_gradient_norm,
    search_loss_gradient,
    search_output,
)
from .records import (
    DEFAULT_SAMPLES,
    DEFAULT_STARTS,
    DEFAULT_STEPS,
    a_posteriori,
    attach_argmax,
    check_args,
    cpu_threads,
    data_record,
    geometry_args,
    record,
    record_settings,
    setup,
)
from .space import THETA_VARS, SearchSpace, random_configuration, select

__all__ = ["validate_lemma6", "cell"]


def validate_lemma6(m: int, d: int, T: int, rho: object, *, delta: object = "0.05",
                    activation: str = "tanh", nu: object = "1", starts: int = DEFAULT_STARTS,
                    steps: int = DEFAULT_STEPS, seed: int = 0, samples: int = DEFAULT_SAMPLES,
                    draws: int = 64, query: str = "free", device: str | torch.device = "cpu",
                    dtype: torch.dtype | str = torch.float64, threads: int | None = 1,
                    keep_argmax: bool = False) -> list[dict]:
    """Lemma 6: envelopes F ≥ sup|f| and 2LB ≥ ‖∇R̂‖ on Ω_ρ.

    Records:
        ``lemma6.output_envelope_F``: ``adversarial`` — ascent on ±f over θ, the symmetric init
        (U(0) in the event ball; the envelope uses f(θ(0)) ≡ 0) and inputs; ``data`` — ascent over
        θ on one seeded init and synthetic inputs (a-posteriori F).
        ``lemma6.loss_gradient_envelope``: ``random`` — ‖∇R̂‖ at ``draws`` random θ ∈ Ω_ρ on the
        seeded init and data with random labels |y| ≤ the a-posteriori Y (a-posteriori 2LB);
        ``adversarial`` —
        ascent over θ, init, inputs and labels |y| ≤ Y (Y = the a-priori label envelope).
    """
    check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation,
               samples=samples)
    dev, dt, act, ev, rho_t, rho_f = setup("lemma6", m=m, d=d, rho=rho, delta=delta,
                                           activation=activation, device=device,
                                           dtype=dtype, nu=nu)
    F_bound, env = ev["bound"]["output_envelope_F"], ev["bound"]["loss_gradient_envelope"]
    # F = min(formula, √m·c_max·σ₀): at its free cap the lemma adds nothing to |f| ≤ cap
    cap = float(ev["constants"]["output_envelope_F_cap"])
    at_cap = {"free_cap": cap, "bound_over_free_cap": float(F_bound) / cap if cap > 0 else None}
    Y = ev["bound"]["label_envelope_Y"]
    u_inf = ev["constants"]["u_inf"]
    settings = record_settings(m, d, T, rho_t, delta, act.name, starts, steps, seed, dev, dt)
    records = []
    with cpu_threads(dev, threads):
        space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query, symmetric=True)
        res = search_output(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                            device=dev)
        rec = record("lemma6.output_envelope_F", "adversarial", res.value, F_bound, settings,
                     query=query, **at_cap)
        records.append(attach_argmax(rec, space, select(res.config, res.argmax), keep_argmax))
        params0, X, q, geo = init_and_data(m, d, T, samples, seed, dt, dev, act)
        post = a_posteriori(m=m, d=d, rho=rho, activation=activation, nu=nu, **geometry_args(geo))
        on_event = geo["u0_max"] <= u_inf
        dspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             query="last", symmetric=True)
        S = 2 * samples
        disp = random_configuration(dspace, S, seed=seed + 4, dtype=dt, device=dev)
        dcfg = fixed_init_config(dspace, params0, X.repeat_interleave(2, dim=0).unsqueeze(1), disp)
        dres = search_output(dspace, act, starts=S, steps=steps, seed=seed, dtype=dt, device=dev,
                             base=dcfg, free=THETA_VARS)
        records.append(data_record("lemma6.output_envelope_F", dres.value, F_bound,
                                   post["output_envelope_F"], settings, geo, on_event,
                                   samples, **at_cap))
        # ‖∇R̂‖ at random θ ∈ Ω_ρ with random labels |y| ≤ Y on the actual init and data
        # labels within the a-posteriori label envelope, so that both envelopes apply
        y_post = post["label_envelope_Y"]
        lspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=max(u_inf, geo["u0_max"]),
                             samples=samples, query="last", symmetric=True, label_max=y_post)
        ldisp = random_configuration(lspace, draws, seed=seed + 5, dtype=dt, device=dev)
        lcfg = fixed_init_config(lspace, params0, X.expand(draws, -1, -1, -1), ldisp)
        with torch.no_grad():
            gnorm = loss_gradient_norm(lspace, lcfg, act)
        records.append(data_record("lemma6.loss_gradient_envelope", float(gnorm.max()), env,
                                   post["loss_gradient_envelope"], settings, geo, on_event,
                                   samples, method="random", draws=draws, label_max=y_post))
        aspace = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, samples=1, query=query,
                             symmetric=True, label_max=Y)
        ares = search_loss_gradient(aspace, act, starts=starts, steps=steps, seed=seed + 6,
                                    dtype=dt, device=dev)
        rec = record("lemma6.loss_gradient_envelope", "adversarial", ares.value, env, settings,
                     query=query, label_max=Y)
        records.append(attach_argmax(rec, aspace, select(ares.config, ares.argmax), keep_argmax))
    return records


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate lemma6`` cell of ``seed``: :func:`validate_lemma6` at the run's sizes and
    search effort (the catalog's falsifier of ``lemma6``)."""
    rho, nu = settings.radii_text()
    return validate_lemma6(settings.m, settings.d, settings.T, rho, nu=nu,
                           **settings.search_kwargs(seed))
