"""What every adversarial measurement shares: its arguments, the calculator's bounds, its records.

The a-priori bounds come from :func:`boundcalc.calc.api.evaluate` (``'event'``, ``'lemma2'``,
``'lemma3'``, ``'lemma6'``), so the validators and the CLI read the same expressions; the
a-posteriori ones (:func:`a_posteriori`) are those of :mod:`boundcalc.theory.aposteriori` at the
measured init and input geometry (measured max_i ‖U_i(0)‖, token norms, query norms,
g_max = x_max²; derivations.md §10).

Every measurement returns a list of records (plain dicts) with at least

    name, method, measured, bound, ratio = measured / bound, holds = measured <= bound,

the settings (m, d, T, rho_c, rho_u, rho_w, delta, activation, starts, steps, seed, device, dtype)
and method-specific fields. ``holds`` uses no tolerance. A record with ``holds=False`` carries the
maximising configuration in ``argmax`` (plain lists), to be reported as a counterexample.
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Iterator
from typing import NamedTuple

import sympy as sp
import torch

from boundcalc.calc.api import evaluate
from boundcalc.calc.evaluator import compile_function
from boundcalc.inputs.params import validate

from ..device import resolve_device, resolve_dtype
from ..model import Activation, get_activation
from .space import Config, SearchSpace, config_to_lists

__all__ = ["DEFAULT_SAMPLES", "DEFAULT_STARTS", "DEFAULT_STEPS", "a_posteriori", "a_priori"]


#: Default search effort (CI-sized); the documented grid run uses stronger settings.
DEFAULT_STARTS = 16
DEFAULT_STEPS = 100
DEFAULT_SAMPLES = 8


# ----------------------------------------------------------------------------------------------
# arguments, bounds and records
# ----------------------------------------------------------------------------------------------

def rho_text(rho: object) -> str:
    """ρ as the calculator's text: one number or three comma-separated numbers, so a
    measurement passes the radii it was given to :func:`boundcalc.inputs.params.validate` unchanged.

    >>> rho_text(2), rho_text(2.5), rho_text((1, 2.0, 3))
    ('2', '2.5', '1,2.0,3')
    """
    if isinstance(rho, (int, float)) and not isinstance(rho, bool):
        return repr(float(rho)) if isinstance(rho, float) else str(rho)
    if isinstance(rho, str):
        return rho
    try:
        parts = list(rho)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"`rho` must be a number or (rho_c, rho_u, rho_w), got {rho!r}") from None
    if len(parts) != 3:
        raise ValueError(f"`rho` must be a number or (rho_c, rho_u, rho_w), got {rho!r}")
    return ",".join(repr(float(p)) if isinstance(p, float) else str(p) for p in parts)


@functools.cache
def _evaluate_cached(statement: str, m: int, d: int, rho: str, delta: str, activation: str,
                     nu: str) -> dict:
    inputs = validate(m=m, d=d, rho=rho, delta=delta, activation=activation, nu=nu)
    return evaluate(statement, inputs).to_dict()


def a_priori(statement: str, *, m: int, d: int, rho: object, delta: object = "0.05",
             activation: str = "tanh", nu: object = "1") -> dict:
    """``evaluate(statement, validate(...)).to_dict()`` (cached): constants and bounds.

    Raises:
        boundcalc.inputs.params.InputError naming the flag for invalid m, d, ρ, δ, activation.
    """
    return _evaluate_cached(statement, int(m), int(d), rho_text(rho), str(delta),
                            str(activation), str(nu))


_POSTERIORI_KEYS = ("lipschitz_L", "smoothness_beta", "eps_lin", "output_envelope_F",
                    "residual_envelope_B", "label_envelope_Y")


@functools.cache
def _a_posteriori_function():
    from boundcalc.theory.aposteriori import theorem1_a_posteriori

    constants = theorem1_a_posteriori("paper").constants
    exprs = [constants[k] for k in _POSTERIORI_KEYS]
    syms = sorted(set().union(*(e.free_symbols for e in exprs)), key=lambda s: s.name)
    return syms, compile_function(tuple(exprs), tuple(syms))


def a_posteriori(*, m: int, d: int, rho: object, activation: str, nu: object = "1",
                 u0_max: float, x_max: float, q_max: float, g_max: float) -> dict[str, float]:
    """The a-posteriori constants (theory/aposteriori.py) at measured init and input geometry.

    Returns L, β, ε_lin, F, B, Y and the loss-gradient envelope 2LB, with u_∞ → u0_max and
    (X, Q, Γ) → (x_max, q_max, g_max) (derivations.md §10).
    """
    import mpmath

    inputs = validate(m=m, d=d, rho=rho_text(rho), activation=activation, nu=str(nu))
    from boundcalc.theory import symbols as S

    from boundcalc.calc.api import symbol_values

    values = {k: v for k, v in symbol_values(inputs).items()}
    values.update({S.u0_max: u0_max, S.x_max: x_max, S.q_max: q_max, S.g_max: g_max})
    syms, func = _a_posteriori_function()
    with mpmath.workdps(20):
        out = func(*[mpmath.mpf(sp.N(values[s], 25)) if not isinstance(values[s], float)
                     else mpmath.mpf(values[s]) for s in syms])
    result = {k: float(v) for k, v in zip(_POSTERIORI_KEYS, out, strict=True)}
    result["loss_gradient_envelope"] = 2 * result["lipschitz_L"] * result["residual_envelope_B"]
    return result


@contextlib.contextmanager
def cpu_threads(device: torch.device, threads: int | None) -> Iterator[None]:
    """Run with ``threads`` intra-op CPU threads (restored afterwards); None leaves torch's setting.

    The searches are many small kernels; on a busy 2-core machine a float64 softmax with 2 OpenMP
    threads was measured at ~8 ms per call against ~20 µs with 1 thread, so 1 is the default.

    >>> with cpu_threads(torch.device("cpu"), None):
    ...     pass
    """
    if threads is None or device.type != "cpu":
        yield
        return
    old = torch.get_num_threads()
    torch.set_num_threads(int(threads))
    try:
        yield
    finally:
        torch.set_num_threads(old)


class Setup(NamedTuple):
    """What every adversarial validator starts from (:func:`setup`): device, dtype, activation,
    the a-priori evaluation and the radii (as the calculator parsed them, and as floats)."""

    dev: torch.device
    dt: torch.dtype
    act: Activation
    ev: dict
    rho_t: tuple
    rho_f: tuple[float, float, float]


def setup(statement: str, *, m: int, d: int, rho: object, delta: object, activation: str,
          device: str | torch.device, dtype: torch.dtype | str, **extra: object) -> Setup:
    """Device, dtype, activation, the a-priori evaluation of ``statement`` and the radii (as the
    calculator parsed them, and as floats): the first step of every adversarial measurement.

    >>> s = setup("lemma2", m=4, d=2, rho=2, delta="0.05", activation="tanh", device="cpu",
    ...           dtype="float64")
    >>> s.dev.type, s.dt, s.act.name, s.rho_f
    ('cpu', torch.float64, 'tanh', (2.0, 2.0, 2.0))
    """
    ev = a_priori(statement, m=m, d=d, rho=rho, delta=delta, activation=activation, **extra)
    rho_t = validate(m=m, rho=rho_text(rho)).rho
    return Setup(resolve_device(device), resolve_dtype(dtype), get_activation(activation), ev,
                 rho_t, tuple(float(r) for r in rho_t))


def record_settings(m, d, T, rho_t, delta, activation, starts, steps, seed, device, dtype) -> dict:
    """The settings fields every record of a measurement carries (module docstring), as plain
    JSON values.

    >>> record_settings(4, 2, 3, (2, 2, 2), 0.05, "tanh", 8, 10, 0, "cpu", torch.float64)["dtype"]
    'float64'
    """
    return {
        "m": m, "d": d, "T": T, "rho_c": float(rho_t[0]), "rho_u": float(rho_t[1]),
        "rho_w": float(rho_t[2]), "delta": float(delta), "activation": activation,
        "starts": starts, "steps": steps, "seed": seed, "device": str(device),
        "dtype": str(dtype).replace("torch.", ""),
    }


def record(name: str, method: str, measured: float, bound: float, settings: dict,
           **extra) -> dict:
    """One measured-against-bound record (module docstring): ``name``, ``method``,
    ``measured``, ``bound``, ``ratio`` = measured / bound (0 or inf for a bound ≤ 0),
    ``holds`` = measured ≤ bound with no tolerance, then ``settings`` and ``extra``.

    >>> r = record("lemma2.lipschitz_L", "adversarial", 1.0, 4.0, {"m": 4})
    >>> r["ratio"], r["holds"], r["m"]
    (0.25, True, 4)
    """
    ratio = measured / bound if bound > 0 else (0.0 if measured <= 0 else math.inf)
    rec = {"name": name, "method": method, "measured": float(measured), "bound": float(bound),
           "ratio": float(ratio), "holds": bool(measured <= bound)}
    rec.update(settings)
    rec.update(extra)
    return rec


def check_args(*, m, d, T, starts, steps, seed, activation, samples=1) -> None:
    """Refuse a bad size, effort, seed or activation of a measurement (ValueError naming the
    argument) before any work.

    >>> check_args(m=3, d=2, T=2, starts=1, steps=0, seed=0, activation="tanh")
    Traceback (most recent call last):
    ...
    ValueError: `m` must be even (symmetric init), got 3
    """
    for name, value, low in (("m", m, 2), ("d", d, 1), ("T", T, 1), ("starts", starts, 1),
                             ("steps", steps, 0), ("samples", samples, 1)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"`{name}` must be an integer >= {low}, got {value!r}")
    if m % 2:
        raise ValueError(f"`m` must be even (symmetric init), got {m}")
    if not isinstance(seed, int):
        raise ValueError(f"`seed` must be an integer, got {seed!r}")
    get_activation(activation)


@functools.cache
def activation_sigmas(activation: str) -> tuple[float, float, float]:
    """(σ₀, σ₁, σ₂): the bounds on |σ|, |σ'|, |σ''| of ``activation`` that the theory uses
    (:mod:`boundcalc.theory.activations`), as floats.

    >>> activation_sigmas("tanh")[:2]
    (1.0, 1.0)
    """
    from boundcalc.theory.activations import get_activation as theory_activation

    a = theory_activation(activation)
    return float(a.sigma0), float(a.sigma1), float(a.sigma2)


def geometry_args(geo: dict) -> dict:
    """The measured geometry that :func:`a_posteriori` takes (u0_max, x_max, q_max, g_max), out
    of a :func:`~boundcalc.validators.checks.adversary.measured_geometry` dict.

    >>> geometry_args({"u0_max": 1.5, "x_max": 1.0, "q_max": 1.0, "g_max": 1.0, "g_at_init": 0})
    {'u0_max': 1.5, 'x_max': 1.0, 'q_max': 1.0, 'g_max': 1.0}
    """
    return {k: geo[k] for k in ("u0_max", "x_max", "q_max", "g_max")}


def data_record(name: str, measured: float, bound: float, post_bound: float, settings: dict,
                geo: dict, on_event: bool, samples: int, method: str = "data", **extra) -> dict:
    """A :func:`record` of a measurement on an actual init and data set, against its a-priori
    ``bound`` and its a-posteriori ``post_bound`` (at the measured geometry ``geo``); off the
    init event the a-priori bound is not guaranteed, so such a record always holds, with a note.

    >>> geo = {"u0_max": 1.0, "x_max": 1.0, "q_max": 1.0, "g_max": 1.0}
    >>> r = data_record("lemma2.lipschitz_L", 3.0, 2.0, 4.0, {}, geo, False, 8)
    >>> r["holds"], r["holds_a_posteriori"], r["ratio_a_posteriori"]
    (True, True, 0.75)
    """
    rec = record(name, method, measured, bound, settings, a_posteriori_bound=post_bound,
                 ratio_a_posteriori=measured / post_bound if post_bound > 0 else math.inf,
                 holds_a_posteriori=bool(measured <= post_bound), on_event=bool(on_event),
                 samples=samples, **geo, **extra)
    if not on_event:
        # the a-priori bound is only guaranteed on the event E_U: not a counterexample
        rec["holds"] = True
        rec["note"] = "init outside the event E_U: the a-priori bound is not guaranteed"
    return rec


def attach_argmax(rec: dict, space: SearchSpace, cfg: Config, keep: bool) -> dict:
    """``rec`` with the maximising configuration ``cfg`` as plain lists in ``argmax`` when it
    fails (a counterexample to report) or when ``keep``; ``rec`` itself, changed in place.

    >>> attach_argmax({"holds": True}, None, None, keep=False)
    {'holds': True}
    """
    if keep or not rec["holds"]:
        rec["argmax"] = config_to_lists(space, cfg)
    return rec
