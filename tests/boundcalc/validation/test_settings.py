"""Hard inputs of ``validate`` / ``reproduce``: small n, huge m, unwritable run
directories, reused ``--out``, a missing matplotlib, non-positive printed bounds."""

from __future__ import annotations

import json

import pytest

from boundcalc.cli import main
from boundcalc.inputs.surfaces import MAX_VALIDATION_WIDTH
from boundcalc.validation import runner as validation_runner
from boundcalc.validation import settings as validation_settings

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

TINY = ["--m", "2", "--d", "1", "--T", "1", "--rate-seeds", "5", "--device", "cpu", "--quiet"]


def _one_line_exit_2(capsys, code: int, flag: str) -> str:
    err = capsys.readouterr().err
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and flag in lines[0], err
    assert "Traceback" not in err and "internal error" not in err
    assert f"{flag} {flag}" not in err
    return lines[0]


# item 8 -----------------------------------------------------------------------------------------

def test_event_with_n_below_the_default_batch_runs(tmp_path, capsys):
    code = main(["validate", "event", *TINY, "--n", "1", "--out", str(tmp_path / "r"),
                 "--format", "json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["violations"] == 0


def test_prop1_with_n_below_the_default_batch_uses_n_and_says_so(tmp_path, capsys):
    settings = validation_settings.make_settings(
        m="2", n="3", d="1", T="1", rho="2", nu="1", delta="0.05", activation="tanh",
        steps="2", seeds="1", rate_seeds="5", batch_size="8", effort="quick", device="cpu",
        dtype="float64", statements=["prop1"], batch_size_given=False)
    assert settings.batch_size == 3


def test_prop1_with_a_given_batch_above_n_is_refused_naming_batch_size(tmp_path, capsys):
    code = main(["validate", "prop1", *TINY, "--n", "3", "--batch-size", "8",
                 "--out", str(tmp_path / "r")])
    _one_line_exit_2(capsys, code, "--batch-size")


def test_prop1_default_batch_note_on_stderr(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(validation_runner, "run_validation", lambda *a, **k: [])
    code = main(["validate", "prop1", *TINY[:-1], "--n", "3", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 0
    assert "--batch-size" in err and "3" in err


# item 6 -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("m", ["1e30", "1e12", str(2**24 + 2)])
def test_a_width_beyond_the_validators_limit_is_one_line_naming_m(m, tmp_path, capsys):
    code = main(["validate", "lemma2", "--m", m, "--device", "cpu", "--quiet",
                 "--out", str(tmp_path / "r")])
    line = _one_line_exit_2(capsys, code, "--m")
    assert str(MAX_VALIDATION_WIDTH) in line
    assert not (tmp_path / "r").exists()


# item 7 -----------------------------------------------------------------------------------------

def _unwritable(tmp_path) -> list[str]:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    return [str(blocker / "run"), "/sys/boundcalc-vrun"]


def test_validate_into_an_unwritable_run_directory_is_one_line_naming_out(tmp_path, capsys):
    for out in _unwritable(tmp_path):
        code = main(["validate", "event", *TINY, "--n", "4", "--out", out])
        line = _one_line_exit_2(capsys, code, "--out")
        assert out in line


def test_reproduce_into_an_unwritable_run_directory_is_one_line_naming_out(tmp_path, capsys):
    for out in _unwritable(tmp_path):
        code = main(["reproduce", "figure1", "--device", "cpu", "--out", out])
        line = _one_line_exit_2(capsys, code, "--out")
        assert out in line


# item 10 ----------------------------------------------------------------------------------------

def test_reproduce_reusing_out_with_other_settings_names_them(tmp_path, capsys):
    out = tmp_path / "fig1"
    out.mkdir()
    (out / "config.json").write_text(json.dumps({"parameters": {
        "experiment": "figure1", "preset": "quick", "dtype": "float64"}}) + "\n")
    code = main(["reproduce", "figure1", "--preset", "quick", "--dtype", "float32",
                 "--device", "cpu", "--out", str(out)])
    line = _one_line_exit_2(capsys, code, "--out")
    assert "dtype" in line


# item 15 ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("experiment", ["figure1", "figure2"])
def test_reproduce_without_matplotlib_refuses_before_computing(experiment, tmp_path, capsys,
                                                              monkeypatch):
    import importlib

    module = importlib.import_module(f"boundcalc.validators.experiments.{experiment}")

    def must_not_run(*args, **kwargs):
        raise AssertionError("computed cells although matplotlib is missing")

    monkeypatch.setattr(module, f"run_{experiment}", must_not_run)
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(__import__("sys").modules, name, None)
    code = main(["reproduce", experiment, "--device", "cpu", "--out", str(tmp_path / "r")])
    line = _one_line_exit_2(capsys, code, "matplotlib")
    assert "validators" in line
    assert not (tmp_path / "r").exists()


# item 13 ----------------------------------------------------------------------------------------

def _generalization_records(bound: float) -> list[dict]:
    return [{"name": "theorem5.heldout_loss", "method": "as printed", "measured": 0.5,
             "bound": bound, "ratio": 0.5 / bound if bound > 0 else float("inf"),
             "holds": bound >= 0.5, "conditions_hold": True, "cond_width": True,
             "failing": "none", "probability": 0.9},
            {"name": "lemma4.empirical_loss", "method": "derived", "measured": 0.5,
             "bound": 2.0, "ratio": 0.25, "holds": True, "conditions_hold": True,
             "cond_width": True, "failing": "none", "probability": 0.9}]


@pytest.mark.parametrize("fmt", ["table", "json"])
def test_a_negative_printed_bound_is_not_applicable_with_no_ratio(fmt, tmp_path, capsys,
                                                                  monkeypatch):
    monkeypatch.setattr(validation_runner, "cell_runner",
                        lambda statement, settings, seed: lambda: _generalization_records(-39210.3))
    code = main(["validate", "generalization", "--steps", "2", "--device", "cpu",
                 "--out", str(tmp_path / "r"), "--format", fmt])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "inf" not in captured.out and "inf" not in captured.err
    assert "not applicable (the printed bound is negative" in captured.out + captured.err
    if fmt == "json":
        rows = json.loads(captured.out)["summary"]
        negative = [r for r in rows if r["bound"] < 0]
        assert negative and all(r["ratio"] is None for r in negative)
        assert all(not r["conditions_hold"] for r in negative)
    else:
        assert "max measured/bound 0.25" in captured.err
