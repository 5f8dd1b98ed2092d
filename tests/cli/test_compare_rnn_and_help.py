"""Issue 12 items 5 and 14: ``compare-rnn``'s format / output / metavars, ``prop2 --help`` on T,
Remark 9's own summary, and ``width``'s comparisons shown with enough digits."""

from __future__ import annotations

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
