"""The JSON contract of ``evaluate_generalization`` (boundcalc/generalization/bound.py), its
verdict, and the one-line, flag-naming errors on bad input (the command's tests are
tests/boundcalc/cli/test_generalization.py)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.generalization.bound import evaluate_generalization
from boundcalc.generalization.bound_inputs import lecun_init_norms
from boundcalc.inputs.params import InputError
from boundcalc.inputs.surfaces import NORM_FLAGS

CONTRACT_QUANTITIES = {"eta_Q", "eta_K", "eta_V", "eta_O", "xi_Q", "xi_K", "xi_V", "rho", "z",
                       "z_hat", "M", "M_hat", "A", "P", "alpha", "Phi0"}
POINT = {"N": 10000, "d_m": 64, "d_s": 13, "R_X": 1, "radii": "1,1,1,1", "delta": 0.05,
         "alpha": 0.5, "Phi0": 100, "seed": 0}


@pytest.mark.parametrize("as_printed", [False, True])
def test_result_has_the_contract_keys_and_only_finite_floats(as_printed):
    out = evaluate_generalization(**POINT, as_printed=as_printed)
    assert set(out) == {"statement", "verdict", "inputs", "quantities", "terms", "bound",
                        "conditions", "probability", "version"}
    assert set(out["quantities"]) >= CONTRACT_QUANTITIES
    assert set(out["terms"]) == {"empirical_loss", "rademacher", "confidence"}
    assert set(out["bound"]) == {"true_loss"}
    for group in ("quantities", "terms", "bound"):
        for key, value in out[group].items():
            assert isinstance(value, float) and math.isfinite(value), (group, key)
    assert all(set(c) == {"name", "holds", "detail"} for c in out["conditions"])
    assert out["statement"]["form"] == ("as_printed" if as_printed else "derived")
    json.dumps(out, allow_nan=False)  # JSON-ready


def test_statement_names_every_hidden_constant_and_the_inputs_carry_their_values():
    out = evaluate_generalization(**POINT)
    for name in ("C_D", "C_cov", "C_conf", "C_O", "C_width", "C_prob", "c_hat"):
        assert name in out["statement"]["hidden_constants"]
        if name != "C_conf":  # the one default the derivation gives: 3 (A + Y)
            assert out["inputs"][name] == 1.0
    for key in ("lemma4_rho_power", "lemma4_hats", "confidence_term"):
        assert key in out["statement"]["discrepancies"]


def test_from_init_is_reproducible_and_matches_given_norms():
    drawn = evaluate_generalization(**POINT)
    again = evaluate_generalization(**POINT)
    assert drawn["quantities"] == again["quantities"]
    norms = lecun_init_norms(64, 64, 0)
    given = evaluate_generalization(**{**POINT, "seed": None}, init_norms=norms)
    assert given["quantities"] == drawn["quantities"]
    assert given["inputs"]["norms_source"] == "given"


@pytest.mark.parametrize(("change", "flag"), [
    ({"N": 1}, "--N"),
    ({"N": "ten"}, "--N"),
    ({"d_m": 0}, "--dm"),
    ({"d_s": 2.5}, "--ds"),
    ({"R_X": -1}, "--rx"),
    ({"radii": "1,1,1"}, "--radii"),
    ({"radii": "1,0,1,1"}, "--radii"),
    ({"delta": 1.5}, "--delta"),
    ({"alpha": None}, "--alpha"),
    ({"alpha": 0}, "--alpha"),
    ({"Phi0": None}, "--phi0"),
    ({"Phi0": -1}, "--phi0"),
    ({"seed": None}, "--from-init"),
    ({"seed": -3}, "--from-init"),
    ({"hidden_constants": "C_D=0"}, "--hidden-constants"),
    ({"hidden_constants": "nope=2"}, "--hidden-constants"),
    ({"hidden_constants": "C_D"}, "--hidden-constants"),
    ({"Y": -1}, "--label-bound"),
    ({"Y": "many"}, "--label-bound"),
    ({"Y": 1e308}, "--label-bound"),  # C_conf = 3 (A + Y) overflows
    ({"R_X": 1e300}, "--rx"),  # z overflows
    ({"R_X": 1e-300}, "--rx"),  # Lemma 4's second term beyond the float range
    ({"alpha": 1e300}, "--alpha"),  # Lemma 4's first term beyond it
])
def test_bad_input_raises_input_error_naming_the_flag(change, flag):
    with pytest.raises(InputError) as err:
        evaluate_generalization(**{**POINT, **change})
    assert err.value.flag == flag
    assert str(err.value).startswith(flag) and "\n" not in str(err.value)


def test_partial_or_inconsistent_norms_name_the_offending_flag():
    norms = dict.fromkeys(NORM_FLAGS, 2.0)
    with pytest.raises(InputError) as err:
        evaluate_generalization(**{**POINT, "seed": None}, init_norms={"WQ0_F": 2.0})
    assert err.value.flag == "--wk-fro"
    with pytest.raises(InputError) as err:
        evaluate_generalization(**POINT, init_norms=norms)
    assert err.value.flag == "--from-init"
    with pytest.raises(InputError) as err:
        evaluate_generalization(**{**POINT, "seed": None}, init_norms={**norms, "WV0_2": 3.0})
    assert err.value.flag == "--wv-spec"


def test_printed_confidence_term_needs_R_above_delta():
    with pytest.raises(InputError) as err:
        evaluate_generalization(**{**POINT, "radii": "0.01"}, as_printed=True)
    assert err.value.flag == "--radii"
    evaluate_generalization(**{**POINT, "radii": "0.01"})  # the derived form has no such limit


@pytest.mark.slow
def test_calculator_path_never_imports_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from boundcalc.generalization.bound import evaluate_generalization; "
            "import boundcalc.cli.generalization; "
            "evaluate_generalization(N=100, d_m=8, d_s=3, R_X=1, radii=1, delta=0.1, alpha=1, "
            "Phi0=1, seed=0); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_calculator_modules_import_no_validators():
    import ast
    from pathlib import Path

    import boundcalc.generalization.bound as gen
    import boundcalc.generalization.bound_inputs as inputs

    for module in (gen, inputs):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if "validators" in n or n == "torch"], module.__name__


# ---------------------------------------------------------------------------------------------
# The verdict: guaranteed only below what holds without the theorem
# ---------------------------------------------------------------------------------------------

#: Every condition holds (d_m = N^3, Phi0 = 0, C_prob large enough for a positive probability)
#: and the bound, 0.912, is below the loss range A + Y = 1.0004.
SMALL_CLASS = {"N": 20, "d_m": 8000, "d_s": 1, "R_X": 1, "radii": 0.01, "delta": 0.05,
               "alpha": 1e-3, "Phi0": 0, "Y": 1, "hidden_constants": "C_prob=100",
               "init_norms": dict.fromkeys(NORM_FLAGS, 0.01)}


def test_a_bound_below_the_loss_range_with_every_condition_holding_is_guaranteed():
    out = evaluate_generalization(**SMALL_CLASS)
    assert all(c["holds"] for c in out["conditions"])
    assert out["bound"]["true_loss"] < out["quantities"]["loss_range"]
    assert out["verdict"] == "guaranteed" and out["statement"]["guaranteed"]
    assert out["statement"]["status_line"].startswith(
        "GUARANTEED: all 4 conditions hold; true_loss 0.9122 < 1 = A + Y, the loss range on the "
        "class; assumes |y| ≤ Y = 1 and C_D = C_cov = C_width = c_hat = 1, C_prob = 100 "
        "(not derived)")


def test_the_loss_range_is_A_plus_Y_and_binds_a_bound_above_it():
    # a smaller label bound shrinks both the loss range and C_conf = 3 (A + Y), but the
    # Rademacher term 2 A stays: the bound ends up above A + Y with every condition holding
    out = evaluate_generalization(**{**SMALL_CLASS, "Y": 1e-4})
    q = out["quantities"]
    assert q["loss_range"] == pytest.approx(q["A"] + 1e-4, rel=1e-12)
    assert all(c["holds"] for c in out["conditions"])
    assert out["bound"]["true_loss"] >= q["loss_range"]
    assert out["verdict"] == "vacuous" and not out["statement"]["guaranteed"]
    assert out["statement"]["conditions_hold"]
    assert out["statement"]["free_bound_name"] == "loss_range"
    assert out["statement"]["free_bound"] == q["loss_range"]
    assert out["statement"]["status_line"].startswith(
        "VACUOUS: true_loss 0.001256 ≥ 0.0005 = A + Y, the loss range on the class "
        "(all 4 conditions hold)")


def test_a_measured_loss_below_the_bound_makes_it_vacuous_and_is_named():
    out = evaluate_generalization(**SMALL_CLASS, measured={"zero_predictor_loss": 0.5,
                                                           "initial_model_loss": 0.7})
    assert out["measured"] == {"zero_predictor_loss": 0.5, "initial_model_loss": 0.7}
    assert out["verdict"] == "vacuous"
    assert out["statement"]["free_bound_name"] == "zero_predictor_loss"
    assert out["statement"]["status_line"].startswith(
        "VACUOUS: true_loss 0.9122 ≥ 0.5 = the zero predictor's measured loss on the data, "
        "≥ 0.7 = the initial model's measured loss on the data (all 4 conditions hold)")
    above = evaluate_generalization(**SMALL_CLASS, measured={"zero_predictor_loss": 0.95})
    assert above["verdict"] == "guaranteed"
    with pytest.raises(ValueError, match="measured"):
        evaluate_generalization(**SMALL_CLASS, measured={"held_out": 0.5})


def test_a_failing_condition_is_not_guaranteed_whatever_the_yardstick():
    out = evaluate_generalization(**{**SMALL_CLASS, "d_m": 7999})  # d_m < N^3
    assert out["verdict"] == "not_guaranteed" and not out["statement"]["conditions_hold"]
    assert out["statement"]["status_line"].startswith(
        "NOT GUARANTEED: width fails, the bound is not guaranteed; true_loss 0.9122 < 1 = A + Y")


def test_C_conf_defaults_to_three_times_the_loss_range_and_a_given_one_is_an_assumption():
    # Mohri et al. Thm 3.1 (line 125): 3c sqrt(log(2/delta)/(2N)) for a loss in [0, c]
    out = evaluate_generalization(**POINT)
    c = out["quantities"]["loss_range"]
    assert out["inputs"]["C_conf"] == pytest.approx(3 * c, rel=1e-12)
    unit = evaluate_generalization(**POINT, hidden_constants="C_conf=1")
    assert out["terms"]["confidence"] == pytest.approx(3 * c * unit["terms"]["confidence"],
                                                       rel=1e-12)
    assert "C_conf" not in out["statement"]["assumptions"]
    assert "C_D = C_cov = C_conf = C_width = C_prob = c_hat = 1" in (
        unit["statement"]["assumptions"])
    assert "C_conf = " + f"{3 * c:g} (derived: 3 (A + Y))" in out["statement"]["hidden_constants"]


def test_the_status_line_names_the_constants_each_form_assumes():
    derived = evaluate_generalization(**POINT)["statement"]["assumptions"]
    printed = evaluate_generalization(**POINT, as_printed=True)["statement"]["assumptions"]
    assert derived == "|y| ≤ Y = 1 and C_D = C_cov = C_width = C_prob = c_hat = 1 (not derived)"
    assert printed == "|y| ≤ Y = 1 and C_cov = C_O = C_width = C_prob = c_hat = 1 (not derived)"


_NORMS = st.tuples(*(st.floats(1e-3, 10.0) for _ in range(3)),
                   *(st.floats(0.05, 1.0) for _ in range(3)), st.floats(1e-3, 10.0))


@st.composite
def _points(draw: st.DrawFn) -> dict:
    n = draw(st.integers(2, 40))
    fro_q, fro_k, fro_v, sq, sk, sv, wo = draw(_NORMS)
    measured = draw(st.one_of(st.none(), st.fixed_dictionaries(
        {"zero_predictor_loss": st.floats(0.0, 50.0),
         "initial_model_loss": st.floats(0.0, 50.0)})))
    hidden = draw(st.sampled_from([None, "C_prob=100", "C_prob=1e4,C_D=12", "C_conf=1",
                                   "C_prob=1e4,C_cov=0.01"]))
    return {
        "N": n, "d_m": max(1, round(n**3 * draw(st.floats(0.5, 2.0)))),
        "d_s": draw(st.integers(1, 4)), "R_X": draw(st.floats(0.01, 3.0)),
        "radii": draw(st.tuples(*(st.floats(0.21, 3.0) for _ in range(4)))),
        "delta": draw(st.floats(0.001, 0.4)), "alpha": draw(st.floats(1e-3, 5.0)),
        "Phi0": draw(st.one_of(st.just(0.0), st.floats(1e-12, 10.0))),
        "Y": draw(st.floats(0.0, 1e3)), "hidden_constants": hidden, "measured": measured,
        "as_printed": draw(st.booleans()),
        "init_norms": {"WQ0_F": fro_q, "WK0_F": fro_k, "WV0_F": fro_v, "WQ0_2": sq * fro_q,
                       "WK0_2": sk * fro_k, "WV0_2": sv * fro_v, "WO0_2": wo},
    }


@settings(deadline=None, max_examples=80, suppress_health_check=[HealthCheck.too_slow])
@given(_points())
def test_guaranteed_iff_every_condition_holds_and_the_bound_is_below_every_free_bound(point):
    out = evaluate_generalization(**point)
    holds = all(c["holds"] for c in out["conditions"])
    q, bound = out["quantities"], out["bound"]["true_loss"]
    assert q["loss_range"] == pytest.approx(q["A"] + point["Y"], rel=1e-12)
    yardsticks = {"loss_range": q["loss_range"], **(point["measured"] or {})}
    free = min(yardsticks.values())
    # a bound below every yardstick that holds with probability below the default minimum ½
    # is not guaranteed; one at or above a yardstick is vacuous whatever its probability
    probable = out["probability"] >= 0.5
    expected = ("not_guaranteed" if not holds else "vacuous" if not bound < free
                else "guaranteed" if probable else "not_guaranteed")
    assert out["verdict"] == expected
    assert out["statement"]["guaranteed"] == (expected == "guaranteed")
    assert out["statement"]["conditions_hold"] == holds
    assert out["statement"]["free_bound"] == free
    prefix = {"guaranteed": "GUARANTEED", "vacuous": "VACUOUS",
              "not_guaranteed": "NOT GUARANTEED"}[expected]
    assert out["statement"]["status_line"].startswith(prefix + ":")


@pytest.mark.parametrize("change", [{"Y": 1e308}, {"R_X": 1e300}, {"alpha": 1e300}])
def test_a_result_beyond_the_float_range_is_an_overflow_not_a_bad_input(change):
    """Each input is in its range; the quantity computed from them is not a float."""
    from boundcalc.errors import ResultOverflowError

    with pytest.raises(ResultOverflowError) as err:
        evaluate_generalization(**{**POINT, **change})
    assert "overflow the float range" in str(err.value)
