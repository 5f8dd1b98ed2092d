"""``boundcalc validate prop2``: Proposition 2's IndRNN constants against the IndRNN."""

from __future__ import annotations

import json

import pytest

from boundcalc.cli import main
from boundcalc.validation import settings as validation_settings

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

TINY = ["--m", "8", "--d", "3", "--T", "6", "--device", "cpu", "--quiet"]


def _report(capsys, *args: str) -> tuple[int, dict]:
    capsys.readouterr()
    code = main(["validate", "prop2", *TINY, *args, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_prop2_measures_every_constant_below_its_bound_on_both_sides_of_the_cutoff(tmp_path,
                                                                                    capsys):
    """G_T, H_T, L and ε_lin are measured, finite and under their bounds for α below and above
    the cutoff; past the cutoff the bounds are larger (they grow with λ^T)."""
    bounds = {}
    for alpha in ("0.5", "1.5"):
        code, report = _report(capsys, "--alpha", alpha, "--out", str(tmp_path / alpha))
        assert code == 0 and report["violations"] == 0
        rows = {r["name"]: r for r in report["summary"]}
        assert set(rows) == {"prop2.unit_gradient_G", "prop2.unit_hessian_H",
                             "prop2.lipschitz_L", "prop2.eps_lin"}
        for row in rows.values():
            assert 0 < row["measured"] <= row["bound"] and row["holds"]
        bounds[alpha] = rows
        config = json.loads((tmp_path / alpha / "config.json").read_text())
        assert config["parameters"]["prop2"] == {"alpha": float(alpha)}
    for name in bounds["0.5"]:
        assert bounds["1.5"][name]["bound"] > bounds["0.5"][name]["bound"]


def test_prop2_is_not_part_of_all_and_alpha_belongs_to_it(capsys):
    assert "prop2" not in validation_settings.expand_statements(["all"])
    assert validation_settings.expand_statements(["all", "prop2"])[-1] == "prop2"
    for args in (["validate", "lemma2", "--alpha", "1"], ["validate", "prop2", "--alpha", "0"]):
        capsys.readouterr()
        assert main(args) == 2
        err = capsys.readouterr().err
        assert "--alpha" in err and len(err.strip().splitlines()) == 1


def test_prop2_rerun_loads_the_finished_cell(tmp_path, capsys):
    out = str(tmp_path / "run")
    _, first = _report(capsys, "--out", out)
    stamp = (tmp_path / "run" / "cells" / "prop2-seed0.json").stat().st_mtime_ns
    _, second = _report(capsys, "--out", out)
    assert first["summary"] == second["summary"]
    assert (tmp_path / "run" / "cells" / "prop2-seed0.json").stat().st_mtime_ns == stamp


def test_cell_runner_runs_the_function_a_falsifier_row_names(monkeypatch):
    """A new falsifier is one catalog row and its function: cell_runner finds it by the row."""
    import sys
    import types

    from boundcalc.theory import catalog

    from boundcalc.validation.cells import cell_runner
    from boundcalc.validation.settings import EXAMPLE_FLAGS

    module = types.ModuleType("boundcalc.validators.toy_check")
    module.toy_cell = lambda settings, seed: [{"name": "toy", "m": settings.m, "seed": seed}]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    row = catalog.Falsifier("toy", "toy_check", "toy_cell", False, "a test")
    monkeypatch.setitem(catalog.FALSIFIER, "toy", row)
    settings = validation_settings.make_settings(**EXAMPLE_FLAGS)
    assert cell_runner("toy", settings, 3)() == [{"name": "toy", "m": 4, "seed": 3}]


def test_cell_runner_refuses_a_name_with_no_falsifier_row_naming_statement():
    from boundcalc.inputs.params import InputError
    from boundcalc.validation.cells import cell_runner
    from boundcalc.validation.settings import EXAMPLE_FLAGS

    with pytest.raises(InputError, match="^STATEMENT must be one of event, "):
        cell_runner("lemma9", validation_settings.make_settings(**EXAMPLE_FLAGS), 0)
