"""boundcalc.notebook: ``boundcalc.evaluate`` and ``boundcalc.sweep`` give what the CLI gives, with
keyword inputs, floats by default, and errors naming the keyword."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from decimal import Decimal

import mpmath
import numpy as np
import pandas as pd
import pytest

import boundcalc
from boundcalc.calc.api import Evaluation
from boundcalc.calc.api import evaluate as evaluate_point
from boundcalc.calc.sweep import build_sweep
from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.inputs.params import validate
from boundcalc.notebook import evaluate, sweep


def _cli_json(*argv: str) -> dict:
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main([*argv, "--format", "json"]) == 0
    return json.loads(buf.getvalue())


def test_the_package_exports_the_notebook_functions():
    assert boundcalc.evaluate is evaluate and boundcalc.sweep is sweep
    assert {"evaluate", "sweep"} <= set(boundcalc.__all__) <= set(dir(boundcalc))
    with pytest.raises(AttributeError):
        boundcalc.no_such_name  # noqa: B018


def test_evaluate_gives_the_cli_numbers_as_python_floats():
    res = boundcalc.evaluate("theorem1", m=512, n=1000, rho=2)
    assert isinstance(res, Evaluation)
    for group in (res.constants, res.terms, res.bound):
        assert all(type(v) is float for v in group.values())
    assert type(res.probability) is float
    cli = _cli_json("theorem1", "--m", "512", "--n", "1000", "--rho", "2")
    assert res.verdict == cli["verdict"] == "vacuous"  # 23.26 ≥ Y² = 9
    assert res.free_bound == ("initial_loss_bound", cli["constants"]["initial_loss_bound"])
    assert res.active_drift_bound == cli["active_drift_bound"]
    assert res.bound == cli["bound"] and res.constants == cli["constants"]
    assert res.inputs == cli["inputs"]  # every default filled, as the CLI shows them
    data = res.to_dict()
    assert data["bound"] == cli["bound"] and data["statement"] == cli["statement"]


def test_exact_gives_the_mpmath_evaluation_at_the_precision_asked():
    res = evaluate("theorem1", m=512, n=1000, rho=2, exact=True, precision=40)
    reference = evaluate_point("theorem1", validate(m=512, n=1000, rho="2"), precision=40)
    assert res.exact is None and res.precision == 40
    assert all(isinstance(v, mpmath.mpf) for v in res.bound.values())
    assert res.bound == reference.bound and res.to_dict() == reference.to_dict()
    floats = evaluate("theorem1", m=512, n=1000, rho=2, precision=40)
    assert floats.exact is not None and floats.exact.bound == reference.bound
    assert floats.bound == {k: float(v) for k, v in reference.bound.items()}


@pytest.mark.parametrize("kwargs", [
    {"m": 512, "delta": 0.05, "rho": (2, 3, 1), "nu": 1},
    {"m": "512", "delta": "0.05", "rho": "2,3,1", "nu": "1"},
    {"m": np.int64(512), "delta": np.float64(0.05), "rho": (2.0, "3", Decimal(1)), "nu": 1.0},
    {"m": 512.0, "delta": Decimal("0.05"), "rho": (2, 3, 1)},
])
def test_numbers_as_ints_floats_strings_and_tuples_give_one_exact_point(kwargs):
    reference = evaluate_point("theorem1_paper", validate(m=512, delta="0.05", rho="2,3,1"))
    res = evaluate("theorem1", route="paper", exact=True, **kwargs)
    assert res.to_dict() == reference.to_dict()


def test_route_precision_and_the_defaults():
    assert evaluate("theorem1", route="paper").statement.route == "paper"
    assert evaluate("theorem1", route=" Tight ").statement.route == "tight"
    res = evaluate("prop1", batch_size=32, misspecification=None)
    assert res.inputs["b"] == 32 and res.inputs["K"] == 4000
    assert evaluate("remark9", misspecification=0.1).inputs["epsilon_mis"] == 0.1
    assert evaluate("lemma2", m=64).verdict is None


def test_prop2_takes_alpha_as_the_cli_does():
    res = evaluate("prop2", T=8, alpha=0.9)
    assert res.to_dict()["bound"] == _cli_json("prop2", "--T", "8", "--alpha", "0.9")["bound"]
    assert evaluate("prop2", alpha=1.5).to_dict() == evaluate("prop2").to_dict()
    with pytest.raises(InputError, match="^alpha is for prop2 only"):
        evaluate("theorem1", alpha=0.5)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"m": 3}, "m must be a positive even integer (symmetric init), got 3"),
    ({"delta": 1.5}, "delta must lie in (0, 1), got 1.5"),
    ({"batch_size": 0}, "batch_size must be >= 1, got 0"),
    ({"rho": (1, 2)}, "rho takes one value or three comma-separated values, got '1,2'"),
    ({"rho": [1, 2]}, "rho takes one value here, got [1, 2] (boundcalc.sweep takes lists)"),
    ({"m": True}, "m must be a number or its text, got True"),
    ({"activation": 3}, "activation must be tanh, erf or 'custom:S0,S1,S2', got 3"),
    ({"activation": "relu"}, "activation must be tanh, erf or custom:S0,S1,S2, got 'relu'"),
    ({"nu": 0}, "nu needs a positive component when --eta is not given"),
    ({"precision": 5}, "precision must be an integer between 10 and 1000, got 5"),
    ({"route": "fast"}, "route must be one of tight, paper, gradnorm, joint, blocks, got 'fast'"),
    ({"T": 0}, "T must be >= 1, got 0"),
    ({"exact": "yes"}, "exact must be True or False, got 'yes'"),
    ({"exact": 1}, "exact must be True or False, got 1"),
])
def test_bad_input_raises_input_error_naming_the_keyword(kwargs, message):
    with pytest.raises(InputError) as info:
        evaluate("theorem1", **kwargs)
    assert str(info.value).startswith(message)
    assert info.value.flag == message.split()[0]


def test_a_statement_without_a_route_and_an_unknown_statement():
    with pytest.raises(InputError, match="^route is for theorem1, prop1, remark9 only"):
        evaluate("lemma2", route="paper")
    with pytest.raises(InputError, match="^statement must be one of event, lemma2"):
        evaluate("theorem9")


def test_an_unknown_keyword_is_a_type_error_listing_the_keywords():
    with pytest.raises(TypeError, match="unexpected keyword argument 'mm'.*m, n, d, T"):
        evaluate("theorem1", mm=512)
    with pytest.raises(TypeError, match="unexpected keyword argument 'K'"):
        sweep("theorem1", K=[1, 2])


def test_the_signatures_name_every_keyword():
    import inspect

    assert list(inspect.signature(evaluate).parameters)[5:] == [
        "m", "n", "d", "T", "delta", "rho", "nu", "steps", "eta", "activation", "batch_size",
        "misspecification", "min_probability"]
    assert "rho_u" in inspect.signature(sweep).parameters


def test_to_frame_has_one_row_per_quantity_condition_and_the_verdict():
    res = evaluate("theorem1", m=512, n=1000, rho=2)
    frame = res.to_frame()
    assert list(frame.columns) == ["section", "name", "value", "description"]
    assert list(dict.fromkeys(frame["section"])) == [
        "inputs", "constants", "terms", "bound", "probability", "conditions", "verdict"]
    rows = frame.set_index(["section", "name"])["value"]
    assert rows[("bound", "min_iterate")] == res.bound["min_iterate"]
    assert rows[("inputs", "m")] == 512 and rows[("verdict", "verdict")] == "vacuous"
    assert rows[("verdict", "free_bound")] == "initial_loss_bound"
    assert rows[("conditions", "m_even")] is True
    assert len(frame) == (len(res.inputs) + len(res.constants) + len(res.terms) + len(res.bound)
                          + 1 + len(res.conditions) + 7)  # 7: probability_sufficient too
    assert rows[("verdict", "probability_sufficient")] is True


def test_repr_html_shows_every_section_as_a_table():
    text = evaluate("theorem1", m=512, n=1000, rho=2)._repr_html_()
    assert text.count("<table") == 7
    for word in ("theorem1", "tight route", "min_iterate", "23.2556", "PASS", "guaranteed",
                 "cauchy_schwarz"):
        assert word in text
    failing = evaluate("theorem1", rho=0.5)._repr_html_()
    assert "FAIL" in failing and "not_guaranteed" in failing


def test_a_value_beyond_the_float_range_stays_exact_never_inf():
    res = evaluate("theorem1", rho="1e300")
    assert res.verdict == "overflow" and "bound.min_iterate" in res.overflow
    assert isinstance(res.bound["min_iterate"], mpmath.mpf)
    assert res.to_dict()["bound"]["min_iterate"].endswith("e+1197")
    assert "e+1197" in res._repr_html_() and ">inf<" not in res._repr_html_()


def test_a_value_below_the_float_range_stays_exact_never_zero():
    res = evaluate("theorem1", nu="1e-300", rho="1e10")
    step = res.constants["theorem_step_size"]
    assert isinstance(step, mpmath.mpf) and 0 < step < mpmath.mpf("1e-329")
    assert res.inputs["eta"] == step and res.verdict == "vacuous"
    assert "7.010849e-330" in res._repr_html_()


# --------------------------------------------------------------------------- sweep


def test_sweep_is_the_cli_sweep(tmp_path):
    df = boundcalc.sweep("theorem1", m=[256, 512, 1024], n=1000, rho=2)
    expected, _ = build_sweep("theorem1", {"m": "256,512,1024", "n": "1000", "rho": "2"}, None)
    pd.testing.assert_frame_equal(df, expected)
    out = tmp_path / "sweep.csv"
    assert main(["sweep", "theorem1", "--m", "256,512,1024", "--n", "1000", "--rho", "2",
                 "--format", "csv", "--output", str(out)]) == 0
    cli = pd.read_csv(out, float_precision="round_trip")  # exact on every pandas
    assert list(cli.columns) == list(df.columns)
    assert len(df) == 3 and df["m"].tolist() == [256, 512, 1024]
    np.testing.assert_array_equal(cli["bound.min_iterate"], df["bound.min_iterate"])


def test_sweep_ranges_components_and_tuples():
    ranged = sweep("lemma3", m="64:256:x2", rho_u=[1, 2])
    assert ranged["m"].tolist() == [64, 64, 128, 128, 256, 256]
    assert ranged["rho_u"].tolist() == [1.0, 2.0] * 3 and set(ranged["rho_c"]) == {2.0}
    triple = sweep("theorem1", m=[512, 1024], rho=(2, 3, 1))
    assert triple[["rho_c", "rho_u", "rho_w"]].drop_duplicates().values.tolist() == [[2, 3, 1]]
    uniform = sweep("theorem1", rho=[1, 2], steps=range(1000, 3001, 1000))
    assert len(uniform) == 6 and uniform["K"].tolist()[:3] == [1000, 2000, 3000]
    assert np.array_equal(sweep("theorem1", m=np.array([64, 128]))["m"], [64, 128])


def test_sweep_stacks_routes_and_activations():
    df = sweep("theorem1", m=[512, 4096], rho=3, nu=3, route=["tight", "paper"],
               activation=["tanh", "erf"])
    assert len(df) == 8
    assert df["route"].tolist() == ["tight"] * 4 + ["paper"] * 4
    assert df["activation"].tolist() == (["tanh"] * 2 + ["erf"] * 2) * 2
    assert isinstance(df["verdict"].dtype, pd.CategoricalDtype)
    paper, _ = build_sweep("theorem1_paper", {"m": "512,4096", "rho": "3", "nu": "3"}, "erf")
    pd.testing.assert_frame_equal(df.iloc[6:][list(paper.columns)].reset_index(drop=True),
                                  paper, check_dtype=False)


def test_sweep_takes_alpha_for_prop2_as_the_cli_does():
    df = sweep("prop2", m=200000, alpha=[0.5, 1.5])
    assert df["alpha"].tolist() == [0.5, 1.5]
    assert df["verdict"].tolist() == ["guaranteed", "vacuous"]
    with pytest.raises(InputError, match="^alpha is for prop2 only"):
        sweep("lemma2", alpha=1)
    with pytest.raises(InputError, match="^alpha must be > 0, got '-1'"):
        sweep("prop2", alpha=[1, -1])


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"m": [64, 3]}, "m must be a positive even integer (symmetric init), got '3'"),
    ({"m": []}, "m must not be an empty list"),
    ({"rho": [(1, 2, 3)]}, "rho takes a list of uniform values in a sweep"),
    ({"rho": (1, 2)}, "rho takes one value or three components"),
    ({"rho": (1, 2, 3), "rho_u": 2}, "rho_u is given twice"),
    ({"route": ["tight", "fast"]}, "route must be one of tight, paper"),
    ({"activation": ["tanh", 3]}, "activation must be tanh, erf"),
    ({"n": "1:2000000:1"}, "n gives 2000000 values, more than the limit"),
    ({"T": [8, 0]}, "T must be >= 1, got '0'"),
])
def test_bad_sweep_input_raises_input_error_naming_the_keyword(kwargs, message):
    with pytest.raises(InputError) as info:
        sweep("theorem1", **kwargs)
    assert str(info.value).startswith(message)


def test_an_evaluation_reads_as_one_line_with_its_route_verdict_and_bound():
    text = repr(evaluate("theorem1", m=512, n=1000, rho=2))
    assert text.startswith("Evaluation(theorem1, route=tight, verdict=vacuous, min_iterate=23.")
    blocks = repr(evaluate("theorem1", m=512, n=1000, rho=2, route="blocks"))
    assert blocks.startswith("Evaluation(theorem1, route=blocks, verdict=vacuous, min_iterate=25.")
    assert "\n" not in text and len(text) < 200
    lemma = repr(evaluate("lemma2", m=64, rho=2))
    assert lemma.startswith("Evaluation(lemma2, conditions_hold=True, lipschitz_L=")


def test_calculator_frames_carry_statement_route_and_version_in_attrs():
    version = boundcalc.__version__
    assert evaluate("theorem1", route="paper").to_frame().attrs == {
        "statement": "theorem1", "route": "paper", "version": version}
    assert boundcalc.sweep("lemma2", m=[64, 128]).attrs == {
        "statement": "lemma2", "route": None, "version": version}
    both = boundcalc.sweep("theorem1", m=[512], route=["tight", "paper"])
    assert both.attrs["route"] == ["tight", "paper"] and both.attrs["statement"] == "theorem1"
