"""``boundcalc generalization`` (boundcalc/cli/generalization.py): its JSON output is
``evaluate_generalization``'s contract, every format renders, ``--symbolic`` shows both forms,
bad flags are named and ``--strict`` exits 1 unless the bound is guaranteed."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
import typer
from typer.testing import CliRunner

from boundcalc.cli import main
from boundcalc.cli.generalization import generalization
from boundcalc.generalization.bound import evaluate_generalization
from boundcalc.inputs.params import InputError
from boundcalc.inputs.surfaces import NORM_FLAGS

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


def test_command_strict_exits_1_on_a_vacuous_bound_and_names_the_yardstick(app):
    norms = [f"{flag}=0.01" for flag in NORM_FLAGS.values()]
    base = ["generalization", "--N", "20", "--dm", "8000", "--ds", "1", "--rx", "1",
            "--radii", "0.01", "--alpha", "0.001", "--phi0", "0",
            "--hidden-constants", "C_prob=100", *norms]
    res = CliRunner().invoke(app, [*base, "--strict"])
    assert res.exit_code == 0, res.output
    assert "GUARANTEED: all 4 conditions hold; true_loss 0.9122 < 1 = A + Y" in res.stdout
    res = CliRunner().invoke(app, [*base, "--label-bound", "1e-4", "--strict"])
    assert res.exit_code == 1
    assert "VACUOUS: true_loss 0.001256 ≥ 0.0005 = A + Y, the loss range on the class" in (
        res.stdout)
    # stdout and stderr apart on every click version (an old CliRunner mixes them)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([*base, "--label-bound", "1e-4", "--format", "json"])
    assert code == 0
    assert json.loads(out.getvalue())["verdict"] == "vacuous"
    assert err.getvalue().startswith("VACUOUS: true_loss 0.001256 ≥ 0.0005 = A + Y")
    res = CliRunner().invoke(app, [*base, "--label-bound", "-1"])
    assert isinstance(res.exception, InputError) and res.exception.flag == "--label-bound"
