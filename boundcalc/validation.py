"""``boundcalc validate``: run the validators against the calculator's bounds and keep the evidence.

Each statement maps to the measurement that could falsify it (``boundcalc.validators``):

==========  ====================================================================================
event       max_i ‖U_i(0)‖ against the Definition 1 radius u_∞ and √((1/m)Σ_i ‖U_i(0)‖²)
            against the head-average radius ū (tight route) over ``rate_seeds`` inits (rate ≤ δ)
lemma2      adversarial and on-data sup ‖∇f‖ and largest |eigenvalue| of ∇²f against L and β
lemma3      the paper's gradient-aligned boundary point, then ascent on |f − f_lin|, against ε_lin
lemma5      max_j |f_lin(X_j; θ̄) − f*(X_j)| against ε_app, and against the tight route's d-free
            ε_app, over ``rate_seeds`` inits (rate ≤ δ)
lemma6      sup |f| and ‖∇R̂‖ on Ω_ρ against the envelopes F and 2LB
remark3     ‖X J Xᵀ‖ and sup ‖∇f‖ for T ∈ {1, 4, …, 1024}: one T-free bound at every T
tight       the tight route's constants on the head-average event E_avg (U(0) in the
            root-mean-square ball): adversarial and on-data L, ε_lin, ε_tay, ε_cf, F, and the
            d-free label envelope Y (``validators.check_tight.validate_tight``)
theorem1    a ProjGD run on a realizable teacher–student problem against the min/average-iterate
            bounds of both proof routes (tight and paper), a priori and a posteriori
prop1       ProjSGD runs against the same bounds (in expectation)
==========  ====================================================================================

and, not part of ``all`` (which is the Transformer statements above):

==============  ================================================================================
prop2           Proposition 2's per-unit and network constants of the IndRNN (G_T, H_T, L, ε_lin)
                at a boundary point of Ω_ρ with |u_i| = α + ρ_u/√m
                (``validators.indrnn.measure_prop2``)
==============  ================================================================================

and, for paper 003:

==============  ================================================================================
generalization  GD on Φ of paper 003's encoder: max_t empirical loss against Lemma 4 and max_t
                held-out loss against Theorem 5 (derived and printed forms), with the conditions
                of Lemma 4 measured at θ⁰ (``validators.encoder.validation_records``)
==============  ================================================================================

**Exit status.** A record whose measurement exceeds its bound has ``holds = False``. It is a
*violation* (``validate`` exits 1 and warns on stderr) unless the record says that the conditions
its bound is stated under fail (``conditions_hold = False``): then the bound does not apply and the
row is reported but *not applicable* (:func:`is_violation`). The Transformer statements' records
carry no conditions, so for them every measurement above its bound is a violation.

Every (statement, seed) cell is written atomically into a run directory
(:class:`boundcalc.rundir.RunDirectory`) and skipped when the same command is run again with the
same ``--out``, so an interrupted run loses nothing. torch is imported only when a validation
actually runs, never by the calculator.
"""

from __future__ import annotations

import functools
import math
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.params import InputError, parse_number, parse_triple
from boundcalc.rundir import RunDirectory

#: The order ``validate all`` runs them in (cheap first).
STATEMENTS: tuple[str, ...] = (
    "event", "lemma2", "lemma3", "lemma5", "lemma6", "remark3", "tight", "theorem1", "prop1",
)

#: Paper 003's generalization bound; ``validate generalization`` (not included in ``all``).
GENERALIZATION = "generalization"

#: Proposition 2 (App. B.1, the IndRNN); ``validate prop2`` (not included in ``all``).
INDRNN = "prop2"

#: The IndRNN's recurrent init scale α (u_i = ±α) when ``--alpha`` is not given, as the scripts.
DEFAULT_INDRNN_ALPHA = 1.5

#: Search effort of the adversarial validators (starts, ascent steps); ``--effort`` picks one.
EFFORT: dict[str, dict[str, int]] = {
    "quick": {"starts": 4, "search_steps": 40, "samples": 8},
    "standard": {"starts": 16, "search_steps": 150, "samples": 32},
    "thorough": {"starts": 64, "search_steps": 400, "samples": 64},
}


#: The largest width ``--m`` (and ``--dm``) the validators accept: 2**24. The validators hold the
#: width-m model as dense torch tensors (several m-row copies per search start and sample), which
#: past 2**24 rows no longer fit a device's memory, and float32 stops representing every integer
#: (so m itself, used in 1/sqrt(m) and the counts) exactly above 2**24.
MAX_VALIDATION_WIDTH = 2**24

_WIDTH_WHY = (f"must be <= {MAX_VALIDATION_WIDTH} (2**24) for the validators: the model is held "
              f"as dense torch tensors with m rows, which no longer fit in memory past that, and "
              f"float32 is exact for integers only up to 2**24")


@dataclass(frozen=True)
class ValidationSettings:
    """Every parameter of a validation run (stored in the run's ``config.json``).

    Attributes:
        m, n, d, T: width, samples, token dimension, sequence length.
        rho, nu: projection radii and transport budgets (ρ_c, ρ_u, ρ_w), (ν_c, ν_u, ν_w).
        delta: failure probability per event.
        activation: ``tanh`` or ``erf``.
        steps: ProjGD / ProjSGD iterations K for ``theorem1`` / ``prop1``.
        seeds: searches and training runs use seeds 0, …, seeds − 1.
        rate_seeds: number of inits for the probability checks (event, lemma5).
        batch_size: ProjSGD minibatch size.
        effort: ``quick`` | ``standard`` | ``thorough`` search effort (see :data:`EFFORT`).
        device, dtype: torch device (resolved, never ``auto``) and ``float32`` | ``float64``.
    """

    m: int
    n: int
    d: int
    T: int
    rho: tuple[float, float, float]
    nu: tuple[float, float, float]
    delta: float
    activation: str
    steps: int
    seeds: int
    rate_seeds: int
    batch_size: int
    effort: str
    device: str
    dtype: str
    teacher_width: int = 8192
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__ if k != "extra"}
        out.update(self.extra)
        return out


@dataclass(frozen=True)
class GeneralizationSettings:
    """Parameters of ``validate generalization`` (stored under ``generalization`` in
    ``config.json``).

    Attributes:
        d_m: model dimension. N: training samples. n_test: held-out samples.
        steps: GD steps on Φ. lr: GD step size γ. seeds: init seeds 0, …, seeds − 1.
        delta: δ of Lemma 4 / Theorem 5.
        data: ``None`` (generated two-class images) or a path
            (:func:`boundcalc.validators.encoder.load_generalization_data`).
        radii: (R_Q, R_K, R_V, R_O), or ``None`` = the radii actually travelled.
        hidden_constants: the calculator's ``--hidden-constants`` string (``None`` = all 1).
        device, dtype: as :class:`ValidationSettings`.
    """

    d_m: int
    N: int
    n_test: int
    steps: int
    lr: float
    seeds: int
    delta: float
    data: str | None
    radii: tuple[float, float, float, float] | None
    hidden_constants: str | None
    device: str
    dtype: str

    def as_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def make_generalization_settings(*, dm: str, N: str, n_test: str, steps: str, lr: str,
                                 seeds: str, delta: str, data: str | None, radii: str,
                                 hidden_constants: str | None, device: str, dtype: str
                                 ) -> GeneralizationSettings:
    """Parse and check the ``validate generalization`` flags; errors name the flag. The data are
    loaded once here, so an unusable ``--data`` (or an ``--N`` it cannot supply) fails before any
    run directory is written."""
    from boundcalc.generalization import parse_hidden_constants, parse_radii
    from boundcalc.params import parse_integer

    def integer(flag: str, text: str, minimum: int) -> int:
        value = parse_integer(flag, text)
        if value < minimum:
            raise InputError(flag, f"must be an integer >= {minimum}, got {text!r}")
        return value

    delta_value = parse_number("--delta", delta)
    if not 0 < delta_value < 1:
        raise InputError("--delta", f"must lie in (0, 1), got {delta!r}")
    lr_value = parse_number("--lr", lr)
    if not lr_value > 0:
        raise InputError("--lr", f"must be > 0, got {lr!r}")
    if dtype not in ("float32", "float64"):
        raise InputError("--dtype", f"must be float32 or float64, got {dtype!r}")
    radii_value = None if radii.strip().lower() == "travelled" else parse_radii(radii)
    if hidden_constants is not None:
        parse_hidden_constants(hidden_constants)
    if data is not None and not Path(data).exists():
        raise InputError("--data", f"{data!r} does not exist")
    if parse_number("--dm", dm) > MAX_VALIDATION_WIDTH:
        raise InputError("--dm", f"{_WIDTH_WHY.replace('m rows', 'd_m rows')}, got {dm!r}")
    settings = GeneralizationSettings(
        d_m=integer("--dm", dm, 1), N=integer("--N", N, 2), n_test=integer("--n-test", n_test, 1),
        steps=integer("--steps", steps, 1), lr=lr_value, seeds=integer("--seeds", seeds, 1),
        delta=delta_value, data=None if data is None else str(Path(data).resolve()),
        radii=radii_value, hidden_constants=hidden_constants, device=resolve_device(device),
        dtype=dtype)
    try:
        _generalization_data(settings.N, settings.n_test, settings.data)
    except ValueError as err:
        flag = "--data" if data is not None else "--N"
        raise InputError(flag, str(err).replace("`", "")) from None
    return settings


@functools.lru_cache(maxsize=2)
def _generalization_data(N: int, n_test: int, data: str | None) -> dict[str, Any]:
    from boundcalc.validators.encoder import load_generalization_data

    return load_generalization_data(N, n_test, data)


def _generalization_cell(g: GeneralizationSettings, seed: int) -> list[dict]:
    """One ``generalization`` cell (one init seed); one torch thread on the CPU."""
    import torch

    from boundcalc.validators.encoder import validate_cell

    previous = torch.get_num_threads()
    if g.device == "cpu":
        torch.set_num_threads(1)
    try:
        return validate_cell(_generalization_data(g.N, g.n_test, g.data), d_m=g.d_m, seed=seed,
                             steps=g.steps, lr=g.lr, delta=g.delta, radii=g.radii,
                             hidden_constants=g.hidden_constants,
                             dtype=getattr(torch, g.dtype), device=g.device)
    finally:
        torch.set_num_threads(previous)


def resolve_device(device: str) -> str:
    """``auto`` → ``cuda`` when a GPU is visible, else ``cpu``; ``cuda`` without one is an error."""
    import torch

    choice = device.strip().lower()
    if choice == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if choice.startswith("cuda"):
        if not torch.cuda.is_available():
            raise InputError("--device", f"{device!r} requested but no CUDA GPU is available")
        return choice
    if choice == "cpu":
        return "cpu"
    raise InputError("--device", f"must be auto, cpu or cuda, got {device!r}")


def make_settings(*, m: str, n: str, d: str, T: str, rho: str, nu: str, delta: str,
                  activation: str, steps: str, seeds: str, rate_seeds: str, batch_size: str,
                  effort: str, device: str, dtype: str, teacher_width: str = "8192",
                  statements: Iterable[str] | None = None, batch_size_given: bool = True
                  ) -> ValidationSettings:
    """Parse and check CLI strings; every error is an :class:`InputError` naming the flag.

    The minibatch size matters to ``prop1`` only (``statements`` = ``None``: assume it runs).
    A batch size above ``n`` is refused, naming ``--batch-size``, only when the user gave it
    (``batch_size_given``) and ``prop1`` runs; the default is lowered to ``n`` instead
    (:func:`batch_size_note` says so).
    """
    def positive_int(flag: str, text: str, minimum: int = 1) -> int:
        value = parse_number(flag, text)
        if value != int(value) or value < minimum:
            raise InputError(flag, f"must be an integer >= {minimum}, got {text!r}")
        return int(value)

    if parse_number("--m", m) > MAX_VALIDATION_WIDTH:
        raise InputError("--m", f"{_WIDTH_WHY}, got {m!r}")
    m_int = positive_int("--m", m, 2)
    if m_int % 2:
        raise InputError("--m", f"must be a positive even integer (symmetric init), got {m!r}")
    delta_value = parse_number("--delta", delta)
    if not 0 < delta_value < 1:
        raise InputError("--delta", f"must lie in (0, 1), got {delta!r}")
    if activation.strip().lower() not in ("tanh", "erf"):
        raise InputError("--activation",
                         f"must be tanh or erf for the validators, got {activation!r}")
    if effort not in EFFORT:
        raise InputError("--effort", f"must be one of {', '.join(EFFORT)}, got {effort!r}")
    if dtype not in ("float32", "float64"):
        raise InputError("--dtype", f"must be float32 or float64, got {dtype!r}")
    n_int = positive_int("--n", n)
    b_int = positive_int("--batch-size", batch_size)
    uses_batch = statements is None or "prop1" in statements
    if b_int > n_int:
        if batch_size_given and uses_batch:
            raise InputError("--batch-size", f"must be <= --n ({n_int}), got {batch_size!r}")
        b_int = n_int
    return ValidationSettings(
        m=m_int, n=n_int, d=positive_int("--d", d), T=positive_int("--T", T),
        rho=tuple(float(v) for v in parse_triple("--rho", rho)),  # type: ignore[arg-type]
        nu=tuple(float(v) for v in parse_triple("--nu", nu)),  # type: ignore[arg-type]
        delta=delta_value, activation=activation.strip().lower(),
        steps=positive_int("--steps", steps), seeds=positive_int("--seeds", seeds),
        rate_seeds=positive_int("--rate-seeds", rate_seeds), batch_size=b_int, effort=effort,
        device=resolve_device(device), dtype=dtype,
        teacher_width=positive_int("--teacher-width", teacher_width),
    )


def batch_size_note(statements: Iterable[str], default: str, settings: ValidationSettings
                    ) -> str | None:
    """The stderr note when ``prop1`` runs with the default batch size lowered to ``n``."""
    if "prop1" in statements and settings.batch_size < int(default):
        return (f"note: prop1 uses --batch-size {settings.batch_size} (the default {default} "
                f"exceeds --n {settings.n})")
    return None


def _search_kwargs(s: ValidationSettings, seed: int) -> dict[str, Any]:
    effort = EFFORT[s.effort]
    return {"delta": s.delta, "activation": s.activation, "starts": effort["starts"],
            "steps": effort["search_steps"], "samples": effort["samples"], "seed": seed,
            "device": s.device, "dtype": s.dtype}


def _training_kwargs(s: ValidationSettings, seed: int) -> dict[str, Any]:
    return {"m": s.m, "n": s.n, "d": s.d, "T": s.T, "rho": s.rho, "nu": s.nu, "delta": s.delta,
            "activation": s.activation, "steps": s.steps, "seeds": [seed],
            "teacher_width": s.teacher_width, "device": s.device, "dtype": s.dtype}


def _cell_runner(statement: str, s: ValidationSettings, seed: int) -> Callable[[], list[dict]]:
    """The measurement of one (statement, seed) cell, as a zero-argument callable."""
    from boundcalc.validators import check_lemmas as lemmas
    from boundcalc.validators import check_tight as tight
    from boundcalc.validators import check_training as training

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
        return lambda: (lemmas.validate_event(s.m, s.d, **event_kwargs)
                        + tight.validate_head_average_event(s.m, s.d, **event_kwargs))
    if statement == "lemma2":
        return lambda: lemmas.validate_lemma2(s.m, s.d, s.T, rho, **_search_kwargs(s, seed))
    if statement == "lemma3":
        return lambda: lemmas.validate_lemma3(s.m, s.d, s.T, rho, **_search_kwargs(s, seed))
    if statement == "lemma6":
        nu = ",".join(str(v) for v in s.nu)
        return lambda: lemmas.validate_lemma6(s.m, s.d, s.T, rho, nu=nu,
                                              **_search_kwargs(s, seed))
    if statement == "remark3":
        kwargs = _search_kwargs(s, seed)
        kwargs.pop("samples")
        return lambda: lemmas.remark3_table(s.m, s.d, rho, **kwargs)
    if statement == "lemma5":
        return lambda: training.measure_lemma5(
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


def _prop2_cell(s: ValidationSettings, seed: int, alpha: float) -> list[dict]:
    """One ``prop2`` cell: :func:`boundcalc.validators.indrnn.measure_prop2` on ``samples``
    sequences (the ``--effort`` level's), as measured/bound records; one torch thread on the CPU."""
    import torch

    from boundcalc.validators.indrnn import measure_prop2

    previous = torch.get_num_threads()
    if s.device == "cpu":
        torch.set_num_threads(1)
    try:
        rows = measure_prop2(m=s.m, d=s.d, T=s.T, n=max(2, EFFORT[s.effort]["samples"]),
                             alpha=alpha, rho=s.rho, seed=seed, activation=s.activation,
                             device=s.device, dtype=s.dtype)
    finally:
        torch.set_num_threads(previous)
    u_max = alpha + s.rho[1] / math.sqrt(s.m)
    return [{"name": f"prop2.{r['quantity']}", "method": "boundary_point",
             "measured": r["measured"], "bound": r["bound"], "ratio": r["ratio"],
             "holds": bool(r["measured"] <= r["bound"]), "alpha": alpha, "u_max": u_max,
             "m": s.m, "d": s.d, "T": s.T, "activation": s.activation, "device": s.device,
             "dtype": s.dtype} for r in rows]


def expand_statements(names: Iterable[str]) -> list[str]:
    """``all`` → every Transformer statement (not ``prop2`` or ``generalization``); otherwise
    check each."""
    out: list[str] = []
    for name in names:
        key = name.strip().lower()
        if key == "all":
            out.extend(s for s in STATEMENTS if s not in out)
        elif key in (*STATEMENTS, INDRNN, GENERALIZATION):
            if key not in out:
                out.append(key)
        else:
            raise InputError("STATEMENT", f"must be one of {', '.join(STATEMENTS)}, all, "
                             f"{INDRNN} or {GENERALIZATION}, got {name!r}")
    return out


#: Statements whose cells run ProjGD / ProjSGD (the training step that may use the CPU kernel).
TRAINING_STATEMENTS = ("theorem1", "prop1")


def _load_training_kernel(s: ValidationSettings) -> None:
    """Build or load the compiled training step for the run's (d, dtype) where it applies (CPU,
    tanh); its backend and, for torch, the reason are then in
    :func:`boundcalc.rundir.environment` (``cpu_kernel``)."""
    import torch

    from boundcalc.validators.model import get_activation
    from boundcalc.validators.train import _kernel_for

    _kernel_for(get_activation(s.activation), getattr(torch, s.dtype), torch.device(s.device),
                s.d)


def run_validation(statements: list[str], settings: ValidationSettings, out: str | Path,
                   progress: Callable[[str], None] | None = None) -> list[dict]:
    """Run every (statement, seed) cell not already in ``out``; return all records.

    Records carry at least ``name``, ``measured``, ``bound``, ``ratio``, ``holds``; this function
    adds ``statement``, ``seed`` and ``seconds`` (wall time of the cell when it was computed).
    """
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    if GENERALIZATION in statements and GENERALIZATION not in settings.extra:
        raise InputError("STATEMENT", "generalization needs its settings in "
                         "settings.extra['generalization'] (make_generalization_settings)")
    config = {"statements": statements, **settings.as_dict()}
    if GENERALIZATION in config:
        config[GENERALIZATION] = settings.extra[GENERALIZATION].as_dict()
    if any(name in TRAINING_STATEMENTS for name in statements):
        # the CPU kernel of the training step is built (or its absence noted on stderr) before
        # the run directory is opened, so that config.json records the backend and why
        # (environment.cpu_kernel), as reproduce figure1 does
        _load_training_kernel(settings)
    run = RunDirectory(out, config=config, device=settings.device)
    records: list[dict] = []
    cells = [(statement, seed) for statement in statements
             for seed in (range(1) if statement in ("event", "lemma5") else range(settings.seeds))]
    timing = _CellTiming()
    for index, (statement, seed) in enumerate(cells, start=1):
        key = f"{statement}-seed{seed}"
        tag = f"[validate {index}/{len(cells)}] {key}"
        left = [name for name, _ in cells[index:]]
        if run.has_cell(key):
            cell = run.load_cell(key)
            timing.add(statement, _cell_seconds(cell))
            if progress:
                progress(f"{tag}: done earlier, loaded from {run.cells / (key + '.json')}")
        else:
            started = time.perf_counter()
            with _heartbeat(progress, tag, started, timing, statement, left):
                cell_records = _cell_runner(statement, settings, seed)()
            seconds = time.perf_counter() - started
            timing.add(statement, seconds)
            cell = [_bound_not_positive(_tag(rec, statement, seed, seconds))
                    for rec in cell_records]
            run.save_cell(key, cell)
            if progress:
                ratios = [float(r["ratio"]) for r in cell
                          if isinstance(r.get("ratio"), (int, float))
                          and math.isfinite(float(r["ratio"]))]
                line = (f"{tag}: done, {len(cell)} measurements in {seconds:.1f} s, "
                        f"max measured/bound {max(ratios, default=0.0):.3g}")
                unbounded = sum("not_applicable" in r for r in cell)
                if unbounded:
                    line += f" ({unbounded} bound(s) <= 0: not applicable, no ratio)"
                if any("conditions_hold" in r for r in cell):
                    failing = sorted({f for r in cell for f in r["failing"].split(",")
                                      if f != "none"})
                    line += (", every condition holds" if not failing else
                             f", failing conditions: {', '.join(failing)}")
                progress(line + "; " + timing.eta_text(left))
        records.extend(_bound_not_positive(rec) for rec in cell)
    run.write_results(records)
    return records


#: Seconds between the "running for" lines of a cell still computing (``validate`` progress).
PROGRESS_HEARTBEAT_S = 15.0


def _duration(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3.5 h``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def _cell_seconds(cell: list[dict]) -> float | None:
    """Wall time a loaded cell took when it was computed (its records' ``seconds``), if known."""
    for rec in cell:
        value = rec.get("seconds")
        if isinstance(value, (int, float)) and math.isfinite(value) and value >= 0:
            return float(value)
    return None


class _CellTiming:
    """Wall times of the finished cells, by statement, for the progress lines' ETA: a cell still
    to run is estimated by the mean time of its statement's finished cells, else of all."""

    def __init__(self) -> None:
        self.seconds: dict[str, list[float]] = {}

    def add(self, statement: str, seconds: float | None) -> None:
        if seconds is not None:
            self.seconds.setdefault(statement, []).append(seconds)

    def estimate(self, statement: str) -> float | None:
        own = self.seconds.get(statement)
        every = [t for times in self.seconds.values() for t in times]
        times = own or every
        return sum(times) / len(times) if times else None

    def remaining(self, statements: list[str]) -> float | None:
        estimates = [self.estimate(s) for s in statements]
        return None if any(e is None for e in estimates) else sum(estimates)  # type: ignore[misc]

    def eta_text(self, statements: list[str], extra: float = 0.0) -> str:
        if not statements and not extra:
            return "no cell left"
        total = self.remaining(statements)
        if total is None:
            return "no ETA before a cell has finished"
        count = len(statements)
        what = f" for the {count} cell(s) left" if count else ""
        return f"ETA {_duration(total + extra)}{what}"


@contextmanager
def _heartbeat(progress: Callable[[str], None] | None, tag: str, started: float,
               timing: _CellTiming, statement: str, left: list[str]) -> Iterator[None]:
    """While a cell computes, every :data:`PROGRESS_HEARTBEAT_S` a ``running for`` line with the
    ETA of this cell and the ones after it (from the finished cells' times); nothing without
    ``progress``."""
    if progress is None:
        yield
        return
    stop = threading.Event()

    def beat() -> None:
        while not stop.wait(PROGRESS_HEARTBEAT_S):
            elapsed = time.perf_counter() - started
            own = timing.estimate(statement)
            line = f"{tag}: running for {_duration(elapsed)}"
            if own is not None:
                rest = timing.remaining(left)
                if rest is not None:
                    line += f", ETA {_duration(max(own - elapsed, 0.0) + rest)}"
            else:
                line += ", no ETA before a cell has finished"
            progress(line)

    thread = threading.Thread(target=beat, name="validate-progress", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _bound_not_positive(record: dict) -> dict:
    """A record with conditions (``generalization``) whose bound is <= 0 bounds nothing: it is
    not applicable (``conditions_hold`` false, ``cond_bound_positive`` false, ``bound_positive``
    among ``failing``), has no ratio (None, never ``inf``) and says why in ``not_applicable``.
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
    return {**record, "ratio": None, "conditions_hold": False, "cond_bound_positive": False,
            "failing": ",".join([*failing, "bound_positive"]),
            "not_applicable": f"not applicable (the {form} bound is {sign}: {bound:.6g} <= 0 "
                              f"bounds no loss, so no ratio)"}


def _tag(record: dict, statement: str, seed: int, seconds: float) -> dict:
    """Prefix a measurement with its cell; a validator's own ``statement`` text is ``claim``."""
    rest = dict(record)
    claim = rest.pop("statement", None)
    tagged = {"statement": statement, "seed": seed, "seconds": round(seconds, 3), **rest}
    if claim is not None:
        tagged["claim"] = claim
    return tagged


def summary_rows(records: list[dict]) -> list[dict]:
    """One row per (statement, name, method): worst measurement, its bound and ratio, holds.

    Records that carry conditions (``generalization``) keep one row per seed (cell), with
    ``seed``, ``conditions_hold``, ``failing`` and the ``cond_<name>`` columns.
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
    try:
        number = float(value)
    except (TypeError, ValueError):
        return -math.inf
    return number if math.isfinite(number) else math.inf


__all__ = ["DEFAULT_INDRNN_ALPHA", "EFFORT", "GENERALIZATION", "INDRNN", "MAX_VALIDATION_WIDTH",
           "STATEMENTS", "GeneralizationSettings", "ValidationSettings", "batch_size_note",
           "expand_statements", "is_not_applicable", "is_violation",
           "make_generalization_settings", "make_settings", "resolve_device", "run_validation",
           "summary_rows", "violation_warning"]
