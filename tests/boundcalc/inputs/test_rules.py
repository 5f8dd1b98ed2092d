"""The rules table: conditions over several inputs, what each does on each surface, and the
``validate`` decision for ρ < ν (exit 2 before any run directory)."""

from __future__ import annotations

import pytest

from boundcalc.calc.evaluator import compiled_statement
from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.inputs.rules import (
    NOT_APPLICABLE,
    REFUSE,
    RULES,
    SURFACES,
    apply_rules,
    failing_rules,
    not_applicable_text,
)


def test_every_rule_names_a_known_surface_and_action():
    for rule in RULES.values():
        assert set(rule.actions) <= set(SURFACES), rule.name
        assert set(rule.actions.values()) <= {REFUSE, NOT_APPLICABLE}, rule.name
        assert rule.requirement and rule.failure and rule.why


#: The condition rows each calculator rule stands for in the statements' own conditions.
CONDITION_ROWS = {"rho_ge_nu": {"rho_c_ge_nu_c", "rho_u_ge_nu_u", "rho_w_ge_nu_w"},
                  "delta_lt_half": {"delta_lt_half"}, "batch_le_n": {"batch_le_n"}}


def test_a_not_applicable_rule_is_the_condition_rows_of_every_statement_it_concerns():
    """The calculator's not-applicable rules are the theorems' own conditions, not a second
    copy: every statement a rule names states its condition rows."""
    calculator = {n for n, r in RULES.items() if r.actions.get("calculator") == NOT_APPLICABLE}
    assert calculator == set(CONDITION_ROWS)
    for name in calculator:
        for statement in RULES[name].statements:
            names = {c.name for c in compiled_statement(statement).conditions}
            assert CONDITION_ROWS[name] <= names, (name, statement)


@pytest.mark.parametrize(("values", "expected"), [
    ({"rho": "2", "nu": "1"}, []),
    ({"rho": "1", "nu": "1"}, []),
    ({"rho": "2,2,0.5", "nu": "1,1,1"}, ["rho_ge_nu"]),
    ({"rho": (1.0, 1.0, 1.0), "nu": (2.0, 2.0, 2.0)}, ["rho_ge_nu"]),
    ({"delta": "0.5"}, ["delta_lt_half"]),
    ({"delta": "0.4999"}, []),
])
def test_failing_rules_compare_exactly(values, expected):
    assert [r.name for r in failing_rules("calculator", values, ["theorem1"])] == expected


def test_a_rule_is_checked_only_for_the_statements_it_concerns():
    values = {"rho": "1", "nu": "2", "delta": "0.7"}
    assert failing_rules("validate", values, ["lemma2", "event"]) == []
    assert [r.name for r in failing_rules("validate", values, ["theorem1_paper"])] == [
        "rho_ge_nu", "delta_lt_half"]


def test_refuse_raises_naming_the_flag_and_not_applicable_returns_the_rule():
    with pytest.raises(InputError) as err:
        apply_rules("validate", {"rho": "1", "nu": "2"}, ["prop1"])
    assert err.value.flag == "--nu" and "prop1" in str(err.value)
    failed = apply_rules("calculator", {"rho": "1", "nu": "2"}, ["prop1"])
    assert not_applicable_text(failed) == "not applicable: ρ < ν"


def test_a_rule_whose_inputs_are_missing_is_not_checked():
    assert apply_rules("validate", {"rho": "1"}, ["theorem1"]) == []


def test_spectral_above_frobenius_names_its_own_flag():
    norms = dict.fromkeys(("WQ0_F", "WK0_F", "WV0_F", "WQ0_2", "WK0_2", "WV0_2", "WO0_2"), 1.0)
    norms["WK0_2"] = 2.0
    with pytest.raises(InputError) as err:
        apply_rules("generalization", {"norms": norms})
    assert err.value.flag == "--wk-spec"


# row 2 of the table: validate theorem1 --m 8 --n 16 --rho 1 --nu 2 was exit 3 (a ValueError in
# the training cell) after writing a run directory; now exit 2 before it.

@pytest.mark.parametrize("statement", ["theorem1", "prop1"])
def test_validate_with_rho_below_nu_is_exit_2_before_any_run_directory(statement, tmp_path,
                                                                        capsys):
    run = tmp_path / "run"
    code = main(["validate", statement, "--m", "8", "--n", "16", "--rho", "1", "--nu", "2",
                 "--device", "cpu", "--quiet", "--out", str(run)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("error: --nu ") and "--rho" in err and statement in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not run.exists()


def test_validate_with_delta_at_one_half_is_exit_2_for_theorem1(tmp_path, capsys):
    run = tmp_path / "run"
    code = main(["validate", "theorem1", "--delta", "0.5", "--device", "cpu", "--quiet",
                 "--out", str(run)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --delta must be < 1/2"), err
    assert not run.exists()

