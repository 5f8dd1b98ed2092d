"""Parsing and reporting of the point inputs: exact integers, the ν check only where η* is used,
the activation message, η and its source, numbers in condition details, and pure-ASCII LaTeX that
pdflatex compiles."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from boundcalc.calc import api
from boundcalc.inputs.params import InputError, parse_integer, validate
from boundcalc.render.latex import latex_text

POINTS = ("theorem1", "prop1", "remark9", "lemma2", "lemma3", "lemma5", "lemma6", "event")


# --------------------------------------------------------------------------- integers


@pytest.mark.parametrize(("text", "value"), [
    ("9007199254740993", 2**53 + 1), ("1e3", 1000), ("1E3", 1000), ("2.0", 2), ("+8", 8),
    ("1.5e1", 15), ("18446744073709551617", 2**64 + 1), (2**60 + 1, 2**60 + 1), (64.0, 64),
])
def test_integers_are_parsed_exactly(text, value):
    assert parse_integer("--n", text) == value


@pytest.mark.parametrize("text", ["1.5", "1e-3", "1.25e1", "abc", "nan", "inf", "1e999", "", 2.5])
def test_non_integers_are_refused_naming_the_flag(text):
    with pytest.raises(InputError) as err:
        parse_integer("--n", text)
    assert err.value.flag == "--n"


def test_a_large_sample_size_keeps_every_digit(cli):
    run = cli("lemma5", "--m", "64", "--n", "9007199254740993", "--format", "json")
    assert run.code == 0
    assert '"n": 9007199254740993' in run.out
    assert validate(n="9007199254740993").n == 2**53 + 1
    assert validate(m="36028797018963970").m == 36028797018963970  # 2^55 + 2, even


# --------------------------------------------------------------------------- nu check


@pytest.mark.parametrize("statement", ["lemma2", "lemma3", "lemma5", "lemma6", "event"])
def test_a_zero_transport_budget_is_fine_where_no_step_size_is_used(cli, statement):
    run = cli(statement, "--m", "64", "--nu", "0", "--format", "json")
    assert run.code == 0, run.err
    assert json.loads(run.out)["inputs"]["nu_c"] == 0
    assert cli("sweep", statement, "--m", "8,16", "--nu", "0", "--format", "csv").code == 0


@pytest.mark.parametrize("statement", ["theorem1", "prop1", "remark9"])
def test_a_zero_transport_budget_needs_eta_where_eta_star_is_used(cli, statement):
    run = cli(statement, "--nu", "0")
    assert run.code == 2
    assert run.err.startswith("error: --nu needs a positive component when --eta is not given")
    assert cli(statement, "--nu", "0", "--eta", "1e-4", "--format", "json").code == 0
    assert cli("sweep", statement, "--m", "8,16", "--nu", "0").code == 2


@pytest.mark.slow
def test_eta_star_undefined_is_an_input_error_naming_eta(cli):
    run = cli("theorem1", "--activation", "custom:0,0,0")
    assert run.code == 2
    assert run.err.strip() == ("error: --eta must be given here: the theorem's step size eta* = "
                               "||nu||/(2 L B sqrt(K)) is undefined, since L*B = 0")
    given = cli("theorem1", "--activation", "custom:0,0,0", "--eta", "0.1", "--format", "json")
    assert given.code == 0
    data = json.loads(given.out)
    assert data["constants"]["theorem_step_size"] is None
    assert data["bound"]["min_iterate"] >= 0


# --------------------------------------------------------------------------- messages


@pytest.mark.parametrize(("spec", "message"), [
    ("relu", "error: --activation must be tanh, erf or custom:S0,S1,S2, got 'relu'"),
    ("custom:1,2", "error: --activation must be custom:S0,S1,S2 with three bounds, got "
                   "'custom:1,2'"),
    ("custom:1,x,2", "error: --activation must be custom:S0,S1,S2 with three numbers, got "
                     "'custom:1,x,2'"),
    ("custom:1,-1,2", "error: --activation must be custom:S0,S1,S2 with bounds >= 0, got "
                      "'custom:1,-1,2'"),
])
def test_activation_errors_read_well(cli, spec, message):
    run = cli("theorem1", "--activation", spec)
    assert run.code == 2
    assert run.err.strip() == message


# --------------------------------------------------------------------------- eta


@pytest.mark.parametrize("statement", POINTS)
def test_eta_and_its_source_agree(cli, statement):
    given = json.loads(cli(statement, "--m", "64", "--eta", "0.001", "--format", "json").out)
    assert (given["inputs"]["eta"], given["inputs"]["eta_source"]) == (0.001, "given")
    default = json.loads(cli(statement, "--m", "64", "--format", "json").out)
    if "theorem_step_size" in default["constants"]:
        assert default["inputs"]["eta_source"] == "theorem step size eta*"
        assert default["inputs"]["eta"] == default["constants"]["theorem_step_size"]
    else:
        assert (default["inputs"]["eta"], default["inputs"]["eta_source"]) == (None, "not used")
        table = cli(statement, "--m", "64", "--eta", "0.001").out
        assert "given (--eta), not used by this statement" in table


# --------------------------------------------------------------------------- details


def test_condition_details_print_integers_as_integers(cli):
    data = json.loads(cli("prop1", "--m", "512", "--n", "551119000000", "--batch-size", "32",
                          "--delta", "0.05", "--rho", "2", "--nu", "1,3,1", "--format",
                          "json").out)
    details = {c["name"]: c["detail"] for c in data["conditions"]}
    assert details["m_even"] == "m even holds (m = 512)"
    assert details["batch_le_n"] == "b <= n holds (b = 32, n = 551119000000)"
    assert details["delta_lt_half"] == "delta < 1/2 holds (delta = 0.05)"
    assert details["rho_u_ge_nu_u"].startswith("rho_u >= nu_u FAILS (nu_u = 3, rho_u = 2): ")
    assert ".000" not in json.dumps(details) and "E+" not in json.dumps(details)
    thirds = json.loads(cli("lemma2", "--m", "64", "--rho", "0.333333333333",
                            "--format", "json").out)
    assert all("E+" not in c["detail"] for c in thirds["conditions"])


def test_show_number():
    from fractions import Fraction

    assert api.show_number(Fraction(2, 3)) == "0.666667"
    assert api.show_number(10**12) == "1000000000000"
    assert api.show_number(Fraction(1, 10**7)) == "1e-07"


# --------------------------------------------------------------------------- latex


def test_latex_text_translates_unicode_to_ascii_macros():
    assert latex_text("θ̄ on Ω_ρ") == r"$\bar{\theta}$ on $\Omega$\_$\rho$"
    assert latex_text("≥ 1 − 2δ") == r"$\ge$ 1 $-$ 2$\delta$"
    assert latex_text("‖ν‖²") == r"$\| \nu \| ^{2}$"
    assert latex_text("a & b_1 {x} 50% #1 ~ ^ \\ <>|") == (
        r"a \& b\_1 \{x\} 50\% \#1 \textasciitilde{} \textasciicircum{} \textbackslash{} "
        r"\textless{}\textgreater{}\textbar{}")
    assert latex_text("café ⊕").isascii()


def _latex_outputs(cli) -> dict[str, str]:
    outputs = {}
    for statement in POINTS:
        for extra in ((), ("--symbolic",), ("--rho", "0.5", "--nu", "1", "--activation", "erf")):
            run = cli(statement, "--m", "64", *extra, "--format", "latex")
            assert run.code == 0
            outputs[f"{statement} {' '.join(extra)}"] = run.out
        outputs[f"explain {statement}"] = cli("explain", statement, "--format", "latex").out
    outputs["sweep"] = cli("sweep", "theorem1", "--m", "8,16", "--activation", "custom:1,1,1",
                           "--format", "latex").out
    outputs["width"] = cli("width", "--target", "100", "--format", "latex").out
    outputs["steps"] = cli("steps", "--target", "100", "--format", "latex").out
    return outputs


@pytest.mark.slow
def test_latex_output_is_pure_ascii(cli):
    for label, text in _latex_outputs(cli).items():
        bad = sorted({ch for ch in text if not ch.isascii()})
        assert not bad, (label, bad)


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_latex_output_compiles_with_pdflatex(cli, tmp_path):
    body = "\n\n".join(rf"\noindent{{}}\verb|{label}|\par{text}\par"
                       for label, text in _latex_outputs(cli).items())
    document = (r"\documentclass{article}\usepackage{booktabs}\usepackage{amsmath}"
                r"\usepackage[margin=1cm,paperwidth=60cm,paperheight=200cm]{geometry}"
                "\n\\begin{document}\n" + body + "\n\\end{document}\n")
    (tmp_path / "out.tex").write_text(document, encoding="ascii")
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "out.tex"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert (tmp_path / "out.pdf").exists()
