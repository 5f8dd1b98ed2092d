"""The Python API's keyword values (:mod:`boundcalc.inputs.keywords`): ``boundcalc.evaluate`` and
``boundcalc.sweep`` refuse a bad value naming the keyword, accept what the CLI accepts, and
give the same inputs as the CLI's flags."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

import boundcalc
from boundcalc.errors import InputError
from boundcalc.inputs.keywords import (
    COMPONENTS,
    check_exact,
    keyword_of,
    point_value,
    precision_digits,
    sweep_given,
    sweep_spec,
    value_text,
)


def test_components_are_the_six_rho_and_nu_columns():
    assert COMPONENTS == ("rho_c", "rho_u", "rho_w", "nu_c", "nu_u", "nu_w")


@pytest.mark.parametrize(("keywords", "name"), [
    ({"m": 3}, "m"),
    ({"n": 0}, "n"),
    ({"delta": 1.5}, "delta"),
    ({"rho": -1}, "rho"),
    ({"nu": (1, 1)}, "nu"),
    ({"batch_size": 2.5}, "batch_size"),
    ({"m": True}, "m"),
    ({"m": [512, 1024]}, "m"),
    ({"activation": 3}, "activation"),
    ({"precision": 5}, "precision"),
    ({"route": "sideways"}, "route"),
])
def test_evaluate_refuses_a_bad_value_naming_its_keyword(keywords, name):
    with pytest.raises(InputError) as info:
        boundcalc.evaluate("theorem1", **keywords)
    message = str(info.value)
    assert info.value.flag == name and message.startswith(name + " "), message
    assert "--" + name.replace("_", "-") not in message.split()[0]
    assert "\n" not in message


def test_an_unknown_statement_is_refused_naming_statement():
    with pytest.raises(InputError) as info:
        boundcalc.evaluate("theorem9")
    assert str(info.value).startswith("statement must be one of ")


def test_an_unknown_keyword_is_a_type_error_naming_it():
    with pytest.raises(TypeError, match="'widht'"):
        boundcalc.evaluate("theorem1", widht=8)
    with pytest.raises(TypeError, match="'widht'"):
        boundcalc.sweep("theorem1", widht=[8, 16])


@pytest.mark.parametrize("exact", ["no", 0, 1, None])
def test_exact_takes_only_true_or_false(exact):
    with pytest.raises(InputError, match="^exact must be True or False"):
        check_exact(exact)


@pytest.mark.parametrize(("keywords", "name"), [
    ({"m": [512, 3]}, "m"),
    ({"m": []}, "m"),
    ({"rho": [(1, 1, 1), (2, 2, 2)]}, "rho"),
    ({"rho": (1, 2)}, "rho"),
    ({"rho": (1, 2, 3), "rho_u": [1, 2]}, "rho_u"),
    ({"route": []}, "route"),
])
def test_sweep_refuses_a_bad_value_naming_its_keyword(keywords, name):
    with pytest.raises(InputError) as info:
        boundcalc.sweep("theorem1", **keywords)
    assert info.value.flag == name and str(info.value).startswith(name + " "), str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(("value", "text"), [
    (512, "512"), (0.05, "0.05"), (Decimal("0.050"), "0.050"), ("1e3", "1e3"), (0.1 + 0.2,
                                                                                repr(0.1 + 0.2)),
])
def test_a_value_is_read_from_its_shortest_text(value, text):
    assert value_text("delta", value) == text


def test_a_float_keyword_is_the_exact_decimal_of_its_shortest_text():
    """``delta=0.05`` is exactly 1/20, as ``--delta 0.05``, not the binary float's expansion."""
    from fractions import Fraction

    from boundcalc.inputs.params import validate

    inputs = validate(delta=point_value("delta", 0.05), eta=point_value("eta", 0.1))
    assert inputs.exact_values()["delta"] == Fraction(1, 20)
    assert inputs.exact_values()["eta"] == Fraction(1, 10)


#: Keyword inputs and the CLI flags that mean the same point.
SAME_POINT = [
    ({"m": 512, "n": 1000, "rho": (2, 3, 1)},
     ["--m", "512", "--n", "1000", "--rho", "2,3,1"]),
    ({"m": "1e3", "delta": 0.01, "nu": 2, "steps": 100.0},
     ["--m", "1e3", "--delta", "0.01", "--nu", "2", "--steps", "100"]),
    ({"m": 64, "eta": Decimal("0.001"), "activation": "erf", "n": 20},
     ["--m", "64", "--eta", "0.001", "--activation", "erf", "--n", "20"]),
]


@pytest.mark.parametrize(("keywords", "flags"), SAME_POINT)
def test_evaluate_gives_the_cli_inputs_and_result(keywords, flags, cli):
    run = cli("theorem1", *flags, "--format", "json")
    assert run.code == 0, run.err
    shown = json.loads(run.out)
    result = boundcalc.evaluate("theorem1", **keywords).to_dict()
    assert result["inputs"] == shown["inputs"]
    assert result["bound"] == shown["bound"]


def test_what_the_cli_refuses_evaluate_refuses_with_the_same_rule(cli):
    """The same rule words, the flag renamed to the keyword (the CLI quotes the text it read,
    the API the value it was given)."""
    run = cli("theorem1", "--m", "3", "--format", "json")
    assert run.code == 2
    with pytest.raises(InputError) as info:
        boundcalc.evaluate("theorem1", m=3)
    rule = str(info.value).removeprefix("m ").split(", got")[0]
    assert run.err.startswith("error: --m " + rule + ", got"), run.err


def test_sweep_keywords_are_the_sweep_flags_text():
    given = sweep_given({"m": [512, 4096.0], "rho": (2, 3, 1), "nu_u": [1, 2], "n": 1000,
                         "activation": "erf", "delta": None})
    assert given == {"m": "512,4096.0", "rho_c": "2", "rho_u": "3", "rho_w": "1",
                     "nu_u": "1,2", "n": "1000"}
    assert sweep_spec("m", "8:64:x2") == "8:64:x2"
    assert sweep_spec("m", range(2, 8, 2)) == "2,4,6"


def test_sweep_gives_the_cli_sweep_rows(cli):
    run = cli("sweep", "theorem1", "--m", "512,4096", "--n", "1000", "--rho", "2",
              "--format", "json")
    assert run.code == 0, run.err
    frame = boundcalc.sweep("theorem1", m=[512, 4096], n=1000, rho=2)
    rows = json.loads(run.out)
    rows = rows["rows"] if isinstance(rows, dict) else rows
    assert [r["m"] for r in rows] == frame["m"].tolist()
    assert [r["bound.min_iterate"] for r in rows] == pytest.approx(
        frame["bound.min_iterate"].tolist(), rel=1e-12)


def test_point_value_keeps_a_triple_as_its_components_text():
    assert point_value("rho", (2, 3.5, Decimal("1.25"))) == "2,3.5,1.25"
    assert point_value("m", 512) == 512 and isinstance(point_value("m", 512), int)


@pytest.mark.parametrize(("value", "digits"), [(None, 20), (10, 10), ("1000", 1000)])
def test_precision_accepts_the_cli_range(value, digits):
    assert precision_digits(value) == digits


@pytest.mark.parametrize("value", [9, 1001, 2.5])
def test_precision_outside_10_to_1000_is_refused(value):
    with pytest.raises(InputError, match="^precision "):
        precision_digits(value)


def test_keyword_of_every_component_flag_is_its_component():
    assert [keyword_of("--" + c.replace("_", "-")) for c in COMPONENTS] == list(COMPONENTS)
