"""``validate``'s one check, and ``check``'s flags: every flag by its row, the rules, before any
run directory; hypothesis drives random and hostile values through both commands (exit 0, 1 or
2, never 3, no traceback, an exit 2 names a flag and leaves no run directory)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.errors import InputError
from boundcalc.inputs.validate_flags import check_validate, refuse_unused
from boundcalc.validation import runner as validation_runner
from boundcalc.validation import settings as validation_settings

pytestmark = pytest.mark.needs_torch

HOSTILE = ["", " ", "-1", "0", "1e309", "1e-400", "nan", "inf", "abc", "1,2", "2**10", "1e2",
           "2.5", "9" * 500, "\x00", "1,2,3,4", "cuda:x", "CPU", "float16", "thorough",
           "travelled", "C_D=0", "0.5", "2", "8"]
values = st.one_of(st.sampled_from(HOSTILE), st.integers(-5, 2**25).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr))

VALIDATE_FLAGS = ["--m", "--n", "--d", "--T", "--rho", "--nu", "--delta", "--activation",
                  "--steps", "--seeds", "--rate-seeds", "--batch-size", "--teacher-width",
                  "--effort", "--device", "--dtype", "--format", "--dm", "--N", "--n-test",
                  "--lr", "--radii", "--hidden-constants", "--alpha", "--eta", "--data"]
STATEMENTS = ["event", "lemma2", "theorem1", "prop1", "prop2", "generalization", "all"]


def test_every_flag_is_checked_and_returned_typed():
    checked = check_validate({"m": "1e3", "rho": "2,3,1", "delta": "0.05", "seeds": "2",
                              "device": " CPU ", "lr": "0.01", "radii": "travelled"},
                             ["lemma2", "generalization"])
    assert checked == {"m": 1000, "rho": ("2", "3", "1"), "delta": "0.05", "seeds": 2,
                       "device": "cpu", "lr": 0.01, "radii": None}


@pytest.mark.parametrize(("values", "flag"), [
    ({"seeds": "0"}, "--seeds"), ({"effort": "slow"}, "--effort"), ({"device": "tpu"}, "--device"),
    ({"dtype": "float16"}, "--dtype"), ({"out": ""}, "--out"), ({"nu": "1e-400"}, "--nu"),
    ({"lr": "1e-400"}, "--lr"), ({"activation": "custom:1,1,1"}, "--activation"),
    ({"m": str(2**24 + 2)}, "--m"), ({"N": "1"}, "--N"), ({"alpha": "0"}, "--alpha"),
])
def test_a_bad_value_is_an_input_error_naming_its_flag(values, flag):
    with pytest.raises(InputError) as err:
        check_validate(values, None)
    assert err.value.flag == flag


def test_a_flag_no_selected_statement_uses_is_refused():
    with pytest.raises(InputError) as err:
        refuse_unused({"alpha"}, ["lemma2"])
    assert err.value.flag == "--alpha"


def test_a_default_batch_above_n_is_no_error_but_a_given_one_is_for_prop1():
    check_validate({"n": "3", "batch_size": "8"}, ["prop1"], given={"n"})
    with pytest.raises(InputError) as err:
        check_validate({"n": "3", "batch_size": "8"}, ["prop1"], given={"n", "batch_size"})
    assert err.value.flag == "--batch-size"


def test_eta_is_for_decompose_only():
    with pytest.raises(InputError) as err:
        check_validate({"eta": "0.1"}, ["theorem1"])
    assert err.value.flag == "--eta"
    assert check_validate({"eta": "0.1"}, ["theorem1"], decompose=True)["eta"] == "0.1"


@pytest.mark.slow
@settings(max_examples=80, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(statements=st.lists(st.sampled_from(STATEMENTS), min_size=1, max_size=2),
       flags=st.dictionaries(st.sampled_from(VALIDATE_FLAGS), values, max_size=5),
       decompose=st.booleans())
def test_validate_takes_any_flags_without_an_internal_error(no_internal_error, cli,
                                                            tmp_path_factory, monkeypatch,
                                                            statements, flags, decompose):
    # the run itself is not the property: only what the input layer lets through to it
    monkeypatch.setattr(validation_runner, "run_validation", lambda *a, **k: [])
    monkeypatch.setattr(validation_settings, "generalization_data", lambda *a: {})
    import boundcalc.validators.checks.certify as certify
    monkeypatch.setattr(certify, "run_certification", lambda *a, **k: [])
    run_dir = tmp_path_factory.mktemp("v") / "run"
    args = ["validate", *statements, "--quiet", "--out", str(run_dir)]
    for flag, value in flags.items():
        args += [flag, value]
    if "--device" not in flags:
        args += ["--device", "cpu"]
    args += ["--decompose"] * decompose
    run = cli(*args)
    no_internal_error(run)
    if run.code == 2:
        assert not run_dir.exists(), run.err


# row 6 of the table: check RUN --nu 1e-400 silently became 0; --nu 0 --rho 0 was exit 3
# (ZeroDivisionError); a ratio over a zero bound was inf (JSON Infinity)

@pytest.fixture
def run_file(plain_run, tmp_path):
    from boundcalc.checking.runfile import save_run

    arrays = {k: np.asarray(v) if hasattr(v, "numpy") else v for k, v in plain_run().items()}
    return save_run(tmp_path / "run.npz", **arrays)


@pytest.mark.parametrize("flags", [["--nu", "1e-400"], ["--nu", "0,0,1e-400"],
                                   ["--delta", "1e-400"], ["--misspecification", "1e-400"],
                                   ["--rho", "1e-400"]])
def test_check_refuses_a_nonzero_flag_that_rounds_to_zero(cli, run_file, flags):
    run = cli("check", str(run_file), "--quiet", *flags)
    assert run.code == 2 and run.err.startswith(f"error: {flags[0]} "), run.err
    assert "round to 0" in run.err


def test_check_with_nu_and_rho_zero_reports_undefined_ratios_in_standard_json(cli, run_file):
    run = cli("check", str(run_file), "--quiet", "--nu", "0", "--rho", "0", "--format", "json")
    assert run.code in (0, 1), run.err
    report = json.loads(run.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
    undefined = [line for line in report["lines"] if line["ratio"] is None]
    assert undefined and all(line["bound"] <= 0 < line["measured"] for line in undefined)
    assert all("ratio_note" in line for line in undefined)


@pytest.mark.slow
@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.dictionaries(st.sampled_from(["--rho", "--nu", "--delta", "--misspecification",
                                              "--device", "--format"]), values, max_size=3))
def test_check_takes_any_flags_without_an_internal_error(no_internal_error, cli, run_file, flags):
    args = ["check", str(run_file), "--quiet"]
    for flag, value in flags.items():
        if flag == "--device" and value not in ("cpu", "CPU"):
            value = "cpu" if value.isdigit() else value  # no GPU here: cuda is exit 2 anyway
        args += [flag, value]
    run = cli(*args)
    no_internal_error(run)
    if run.code != 2 and flags.get("--format") == "json":
        json.loads(run.out, parse_constant=lambda c: pytest.fail(f"non-standard JSON {c}"))
