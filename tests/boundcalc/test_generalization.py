"""The JSON contract of ``evaluate_generalization`` and of the ``generalization`` command, and the
one-line, flag-naming errors on bad input."""

from __future__ import annotations

import json
import math

import pytest
import typer
from typer.testing import CliRunner

from boundcalc.cli.generalization import generalization
from boundcalc.generalization import evaluate_generalization
from boundcalc.generalization_inputs import NORM_FLAGS, lecun_init_norms
from boundcalc.params import InputError

CONTRACT_QUANTITIES = {"eta_Q", "eta_K", "eta_V", "eta_O", "xi_Q", "xi_K", "xi_V", "rho", "z",
                       "z_hat", "M", "M_hat", "A", "P", "alpha", "Phi0"}
POINT = {"N": 10000, "d_m": 64, "d_s": 13, "R_X": 1, "radii": "1,1,1,1", "delta": 0.05,
         "alpha": 0.5, "Phi0": 100, "seed": 0}


@pytest.fixture(scope="module")
def app() -> typer.Typer:
    app = typer.Typer()
    app.command("generalization")(generalization)

    @app.callback()
    def _root() -> None:  # keeps "generalization" a subcommand
        pass

    return app


@pytest.mark.parametrize("as_printed", [False, True])
def test_result_has_the_contract_keys_and_only_finite_floats(as_printed):
    out = evaluate_generalization(**POINT, as_printed=as_printed)
    assert set(out) == {"statement", "inputs", "quantities", "terms", "bound", "conditions",
                        "probability", "version"}
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


def test_lecun_init_norms_have_the_lecun_scale():
    norms = lecun_init_norms(144, 144, 3)
    for name in ("Q", "K", "V"):
        assert norms[f"W{name}0_F"] == pytest.approx(12.0, rel=0.05)  # sqrt(d_m d / d)
        assert norms[f"W{name}0_2"] == pytest.approx(2.0, rel=0.1)  # (sqrt(d_m)+sqrt(d))/sqrt(d)
    assert norms["WO0_2"] == pytest.approx(1.0, rel=0.2)


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
    ({"R_X": 1e300}, "--rx"),                         # z beyond the float range
    ({"R_X": 1e-300}, "--rx"),                        # Lemma 4's second term beyond it
    ({"alpha": 1e300}, "--alpha"),                    # Lemma 4's first term beyond it
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


def test_command_json_output_is_the_contract(app):
    args = ["generalization", "--N", "10000", "--dm", "64", "--ds", "13", "--rx", "1",
            "--radii", "1,1,1,1", "--delta", "0.05", "--from-init", "0", "--alpha", "0.5",
            "--phi0", "100", "--format", "json"]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads(res.stdout)
    assert data["quantities"] == evaluate_generalization(**POINT)["quantities"]


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "latex"])
def test_command_renders_every_format(app, fmt):
    res = CliRunner().invoke(app, ["generalization", "--from-init", "0", "--alpha", "0.5",
                                   "--phi0", "100", "--format", fmt])
    assert res.exit_code == 0, res.output
    if fmt == "latex":  # quantities are named by their LaTeX symbols
        assert r"$\hat z$" in res.stdout and r"\mathcal{L}_{\mathcal{D}}" in res.stdout
    else:
        assert "z_hat" in res.stdout and "true_loss" in res.stdout


def test_command_symbolic_shows_both_forms_of_each_discrepancy(app):
    res = CliRunner().invoke(app, ["generalization", "--symbolic"])
    assert res.exit_code == 0, res.output
    assert "printed:" in res.stdout and "derived:" in res.stdout
    assert r"\rho^{4} \hat z" in res.stdout and r"z \rho^{2}" in res.stdout
    res = CliRunner().invoke(app, ["generalization", "--symbolic", "--format", "json"])
    keys = [d["key"] for d in json.loads(res.stdout)["discrepancies"]]
    assert {"lemma4_rho_power", "confidence_term", "lemma4_hats"} <= set(keys)


def test_command_bad_flag_raises_input_error_and_strict_exits_1(app):
    res = CliRunner().invoke(app, ["generalization", "--from-init", "0", "--alpha", "0.5",
                                   "--phi0", "100", "--radii", "1,2"])
    assert isinstance(res.exception, InputError) and res.exception.flag == "--radii"
    res = CliRunner().invoke(app, ["generalization", "--from-init", "0", "--alpha", "0.5",
                                   "--phi0", "100", "--strict"])
    assert res.exit_code == 1  # the Lemma 4 conditions fail at this point


def test_calculator_path_never_imports_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from boundcalc.generalization import evaluate_generalization; "
            "import boundcalc.cli.generalization; "
            "evaluate_generalization(N=100, d_m=8, d_s=3, R_X=1, radii=1, delta=0.1, alpha=1, "
            "Phi0=1, seed=0); print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip() == "False"


def test_the_calculator_modules_import_no_validators():
    import ast
    from pathlib import Path

    import boundcalc.generalization as gen
    import boundcalc.generalization_inputs as inputs

    for module in (gen, inputs):
        tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
        names = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
        names += [n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
        assert not [n for n in names if "validators" in n or n == "torch"], module.__name__
