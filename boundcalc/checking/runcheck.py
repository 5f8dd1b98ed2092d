"""Check a run trained anywhere against the theory: :func:`check_run` (``boundcalc check``).

A run file (:mod:`boundcalc.checking.runfile`) holds θ(0), recorded iterates, the data and the step
size. :func:`check_run` measures it (:mod:`boundcalc.validators.checks.run`: the model's closed
forms, float64, batched over samples and heads, chunked over the recorded steps) and reports

1. **the regime**: m even; the init symmetric (max_j |f(X_j; θ(0))| ≤ :data:`SYMMETRIC_TOL`);
   token and query norms ≤ 1 (to :data:`NORM_TOL`); the head-average event (measured
   u0_rms = √((1/m)Σ‖U_i(0)‖²) ≤ ū, tight route) and the max event (u0_max ≤ u_∞, paper route);
   the labels within each bound's Y; every recorded iterate in Ω_ρ (``rho=None``: the smallest ρ
   that holds them, which is then used); Theorem 1's conditions (ρ ≥ ν, δ < 1/2); whether the
   consecutive recorded steps are (projected) gradient steps of size η (to :data:`GD_TOL`,
   relative to the step's length; unknown without two consecutive steps), and whether every step
   below K was recorded;
2. **measured against bound** along the trajectory (θ(0) and every recorded iterate), on both
   proof routes (``tight``, ``paper``: :data:`boundcalc.theory.catalog.MEASURED_ROUTES`), each
   a priori (the calculator's constants, :func:`boundcalc.calc.api.evaluate`) and a posteriori
   (the same derivation at the measured u0_max, u0_rms, x_max, q_max;
   ``theorem1_a_posteriori``): max ‖∇f‖ vs L, max |f − f_lin| vs ε_lin, max |f| vs F,
   R̂(θ_0) vs Y², and min over the iterates before step K of R̂ vs min_iterate (Theorem 1, or
   Remark 9 with a misspecification ε_mis > 0), with the guarantee of that bound against
   min(B², measured R̂(θ_0));
3. a **verdict** per line: ``holds`` (measured ≤ bound up to float64 rounding,
   :data:`ROUNDING_TOL`); ``violated`` (only with every regime condition of the line
   holding: a counterexample); ``not applicable (names)`` when a condition of the line fails, or
   is unknown and the measured value is above the bound.

A max over recorded iterates can only be below the max over all iterates, so an L, ε_lin or F
above its bound is a violation whatever was not recorded, while min_iterate is violated only if
every step below K was recorded and the steps are gradient steps of size η (the theorem is about
(Proj)GD; an Adam run's min_iterate line is not applicable, its L, ε_lin and F lines are).
min_iterate also holds only on the probability-(1 − δ) event E_app, which no run can observe.

Nothing here imports torch at import time; :func:`check_run` does.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from boundcalc.checking.runfile import RunFile, open_run, run_from_arrays
from boundcalc.inputs.flags import check_rows
from boundcalc.inputs.params import validate
from boundcalc.inputs.surfaces import CHECK
from boundcalc.runs.directory import jsonable
from boundcalc.theory.catalog import MEASURED_ROUTES, route_key

__all__ = ["GD_TOL", "NORM_TOL", "ROUNDING_TOL", "SYMMETRIC_TOL", "RunCheck", "check_run",
           "ignored_warning"]

#: |f(X; θ(0))| up to which the init counts as symmetric (f(·; θ(0)) = 0).
SYMMETRIC_TOL = 1e-9

#: Token and query norms up to 1 + NORM_TOL count as ≤ 1 (tokens clipped in float32).
NORM_TOL = 1e-6

#: Largest ‖θ_{k+1} − Π(θ_k − η∇R̂(θ_k))‖ / ‖θ_{k+1} − θ_k‖ counted as a gradient step.
GD_TOL = 1e-2

#: Float64 rounding of a measurement, not counted against a bound: measured ≤ bound + this
#: (absolute, and relative to the bound) is ``holds`` (an exact bound 0 meets rounding ~1e-17).
ROUNDING_TOL = 1e-12

#: The lines of each (route, kind): name, measured key, bound group and key.
_LINES = (("gradient_norm", "max ‖∇f‖", "constants", "lipschitz_L"),
          ("linearization", "max |f − f_lin|", "constants", "eps_lin"),
          ("output", "max |f|", "constants", "output_envelope_F"),
          ("initial_loss", "R̂(θ_0)", "constants", "initial_loss_bound"),
          ("min_iterate", "min_k R̂(θ_k)", "bound", "min_iterate"))


@dataclass
class RunCheck:
    """What :func:`check_run` found: the regime conditions, the measured-against-bound lines,
    the per-step measurements and the settings. ``regime`` and ``lines`` are lists of plain
    dicts (:meth:`to_dict`, :meth:`frames`)."""

    source: str
    settings: dict[str, Any]
    regime: list[dict[str, Any]]
    lines: list[dict[str, Any]]
    trajectory: dict[str, list]
    seconds: float
    device: str
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def violations(self) -> list[dict[str, Any]]:
        """The lines whose verdict is ``violated`` (inside the regime, measured above bound)."""
        return [line for line in self.lines if line["verdict"] == "violated"]

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data, the notes included: plain Python values, a number
        that is not finite as its text (``"inf"``, as run directories store one), a ratio without
        a value as None with its ``ratio_note``."""
        return jsonable({"run": self.source, "settings": self.settings, "regime": self.regime,
                         "lines": self.lines, "trajectory": self.trajectory,
                         "violations": len(self.violations), "notes": list(self.notes),
                         "seconds": self.seconds, "device": self.device,
                         "warnings": self.warnings})

    def _attrs(self) -> dict[str, Any]:
        from boundcalc.version import __version__

        return {"run": self.source, "statement": self.settings.get("statement"),
                "violations": len(self.violations), "notes": list(self.notes),
                "version": __version__}

    def frames(self) -> dict[str, Any]:
        """``{"regime", "lines", "trajectory"}`` as pandas DataFrames; each carries ``attrs``
        (run, statement, violations, notes, version), as :meth:`boundcalc.calc.api.Evaluation.
        to_frame` and :func:`boundcalc.load_run`'s frames do."""
        import pandas as pd

        out = {"regime": pd.DataFrame(self.regime), "lines": pd.DataFrame(self.lines),
               "trajectory": pd.DataFrame(self.trajectory)}
        for frame in out.values():
            frame.attrs.update(self._attrs())
        return out

    def __repr__(self) -> str:
        """One line: the run, its sizes, the lines, the violations and the a-priori tight
        route's min_iterate guarantee (``RunCheck(run.npz, m=32 n=200 K=30, 20 lines, 0
        violations, min_iterate tight a-priori: vacuous)``)."""
        s = self.settings
        head = next((x for x in self.lines if x.get("name") == "min_iterate"
                     and x.get("route") == "tight" and x.get("kind") == "a-priori"), None)
        tail = (f", min_iterate tight a-priori: {head['guarantee']}"
                if head and head.get("guarantee") else "")
        return (f"RunCheck({self.source}, m={s.get('m')} n={s.get('n')} K={s.get('K')}, "
                f"{len(self.lines)} lines, {len(self.violations)} violations{tail})")

    def _repr_html_(self) -> str:
        """The report as HTML (a notebook shows it): the settings, the regime and the lines as
        tables (numbers with 6 significant digits), then the notes."""
        import html

        from boundcalc.render.cell_text import DISPLAY_DIGITS, format_value

        def table(rows: list[dict[str, Any]]) -> str:
            if not rows:
                return "<p>none</p>"
            cols = list(dict.fromkeys(c for r in rows for c in r))
            head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(_cell(r.get(c), DISPLAY_DIGITS, format_value))}"
                                 f"</td>" for c in cols) + "</tr>" for r in rows)
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"

        notes = "".join(f"<li>{html.escape(n)}</li>" for n in self.notes)
        return (f"<div><p><strong>{html.escape(repr(self))}</strong></p>"
                f"<p><em>regime</em></p>{table(self.regime)}"
                f"<p><em>measured against bound</em></p>{table(self.lines)}"
                + (f"<p><em>notes</em></p><ul>{notes}</ul>" if notes else "") + "</div>")

    def text(self, fmt: str = "table") -> str:
        """The report as ``table`` (aligned text), ``json`` (:meth:`to_dict`, standard JSON:
        never NaN or Infinity) or ``csv`` (the lines, every number at full precision, the
        shortest text that reads back as the same float; then the notes as ``# `` lines, which
        ``pandas.read_csv(..., comment="#")`` skips)."""
        if fmt == "json":
            return json.dumps(self.to_dict(), indent=2, allow_nan=False, ensure_ascii=False)
        if fmt == "csv":
            cols = list(dict.fromkeys(key for line in self.lines for key in line))
            rows = [",".join(cols)] + [",".join(_csv(line.get(c)) for c in cols)
                                       for line in self.lines]
            rows += [f"# {note}" for note in self.notes]
            return "\n".join(rows) + "\n"
        s = self.settings
        head = (f"run {self.source}: m={s['m']} n={s['n']} d={s['d']} T={s['T']} "
                f"recorded={s['recorded']} K={s['K']} eta={_num(s['eta'])} "
                f"activation={s['activation']} rho=({', '.join(_num(r) for r in s['rho'])})"
                f"{'' if s['rho_given'] else ' (smallest containing the iterates)'} "
                f"nu=({', '.join(_num(v) for v in s['nu'])}) delta={_num(s['delta'])}"
                f"{' eps_mis=' + _num(s['misspecification']) if s['misspecification'] else ''}")
        regime = _align([("condition", "holds", "measured", "limit", "detail")] + [
            (r["name"], _holds(r["holds"]), _num(r["measured"]), _num(r["limit"]), r["detail"])
            for r in self.regime])
        lines = _align([("route", "kind", "quantity", "measured", "bound", "ratio", "verdict",
                         "B²", "guarantee")] + [
            (x["route"], x["kind"], x["quantity"], _num(x["measured"]), _num(x["bound"]),
             _num(x["ratio"]), x["verdict"],
             _num(x["trivial_bound_B2"]) if x.get("trivial_bound_B2") is not None else "",
             _guarantee_text(x))
            for x in self.lines])
        tail = (f"{len(self.violations)} violation(s) inside the regime; measured in "
                f"{self.seconds:.1f} s on {self.device}")
        return "\n".join([head, "", "Regime", regime, "", "Measured against bound", lines, "",
                          *self.notes, tail]) + "\n"


def _csv(value: Any) -> str:
    """A CSV cell: a float at full precision (``repr``: it reads back as the same float), text
    quoted where it holds a comma or a quote."""
    if value is None:
        text = ""
    elif isinstance(value, float):
        text = "inf" if math.isinf(value) else repr(value)
    else:
        text = str(value)
    return '"' + text.replace('"', '""') + '"' if ("," in text or '"' in text) else text


def _num(value: Any) -> str:
    """A number as the calculator's tables show it (6 significant digits; an integer past 15
    digits in scientific notation), ``-`` for None.

    Example:
        >>> _num(0.123456789), _num(10**87), _num(512), _num(None)
        ('0.123457', '1e+87', '512', '-')
    """
    from boundcalc.render.cell_text import DISPLAY_DIGITS, format_value

    return _cell(value, DISPLAY_DIGITS, format_value)


def _cell(value: Any, digits: int, fmt: Callable[..., str]) -> str:
    """``value`` through the calculator's number format ``fmt`` (``inf`` as such)."""
    if value is None:
        return "-"
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, float) and math.isinf(value):
        return "inf" if value > 0 else "-inf"
    if isinstance(value, int) and abs(value) >= 10**15:
        value = float(value)
    if isinstance(value, (int, float)):
        return fmt(value, digits)
    return str(value)


def _guarantee_text(line: Mapping[str, Any]) -> str:
    """The guarantee column of the table: ``vacuous (≥ 0.5 = min(B², R̂(θ_0)))``, empty for a
    line without one."""
    guarantee = line.get("guarantee")
    if not guarantee:
        return ""
    free = line.get("free_bound")
    if free is None:
        return str(guarantee)
    relation = "<" if guarantee == "guaranteed" else "≥"
    return f"{guarantee} ({relation} {_num(free)} = min(B², R̂(θ_0)))"


def _holds(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "NO")


def _align(rows: list[tuple]) -> str:
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
                     for r in rows)


def _rho_text(values: tuple[float, float, float]) -> str:
    return ",".join(repr(float(v)) for v in values)


def _condition(name: str, holds: bool | None, measured: Any, limit: Any,
               detail: str) -> dict[str, Any]:
    return {"name": name, "holds": holds, "measured": measured, "limit": limit,
            "detail": detail}


def _verdict(measured: float, bound: float, needs: list[str],
             regime: Mapping[str, bool | None]) -> tuple[str, str]:
    """(verdict, the conditions it needs that fail or are unknown)."""
    failing = [c for c in needs if regime[c] is False]
    unknown = [c for c in needs if regime[c] is None]
    if failing:
        return f"not applicable ({', '.join(failing)})", ",".join(failing)
    if measured <= bound + ROUNDING_TOL * (1 + abs(bound)):
        return "holds", ""
    if unknown:
        return f"not applicable ({', '.join(unknown)} unknown)", ",".join(unknown)
    return "violated", ""


def check_run(run: str | Any, *, rho: object = None, nu: object = None, delta: object = None,
              misspecification: object = None, device: str = "cpu",
              progress: Callable[[int, int, str], None] | None = None,
              warn: Callable[[str], None] | None = None) -> RunCheck:
    """Check a run against the theory (module docstring): the regime, every measured quantity
    against its a-priori and a-posteriori bound on both routes, a verdict per line.

    ``run``: a run file's path, or a mapping of its arrays (numpy arrays or torch tensors, the
    names of :data:`boundcalc.checking.runfile.ARRAYS`, scalars ``eta``, ``K``, ``activation``).
    ``rho``, ``nu``, ``delta``, ``misspecification``: as the calculator's flags (a number or, for
    ρ and ν, three); ``rho=None`` uses the smallest ρ holding every recorded iterate. ``device``:
    ``cpu``, ``cuda``, ``cuda:k`` or ``auto``. ``progress(done, total, detail)`` is called as the
    chunks of iterates are measured; ``warn(line)`` as soon as the file is opened, once per
    warning (members that are not arrays of a run file, left unread), which
    :attr:`RunCheck.warnings` also keeps.

    Raises:
        InputError naming the array (``RUN``) for a bad run, or the keyword for a bad value.

    Example:
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> m, d, n, T = 4, 2, 6, 3
        >>> c0 = np.array([1.0, -1.0, -1.0, 1.0])
        >>> U0 = np.tile(rng.normal(size=(2, d)), (2, 1))
        >>> W0 = np.tile(rng.normal(size=(2, d, d)), (2, 1, 1))
        >>> X = rng.uniform(-0.4, 0.4, (n, T, d))
        >>> arrays = dict(c0=c0, U0=U0, W0=W0, c=c0[None] + 0.01, U=U0[None], W=W0[None],
        ...               steps=[5], X=X, y=np.zeros(n), eta=0.1, K=5)
        >>> result = check_run(arrays, nu=0)
        >>> [r["name"] for r in result.regime][:4]
        ['m_even', 'symmetric_init', 'token_norms', 'query_norms']
        >>> round(result.settings["rho"][0], 12), len(result.violations)
        (0.02, 0)
        >>> sorted({line["verdict"] for line in result.lines if line["quantity"] == "max |f|"})
        ['holds']
    """
    from boundcalc.calc.api import evaluate
    from boundcalc.validation.settings import resolve_device

    flags = {k: str(v) if not isinstance(v, (tuple, list)) else ",".join(map(str, v))
             for k, v in (("rho", rho), ("nu", nu), ("delta", delta),
                          ("misspecification", misspecification)) if v is not None}
    check_rows(CHECK, flags)  # bad flags fail before the file is read
    dev = resolve_device(device)
    loaded: RunFile = open_run(run) if isinstance(run, (str, bytes)) or hasattr(
        run, "__fspath__") else run_from_arrays(run)
    warnings = [ignored_warning(loaded)] if loaded.ignored else []
    for line in warnings if warn is not None else ():
        warn(line)

    from boundcalc.validators.checks.certify_chain import a_posteriori_values
    from boundcalc.validators.checks.run import measure_run

    meas = measure_run(loaded, device=dev, progress=progress)
    geo = meas.geometry
    measured_rho = tuple(float(r) for r in meas.radii.max(axis=0))
    rho_given = "rho" in flags
    rho_text = flags["rho"] if rho_given else _rho_text(measured_rho)  # type: ignore[arg-type]
    eps_mis = float(flags.get("misspecification", "0"))
    inputs = validate(m=loaded.m, n=loaded.n, d=loaded.d, T=loaded.T, steps=loaded.K,
                      eta=repr(loaded.eta), activation=loaded.activation, rho=rho_text,
                      **{k: v for k, v in flags.items() if k != "rho"})
    rho_values = tuple(float(r) for r in inputs.rho)
    stem = "remark9" if eps_mis > 0 else "theorem1"
    prior = {route: evaluate(route_key(stem, route), inputs).floats() for route in MEASURED_ROUTES}
    geometry = {k: geo[k] for k in ("u0_max", "u0_rms", "x_max", "q_max")}
    post = {route: a_posteriori_values(inputs, route, eta=loaded.eta, eps_mis=eps_mis,
                                       geometry=geometry) for route in MEASURED_ROUTES}

    tight_c, paper_c = prior["tight"].constants, prior["paper"].constants
    # the recorded steps are distinct integers (checked), so 1..K-1 are all there exactly when
    # K - 1 of them lie in 1..K-1: a count, never a set of K elements (K may be 2**62)
    every = sum(1 for s in meas.steps.tolist() if 1 <= s < loaded.K) == loaded.K - 1
    inside = all(m <= r for m, r in zip(measured_rho, rho_values, strict=True))
    gd = meas.gd_deviation
    smallest = ", ".join(_num(r) for r in measured_rho)
    regime = [
        _condition("m_even", True, loaded.m, None, f"m = {loaded.m}"),
        _condition("symmetric_init", geo["f0_max"] <= SYMMETRIC_TOL, geo["f0_max"],
                   SYMMETRIC_TOL, "max_j |f(X_j; θ(0))|: f(·; θ(0)) = 0 (paired heads)"),
        _condition("token_norms", geo["x_max"] <= 1 + NORM_TOL, geo["x_max"], 1.0,
                   "max token norm ≤ 1"),
        _condition("query_norms", geo["q_max"] <= 1 + NORM_TOL, geo["q_max"], 1.0,
                   "max query norm ≤ 1"),
        _condition("head_average_event", geo["u0_rms"] <= float(tight_c["u_bar"]),
                   geo["u0_rms"], float(tight_c["u_bar"]),
                   "rms_i ‖U_i(0)‖ ≤ ū (tight route)"),
        _condition("max_event", geo["u0_max"] <= float(paper_c["u_inf"]), geo["u0_max"],
                   float(paper_c["u_inf"]), "max_i ‖U_i(0)‖ ≤ u_∞ (paper route)"),
        _condition("in_omega_rho", inside, max(m - r for m, r in zip(measured_rho, rho_values,
                                                                      strict=True)), 0.0,
                   f"smallest ρ holding every iterate = ({smallest}); measured is the "
                   "largest excess over the ρ used"),
    ]
    for route in MEASURED_ROUTES:
        for kind, consts in (("a-priori", prior[route].constants),
                             ("a-posteriori", post[route]["constants"])):
            y_bound = float(consts["label_envelope_Y"])
            regime.append(_condition(f"labels_within_Y_{route}_{kind}",
                                     geo["label_max"] <= y_bound, geo["label_max"], y_bound,
                                     f"max_j |y_j| ≤ Y ({route} route, {kind})"))
    for cond in prior["tight"].conditions:
        if cond.name == "m_even":
            continue
        regime.append(_condition(cond.name, bool(cond.holds), None, None, cond.detail))
    regime.append(_condition(
        "gradient_steps", None if gd is None else gd <= GD_TOL, gd, GD_TOL,
        f"θ_(k+1) = Π(θ_k − η∇R̂(θ_k)) over {meas.gd_pairs} consecutive recorded pair(s)"
        if gd is not None else "no two consecutive steps recorded: cannot tell GD from "
                               "another optimizer"))
    regime.append(_condition("every_step_recorded", every, int(meas.steps.size - 1), loaded.K,
                             "every step 1..K−1 recorded (min_k R̂ over all k < K)"))
    holds = {r["name"]: r["holds"] for r in regime}
    theorem_conditions = [c.name for c in prior["tight"].conditions if c.name != "m_even"]

    before_K = meas.steps < loaded.K
    values = {"gradient_norm": float(meas.grad_norm.max()),
              "linearization": float(meas.lin_gap.max()), "output": float(meas.abs_f.max()),
              "initial_loss": float(meas.loss[0]), "min_iterate": float(meas.loss[before_K].min())}
    lines = []
    for route in MEASURED_ROUTES:
        event = "head_average_event" if route == "tight" else "max_event"
        for kind in ("a-priori", "a-posteriori"):
            groups = ({"constants": prior[route].constants, "bound": prior[route].bound}
                      if kind == "a-priori" else post[route])
            geometry_needs = ["token_norms", "query_norms", event] if kind == "a-priori" else []
            labels = f"labels_within_Y_{route}_{kind}"
            needs = {"gradient_norm": [*geometry_needs, "in_omega_rho"],
                     "linearization": [*geometry_needs, "in_omega_rho"],
                     "output": [*geometry_needs, "in_omega_rho", "symmetric_init"],
                     "initial_loss": ["symmetric_init", labels],
                     "min_iterate": [*geometry_needs, "in_omega_rho", "symmetric_init", labels,
                                     *theorem_conditions, "gradient_steps",
                                     "every_step_recorded"]}
            for name, quantity, group, key in _LINES:
                bound = float(groups[group][key])
                measured = values[name]
                verdict, _ = _verdict(measured, bound, needs[name], holds)
                ratio, ratio_note = _ratio(measured, bound)
                line = {"route": route, "kind": kind, "quantity": quantity, "name": name,
                        "measured": measured, "bound": bound, "ratio": ratio,
                        "ratio_note": ratio_note, "verdict": verdict, "guarantee": None,
                        "trivial_bound_B2": None, "free_bound": None}
                if name == "min_iterate":
                    trivial = float(groups["constants"]["trivial_bound_B2"])
                    free = min(trivial, values["initial_loss"])
                    line["guarantee"] = "guaranteed" if bound < free else "vacuous"
                    line["trivial_bound_B2"], line["free_bound"] = trivial, free
                lines.append(line)
    settings = {"m": loaded.m, "n": loaded.n, "d": loaded.d, "T": loaded.T,
                "recorded": loaded.k, "K": loaded.K, "eta": loaded.eta,
                "activation": loaded.activation, "rho": rho_values, "rho_given": rho_given,
                "rho_measured": measured_rho, "nu": tuple(float(v) for v in inputs.nu),
                "delta": float(inputs.delta), "misspecification": eps_mis,
                "statement": stem}
    trajectory = {"step": meas.steps.tolist(), "loss": meas.loss.tolist(),
                  "grad_norm_max": meas.grad_norm.tolist(), "lin_gap_max": meas.lin_gap.tolist(),
                  "abs_f_max": meas.abs_f.tolist(), "rho_c": meas.radii[:, 0].tolist(),
                  "rho_u": meas.radii[:, 1].tolist(), "rho_w": meas.radii[:, 2].tolist()}
    notes = ["guarantee: the min_iterate bound against min(B², measured R̂(θ_0)) (columns "
             "trivial_bound_B2 and free_bound); it holds on the probability-(1 − δ) event "
             "E_app, which a run cannot observe."]
    why = sorted({line["ratio_note"] for line in lines if line["ratio_note"]})
    if why:
        notes.append(f"ratio -: no ratio where {'; where '.join(why)}.")
    return RunCheck(loaded.source, settings, regime, lines, trajectory, meas.seconds,
                    meas.device, notes, warnings)


def _ratio(measured: float, bound: float) -> tuple[float | None, str | None]:
    """measured / bound, or None and why there is none (a bound of 0 or below, or not a finite
    number: the ratio would be infinite or undefined, and 1e-400 is never rounded to 0 here).

    Example:
        >>> _ratio(1.0, 4.0), _ratio(1.0, 0.0), _ratio(0.0, float("inf"))
        ((0.25, None), (None, 'the bound is 0'), (None, 'the bound is not a finite number'))
    """
    if not math.isfinite(bound):
        return None, "the bound is not a finite number"
    if bound <= 0:
        return None, "the bound is 0" if bound == 0 else "the bound is negative"
    ratio = measured / bound
    return (ratio, None) if math.isfinite(ratio) else (None, "measured / bound overflows")


def ignored_warning(run: RunFile) -> str:
    """The one-line warning about a run file's members that are not arrays of a run file.

    Example:
        >>> from types import SimpleNamespace
        >>> ignored_warning(SimpleNamespace(source="r.npz", ignored=("extra.npy", "note.txt")))
        'r.npz: ignored 2 member(s) that are not arrays of a run file: extra.npy, note.txt'
    """
    shown = ", ".join(run.ignored[:5]) + (f" and {len(run.ignored) - 5} more"
                                          if len(run.ignored) > 5 else "")
    return (f"{run.source}: ignored {len(run.ignored)} member(s) that are not arrays of a run "
            f"file: {shown}")
