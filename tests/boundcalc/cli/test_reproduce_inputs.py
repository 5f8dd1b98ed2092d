"""``reproduce`` and :func:`boundcalc.reproduce` against hostile experiment overrides: a bad
``--set`` / ``--config`` / keyword value is exit 2 (an InputError) naming the key before any run
directory, lock or torch import; ``--out ''`` is refused; a second driver on a live ``--out`` is
refused at the lock without importing torch or matplotlib; settings that make Theorem 1 not
applicable (ρ < ν, δ ≥ ½) run, with a note. Written against the CLI and the API only, so that each
test also reads on the code before the field rows existed."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import boundcalc
from boundcalc.errors import InputError

ROOT = Path(__file__).resolve().parents[3]
#: The largest size an experiment takes (boundcalc.inputs.experiment_fields.MAX_SIZE).
MAX_SIZE = 2**24


@pytest.mark.parametrize(("experiment", "key", "value"), [
    ("figure1", "nu", "-1"), ("figure1", "step_constant", "0"), ("figure1", "rho", "0"),
    ("figure2", "burn_in", "-5"), ("figure2", "base_period", "0"),
    ("figure2", "noise_variance", "-1"), ("figure1", "val_fraction", "0"),
    ("tsweep", "rho", "1,0,1"), ("table1", "digits", "3,3"), ("figure2", "ar_coefficient", "1"),
    ("figure1", "steps", str(MAX_SIZE + 1)), ("figure2", "lags", "0"),
])
def test_a_bad_override_exits_2_naming_the_key_before_any_run_directory(cli, tmp_path,
                                                                         experiment, key, value):
    run = cli("reproduce", experiment, "--set", f"{key}={value}", "--out", str(tmp_path / "run"))
    assert run.code == 2, run.err
    assert run.err.startswith(f"error: --set {key} ") and len(run.err.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_a_toml_integer_past_the_largest_size_exits_2_naming_the_key(cli, tmp_path):
    toml = tmp_path / "big.toml"
    toml.write_text("steps = 99999999999999999999\n")
    run = cli("reproduce", "figure1", "--config", str(toml), "--out", str(tmp_path / "run"))
    assert run.code == 2
    assert run.err.startswith("error: --config steps must be <= 16777216 ")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("out", ["", " "])
def test_an_empty_out_is_refused_and_nothing_is_written(cli, tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    run = cli("reproduce", "figure1", "--set", "steps=1", "--out", out)
    assert run.code == 2 and run.err.startswith("error: --out must name a folder")
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(InputError, match="^out must name a folder"):
        boundcalc.reproduce("figure1", out=out, steps=1)
    assert list(tmp_path.iterdir()) == []


def test_the_api_refuses_a_bad_override_before_torch_naming_it():
    with pytest.raises(InputError) as err:
        boundcalc.reproduce("figure2", burn_in=-5)
    assert str(err.value) == "reproduce() burn_in must be >= 0, got -5"
    with pytest.raises(InputError, match=r"^reproduce\(\) has no setting 'width'"):
        boundcalc.reproduce("figure1", width=8)


def _in_fresh_python(code: str, cwd: Path) -> dict:
    """Run ``code`` (which prints one JSON line) in a new interpreter; its JSON."""
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_set_typo_is_refused_without_importing_torch(tmp_path):
    seen = _in_fresh_python(f"""
        import contextlib, io, json, sys
        from boundcalc.cli import main
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code = main(["reproduce", "figure1", "--set", "typo=1", "--out",
                         {str(tmp_path / "run")!r}])
        print(json.dumps({{"code": code, "err": err.getvalue(),
                          "torch": "torch" in sys.modules}}))
    """, tmp_path)
    assert seen["code"] == 2 and seen["err"].startswith("error: --set has no setting 'typo'")
    assert not seen["torch"]
    assert not (tmp_path / "run").exists()


def test_a_second_driver_with_set_or_config_is_refused_at_the_lock_without_torch(tmp_path):
    pytest.importorskip("torch")   # without torch installed, reproduce refuses before the lock
    from boundcalc.execution.executors import RunLock

    live = tmp_path / "live"
    toml = tmp_path / "mine.toml"
    toml.write_text("steps = 100\n")
    lock = RunLock(live).acquire()  # the first driver
    try:
        for extra in (["--set", "steps=100"], ["--config", str(toml)]):
            seen = _in_fresh_python(f"""
                import contextlib, io, json, sys
                from boundcalc.cli import main
                err = io.StringIO()
                with contextlib.redirect_stderr(err):
                    code = main(["reproduce", "figure1", *{extra!r}, "--out", {str(live)!r}])
                print(json.dumps({{"code": code, "err": err.getvalue(),
                                  "torch": "torch" in sys.modules,
                                  "matplotlib": "matplotlib" in sys.modules}}))
            """, tmp_path)
            assert seen["code"] == 2 and "is in use by the driver" in seen["err"], seen
            assert not seen["torch"] and not seen["matplotlib"]
    finally:
        lock.release()


@pytest.mark.parametrize(("args", "says"), [
    (["--set", "rho=2"], "rho = 2,2,2 < nu = 3,3,3"),
    (["--set", "delta=0.5"], "delta = 0.5 >= 1/2"),
])
def test_settings_that_make_theorem1_not_applicable_run_with_a_note(cli, tmp_path, monkeypatch,
                                                                     args, says):
    pytest.importorskip("torch")
    from boundcalc.validators.experiments import configure

    seen: dict = {}
    monkeypatch.setattr(configure, "run_named",
                        lambda *a, **k: seen.update(k) or Path(k["out"]))
    run = cli("reproduce", "figure1", *args, "--out", str(tmp_path / "run"))
    assert run.code == 0, run.err
    assert f"note: Theorem 1 is not applicable at these settings: {says}" in run.err
    assert seen["fields"] == {"rho": (2.0, 2.0, 2.0)} if "rho=2" in args else seen["fields"]


def test_the_step_size_key_points_at_the_settings_that_make_it(cli, tmp_path):
    run = cli("reproduce", "tsweep", "--set", "eta=0.1", "--out", str(tmp_path / "run"))
    assert run.code == 2 and run.err.startswith("error: --set eta is not a setting")
    assert "step_constant" in run.err and not (tmp_path / "run").exists()
