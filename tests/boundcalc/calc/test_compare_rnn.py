"""``compare-rnn``'s format / output / metavars, ``prop2 --help`` on T,
Remark 9's own summary, and ``width``'s comparisons shown with enough digits."""

from __future__ import annotations

import json
import re

import mpmath
import pytest
from boundcalc.theory.theorem1 import theorem1

# item 14 ----------------------------------------------------------------------------------------


def test_prop2_help_does_not_say_no_bound_depends_on_T(cli):
    run = cli("prop2", "--help")
    assert run.code == 0
    text = " ".join(run.out.split())
    assert "no bound depends on" not in text
    assert "IndRNN" in text


def test_remark9_summary_is_not_theorem1s():
    for route in ("tight", "paper"):
        remark, plain = theorem1(misspecified=True, route=route), theorem1(route=route)
        assert remark.summary != plain.summary
        assert "ε_mis" in remark.summary


def _shown_comparisons(text: str) -> list[tuple[str, str, str]]:
    return re.findall(r"= ([0-9.e+-]+) (<=|>) ([0-9.e+-]+) at", text)


@pytest.mark.parametrize("target", ["1e-4", "0.1"])
def test_width_shows_enough_digits_for_its_comparisons_to_read_true(cli, target):
    run = cli("width", "--target", target)
    assert run.code == 0, run.err
    shown = _shown_comparisons(" ".join(run.out.split()))
    assert len(shown) == 2
    for value, op, goal in shown:
        a, b = mpmath.mpf(value), mpmath.mpf(goal)
        assert (a <= b) if op == "<=" else (a > b), (value, op, goal)


# item 5 -----------------------------------------------------------------------------------------

FAST = ("--T", "1,4", "--m", "64", "--n", "100")


def test_compare_rnn_unknown_format_is_one_line_exit_2_listing_the_choices(cli):
    run = cli("compare-rnn", *FAST, "--format", "xml")
    assert run.code == 2
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and "--format" in lines[0]
    for choice in ("table", "json", "csv", "markdown", "latex"):
        assert choice in lines[0]
    assert "internal error" not in run.err


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown", "latex", "table"])
def test_compare_rnn_output_ends_with_a_newline(cli, fmt):
    run = cli("compare-rnn", *FAST, "--format", fmt)
    assert run.code == 0, run.err
    assert run.out.endswith("\n")
    if fmt == "json":
        assert len(json.loads(run.out)) == 2


def test_compare_rnn_output_writes_the_file(cli, tmp_path):
    target = tmp_path / "rnn.csv"
    run = cli("compare-rnn", *FAST, "--format", "csv", "--output", str(target))
    assert run.code == 0, run.err
    assert run.out == ""
    text = target.read_text()
    assert text.endswith("\n") and len(text.strip().splitlines()) == 3
    assert str(target) in run.err


def test_compare_rnn_unwritable_output_names_output(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x\n")
    run = cli("compare-rnn", *FAST, "--output", str(blocker / "out.csv"))
    assert run.code == 2 and "--output" in run.err


def test_compare_rnn_help_shows_no_str_metavar(cli):
    run = cli("compare-rnn", "--help")
    assert run.code == 0
    assert "<str>" not in run.out
    assert "--output" in run.out


# item 1 (compare-rnn): the overflow contract ---------------------------------------------------

README_T = ("--T", "1,4,16,64,256,1024")


def test_compare_rnn_overflow_is_exact_text_with_verdict_overflow_never_inf(cli):
    run = cli("compare-rnn", *README_T)
    assert run.code == 0, run.err
    assert not re.search(r"\binf\b", run.out), run.out
    assert "overflow" in run.out
    js = cli("compare-rnn", *README_T, "--format", "json")
    assert js.code == 0, js.err
    assert "Infinity" not in js.out and "NaN" not in js.out
    rows = json.loads(js.out, parse_constant=lambda c: pytest.fail(f"non-finite {c}"))
    last = rows[-1]
    assert last["T"] == 1024 and last["indrnn_verdict"] == "overflow"
    assert isinstance(last["indrnn_bound"], str)
    # 10^387.6 (docs/indrnn.md §5): past the float range, exact as text
    assert mpmath.mpf(last["indrnn_bound"]) > mpmath.mpf(10) ** 387
    assert last["indrnn_bound"] is not None and last["indrnn_eta"] != 0
    assert rows[0]["indrnn_verdict"] != "overflow" and isinstance(rows[0]["indrnn_bound"], float)
    assert all(r["transformer_verdict"] != "overflow" for r in rows)


# item 14 (rest): prop2 --alpha ------------------------------------------------------------------


def test_prop2_help_documents_alpha(cli):
    run = cli("prop2", "--help")
    assert run.code == 0
    text = " ".join(run.out.split())
    assert "--alpha" in text and "1.5" in text


def test_prop2_alpha_default_is_three_halves(cli):
    plain = json.loads(cli("prop2", "--m", "512", "--T", "16", "--format", "json").out)
    given = json.loads(cli("prop2", "--m", "512", "--T", "16", "--alpha", "1.5",
                           "--format", "json").out)
    assert given["bound"]["min_iterate"] == plain["bound"]["min_iterate"]
    assert given["verdict"] == plain["verdict"]
    assert given["nonvacuous_from_m"] == plain["nonvacuous_from_m"]


def test_prop2_alpha_matches_compare_rnn_and_its_own_nonvacuous_width(cli):
    from boundcalc.calc.compare_rnn import compare_rnn, evaluate_prop2
    from boundcalc.inputs.params import validate

    run = cli("prop2", "--m", "512", "--T", "64", "--alpha", "0.5", "--format", "json")
    assert run.code == 0, run.err
    data = json.loads(run.out)
    assert data["inputs"]["alpha"] == 0.5
    row = compare_rnn([64], m=512, alpha="0.5")[0]
    assert data["bound"]["min_iterate"] == pytest.approx(row["indrnn_bound"], rel=1e-12)
    assert data["bound"]["min_iterate"] < 1e4          # below the cutoff: flat, not 1e41
    m = data["nonvacuous_from_m"]
    assert m is not None and m % 2 == 0
    assert evaluate_prop2(validate(m=m, T=64), "0.5").verdict == "guaranteed"
    assert evaluate_prop2(validate(m=m - 2, T=64), "0.5").verdict == "vacuous"
    assert data["verdict"] == ("guaranteed" if m <= 512 else "vacuous")


def test_prop2_alpha_step_size_below_the_float_range_is_its_exact_text(cli):
    registered = json.loads(cli("prop2", "--nu", "1e-300", "--rho", "1e10", "--format",
                                "json").out)
    other = json.loads(cli("prop2", "--alpha", "1.4", "--nu", "1e-300", "--rho", "1e10",
                           "--format", "json").out)
    for data in (registered, other):
        # 6.47e-451 with F at its cap sqrt(m) c_max sigma0 (docs/indrnn.md §3.1)
        assert isinstance(data["inputs"]["eta"], str) and "e-451" in data["inputs"]["eta"]
        assert data["inputs"]["eta"] == data["constants"]["theorem_step_size"]


@pytest.mark.parametrize("value", ["0", "-1", "abc", "", "nan", "inf", "1e400", "1e-400"])
def test_prop2_bad_alpha_is_one_line_naming_alpha(cli, value):
    run = cli("prop2", "--alpha", value)
    assert run.code == 2, (run.out, run.err)
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and "--alpha" in lines[0]


@pytest.mark.slow
def test_prop2_alpha_never_imports_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys; from boundcalc.cli import main; "
            "c = main(['prop2', '--m', '64', '--alpha', '0.5']); print(c, 'torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "0 False"


@pytest.mark.parametrize("eta", [None, 1e-3])
@pytest.mark.slow
def test_the_prop2_grid_at_three_halves_is_the_registered_grid(eta):
    import numpy as np

    from boundcalc.calc.api import mp_arguments
    from boundcalc.calc.compare_rnn import evaluate_prop2_grid
    from boundcalc.calc.evaluator import evaluate_grid
    from boundcalc.inputs.params import validate

    columns = {k: float(v) for k, v in mp_arguments(validate()).items()}
    columns.update(m=np.array([[64.0], [2048.0]]), T=np.array([[8.0, 64.0]]), eta=eta)
    registered = evaluate_grid("prop2", columns)
    at_alpha = evaluate_prop2_grid(columns, 1.5)
    assert sorted(at_alpha) == sorted(registered)
    for key, value in registered.items():
        if value.dtype == bool:
            assert np.array_equal(at_alpha[key], value), key
        else:
            np.testing.assert_allclose(at_alpha[key], value, rtol=1e-12, err_msg=key)



def test_prop2_at_a_scale_where_l_times_b_is_zero_asks_for_eta_and_evaluates_with_it(capsys):
    """σ₀ = σ₁ = σ₂ = 0 makes L·B = 0: η* is undefined (exit 2 naming --eta, never an internal
    error), and with a given η the generated code's division by zero falls back to the exact
    evaluation, as the default scale's path does."""
    from boundcalc.cli import main

    args = ["prop2", "--activation", "custom:0,0,0", "--alpha", "2"]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --eta must be given here") and "\n" not in err
    assert main([*args, "--eta", "0.1", "--format", "json"]) == 0
    with_alpha = json.loads(capsys.readouterr().out)
    assert main(["prop2", "--activation", "custom:0,0,0", "--eta", "0.1", "--format", "json"]) == 0
    default = json.loads(capsys.readouterr().out)
    assert with_alpha["bound"]["min_iterate"] == pytest.approx(default["bound"]["min_iterate"])
