"""``boundcalc generalization``: paper 003's true-loss bound (Theorem 5) at one parameter point.

A plain function with typer options, registered by :mod:`boundcalc.cli` as
``app.command("generalization")(generalization)``. It validates the flags
(:func:`boundcalc.generalization.bound.validate_generalization`, one-line :class:`InputError`
naming the flag), evaluates the derived form (or the printed one with ``--as-printed``) and prints
the calculator's JSON contract through :func:`boundcalc.render.result_text.render_result` in any
``--format``. ``--symbolic`` appends every formula and the table of discrepancies between the
paper's printed statements and its derivations, both forms side by side.

``--data PATH`` (an ``.npz`` with ``X`` (N, d_s, d) and ``y`` (N,)) measures N, d_s, R_X, the init
norms, α and Φ(θ⁰) at the torch LeCun init seeded by ``--from-init`` (the only path that imports
torch, lazily; see :func:`boundcalc.validators.generalization_data.measure_data`), and the label
bound Y (largest |y|, unless ``--label-bound``) and the losses of the zero predictor and of θ⁰ on
the data, which the verdict also judges the bound against.

The status line (and the JSON's ``verdict``) is GUARANTEED only when every condition holds and the
bound is below what holds for free (the loss range A + Y, and with ``--data`` the measured losses);
VACUOUS when the conditions hold but it is not; ``--strict`` exits 1 unless GUARANTEED.

Example:
    boundcalc generalization --N 10000 --dm 64 --ds 13 --rx 1 --radii 1,1,1,1 --delta 0.05 \\
        --from-init 0 --alpha 0.5 --phi0 100 --format json
"""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from boundcalc.cli.app import output_file, write_output
from boundcalc.cli.options import format_option
from boundcalc.inputs.combinations import check_combinations
from boundcalc.inputs.flags import check_rows
from boundcalc.inputs.params import PARAMS
from boundcalc.inputs.surfaces import GENERALIZATION
from boundcalc.render.cell_text import FORMATS

__all__ = ["DEFAULTS", "generalization"]

_PARAMS = "Parameters"
_INIT = "Initial norms (give all seven, or --from-init SEED)"
_HIDDEN = "Hidden constants and form"
_OUTPUT = "Output"

#: Default of every flag that has one (the issue's example point); shown in the output.
DEFAULTS: dict[str, str] = {"N": "10000", "dm": "64", "ds": "13", "rx": "1",
                            "radii": "1,1,1,1", "delta": "0.05", "label_bound": "1"}

#: Input key of the result → flag name (for the ``given``/``default`` source column).
_INPUT_FLAG: dict[str, str] = {"N": "N", "d_m": "dm", "d_s": "ds", "R_X": "rx", "R_Q": "radii",
                               "R_K": "radii", "R_V": "radii", "R_O": "radii", "delta": "delta",
                               "Y": "label_bound"}


def _opt(*names: str, help: str, panel: str = _PARAMS, default: str | None = None) -> Any:
    return typer.Option(*names, help=help, rich_help_panel=panel,
                        show_default=default if default is not None else False)


def _emit(text: str, output: str | None) -> None:
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()
        return
    write_output(output, text)
    sys.stderr.write(f"wrote {output}\n")


def _symbolic_block(fmt: str, as_printed: bool) -> str:
    from boundcalc.generalization.bound import symbolic_generalization, symbolic_text

    if fmt == "json":
        import json

        return json.dumps(symbolic_generalization(as_printed), indent=2, ensure_ascii=False)
    if fmt == "markdown":
        return "### Formulas\n\n```text\n" + symbolic_text(as_printed) + "```\n"
    if fmt == "latex":
        data = symbolic_generalization(as_printed)
        lines = [f"% {data['statement']['title']} -- form: {data['statement']['form']}"]
        for group in ("quantities", "terms", "bound"):
            for key, e in data[group].items():
                lines.append(f"% {key}: {e['description']}")
                lines.append(f"\\[ {e['latex']} \\]")
        lines.append("% probability")
        lines.append(f"\\[ {data['probability']['latex']} \\]")
        for c in data["conditions"]:
            lines.append(f"% condition {c['name']}: {c['why']}")
            lines.append(f"\\[ {c['latex']} \\]")
        for d in data["discrepancies"]:
            lines.append(f"% discrepancy {d['key']} (lines {d['lines']}): {d['note']}")
            lines.append(f"\\[ \\text{{printed: }} {d['printed']['latex']} \\quad "
                         f"\\text{{derived: }} {d['derived']['latex']} \\]")
        return "\n".join(lines) + "\n"
    return symbolic_text(as_printed)


def _render(data: dict[str, Any], fmt: str, sources: dict[str, str], digits: int | None) -> str:
    from boundcalc.generalization.bound import render_descriptions, render_latex_names
    from boundcalc.render.result_text import render_result

    return render_result(data, fmt, digits=digits, descriptions=render_descriptions(),
                         sources=sources, latex_names=render_latex_names())


def generalization(
    N: Annotated[str | None, _opt("--N", help="number of training examples (>= 2)",
                                  default=DEFAULTS["N"])] = None,
    dm: Annotated[str | None, _opt("--dm", help="model dimension d_m (>= 1)",
                                   default=DEFAULTS["dm"])] = None,
    ds: Annotated[str | None, _opt("--ds", help="sequence length d_s (>= 1)",
                                   default=DEFAULTS["ds"])] = None,
    rx: Annotated[str | None, _opt("--rx", help="input scale R_X: ||X_n||_F <= sqrt(d_s) R_X",
                                   default=DEFAULTS["rx"])] = None,
    radii: Annotated[str | None, _opt("--radii", help="R_Q,R_K,R_V,R_O (> 0; one value = all "
                                      "four): distance travelled from the init",
                                      default=DEFAULTS["radii"])] = None,
    delta: Annotated[str | None, _opt("--delta", help="failure probability, in (0, 1)",
                                      default=DEFAULTS["delta"])] = None,
    alpha: Annotated[str | None, _opt("--alpha", help="alpha = sigma_min(F_pre^0) (> 0), "
                                      "measured on the data at init (required)")] = None,
    phi0: Annotated[str | None, _opt("--phi0", help="Phi(theta^0) = 1/2 ||f(theta^0) - y||^2, "
                                     "a sum over the N samples (>= 0, required)")] = None,
    label_bound: Annotated[str | None, _opt(
        "--label-bound", help="Y >= |y| for every label of the distribution (>= 0): the loss "
        "range A + Y and C_conf = 3 (A + Y) use it (default 1; with --data the largest |y| of "
        "the data)", default=DEFAULTS["label_bound"])] = None,
    from_init: Annotated[str | None, _opt("--from-init", help="draw the init norms from the "
                                          "LeCun init with this numpy seed (with --data: the "
                                          "torch seed of theta^0)", panel=_INIT,
                                          )] = None,
    data: Annotated[str | None, _opt("--data", help=".npz with X (N, d_s, d) and y (N,): "
                                     "measure N, d_s, R_X, the init norms, alpha and Phi0 "
                                     "(needs torch and --from-init)", panel=_INIT)] = None,
    d: Annotated[str | None, _opt("--d", help="input dimension of the --from-init draw "
                                  "(default d_m, the paper's d = d_m)", panel=_INIT)] = None,
    wq_fro: Annotated[str | None, _opt("--wq-fro", help="||W_Q^0||_F", panel=_INIT)] = None,
    wk_fro: Annotated[str | None, _opt("--wk-fro", help="||W_K^0||_F", panel=_INIT)] = None,
    wv_fro: Annotated[str | None, _opt("--wv-fro", help="||W_V^0||_F", panel=_INIT)] = None,
    wq_spec: Annotated[str | None, _opt("--wq-spec", help="||W_Q^0||_2", panel=_INIT)] = None,
    wk_spec: Annotated[str | None, _opt("--wk-spec", help="||W_K^0||_2", panel=_INIT)] = None,
    wv_spec: Annotated[str | None, _opt("--wv-spec", help="||W_V^0||_2", panel=_INIT)] = None,
    wo_norm: Annotated[str | None, _opt("--wo-norm", help="||w_O^0||_2", panel=_INIT)] = None,
    as_printed: Annotated[bool, typer.Option(
        "--as-printed", help="evaluate the paper's printed statements (rho^4 z_hat, M_hat, "
        "sqrt(log(R/delta)/N), unclamped Dudley form) instead of the derived forms",
        rich_help_panel=_HIDDEN)] = False,
    min_probability: Annotated[str | None, _opt(
        "--min-probability", help=PARAMS["min_probability"].help, panel=_HIDDEN,
        default=PARAMS["min_probability"].default)] = None,
    hidden_constants: Annotated[str | None, _opt(
        "--hidden-constants", help="NAME=VALUE,... for C_D, C_cov, C_conf, C_O, C_width, "
        "C_prob, c_hat (each > 0, default 1)", panel=_HIDDEN)] = None,
    format: Annotated[str, format_option(FORMATS, panel=_OUTPUT)] = "table",
    output: Annotated[str | None, typer.Option("--output", "-o", callback=output_file,
                                               metavar="FILE",
                                               help="write to FILE (atomically) instead of "
                                               "stdout", rich_help_panel=_OUTPUT)] = None,
    symbolic: Annotated[bool, typer.Option(
        "--symbolic", help="also print every formula (Unicode and LaTeX) and the discrepancy "
        "table (printed vs derived); alone (no --alpha/--phi0/init flags), only the formulas "
        "(then also as JSON)",
        rich_help_panel=_OUTPUT)] = False,
    strict: Annotated[bool, typer.Option("--strict", help="exit 1 unless GUARANTEED (a "
                                         "condition fails, or the bound is vacuous)",
                                         rich_help_panel=_OUTPUT)] = False,
    precision: Annotated[str | None, _opt("--precision", help="mpmath digits (>= 10)",
                                          panel=_OUTPUT, default="30")] = None,
) -> None:
    """Paper 003, Theorem 5: bound on the true loss of the GD-trained shallow Transformer
    (empirical loss by Lemma 4 + Rademacher complexity by Lemma 1 + confidence term), with every
    quantity of the paper (eta, xi, rho, z, z_hat, M, M_hat, A, P, alpha, Phi0), the conditions of
    Wu et al.'s Theorem 1 as PASS/FAIL rows and the hidden constants named. GUARANTEED only when
    every condition holds, the probability reaches --min-probability (default 0.5) and the bound
    is below the loss range A + Y on the class (with --data also below the measured losses of the
    zero predictor and of theta^0); the status line names the probability and its binding term
    (the paper's exp(-C_prob (N-1)^(-c_hat)/d_s) grows to 1 with N d_s).

    Example: boundcalc generalization --N 10000 --dm 64 --ds 13 --rx 1 --radii 1,1,1,1
    --delta 0.05 --from-init 0 --alpha 0.5 --phi0 100
    """
    from boundcalc.generalization.bound import (
        GENERALIZATION_PRECISION,
        evaluate_inputs,
        validate_generalization,
    )

    fmt = GENERALIZATION["fmt"].check(format)
    norms = {"WQ0_F": wq_fro, "WK0_F": wk_fro, "WV0_F": wv_fro, "WQ0_2": wq_spec,
             "WK0_2": wk_spec, "WV0_2": wv_spec, "WO0_2": wo_norm}
    # every flag given is checked by its row first, with --symbolic too
    checked = check_rows(GENERALIZATION, {
        "N": N, "d_m": dm, "d_s": ds, "d": d, "R_X": rx, "radii": radii, "delta": delta,
        "alpha": alpha, "Phi0": phi0, "Y": label_bound, "seed": from_init,
        "hidden_constants": hidden_constants, "precision": precision, **norms})
    digits = checked.get("precision", GENERALIZATION_PRECISION)
    needs_numbers = any(v is not None for v in (alpha, phi0, from_init, data,
                                                 *norms.values()))
    check_combinations("generalization", {
        "symbolic": symbolic, "fmt": fmt, "needs_numbers": needs_numbers, "data": data,
        "alpha": alpha, "phi0": phi0, "N": N, "ds": ds, "d": d, "wq_fro": wq_fro,
        "wk_fro": wk_fro, "wv_fro": wv_fro, "wq_spec": wq_spec, "wk_spec": wk_spec,
        "wv_spec": wv_spec, "wo_norm": wo_norm})
    if symbolic and not needs_numbers:
        _emit(_symbolic_block(fmt, as_printed), output)
        return
    given = {"N": N, "dm": dm, "ds": ds, "rx": rx, "radii": radii, "delta": delta,
             "label_bound": label_bound}
    values = {k: (v if v is not None else DEFAULTS[k]) for k, v in given.items()}
    sources = {key: ("given" if given[flag] is not None else "default")
               for key, flag in _INPUT_FLAG.items()}
    sources["min_probability"] = ("given (--min-probability)" if min_probability is not None
                                  else "default")
    seed: str | None = from_init
    measured_source: tuple[str, int] | None = None
    measured_losses: dict[str, float] | None = None
    if data is not None:
        from boundcalc.validators.generalization_data import measure_data

        measured = measure_data(data, values["dm"], from_init)
        values["N"], values["ds"] = measured["N"], measured["d_s"]
        sources.update({"N": f"--data {data}", "d_s": f"--data {data}"})
        if rx is None:
            values["rx"] = measured["R_X"]
            sources["R_X"] = f"--data {data} (max_n ||X_n||_F / sqrt(d_s))"
        if label_bound is None:
            values["label_bound"] = measured["y_max"]
            sources["Y"] = f"--data {data} (max_n |y_n|)"
        measured_losses = {"zero_predictor_loss": measured["zero_predictor_loss"],
                           "initial_model_loss": measured["initial_model_loss"]}
        alpha, phi0, norms, seed = measured["alpha"], measured["Phi0"], measured["norms"], None
        d = str(measured["d"])
        measured_source = measured["source"], measured["seed"]
    inputs = validate_generalization(
        N=values["N"], d_m=values["dm"], d_s=values["ds"], R_X=values["rx"],
        radii=values["radii"], delta=values["delta"], alpha=alpha, Phi0=phi0,
        init_norms=norms, seed=seed, d=d, hidden_constants=hidden_constants,
        as_printed=as_printed, Y=values["label_bound"], min_probability=min_probability,
    )
    if measured_source is not None:
        from dataclasses import replace

        inputs = replace(inputs, norms_source=measured_source[0], seed=measured_source[1])
    data_out = evaluate_inputs(inputs, precision=digits, measured=measured_losses)
    text = _render(data_out, fmt, sources, min(digits, 17) if precision is not None else None)
    if symbolic:
        text += "\n\n" + _symbolic_block(fmt, as_printed)
    _emit(text, output)
    guaranteed = data_out["verdict"] == "guaranteed"
    if not guaranteed and (fmt != "table" or output is not None):
        sys.stderr.write(data_out["statement"]["status_line"] + "\n")
    if strict and not guaranteed:
        raise typer.Exit(1)
