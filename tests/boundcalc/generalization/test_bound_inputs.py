"""The inputs of the generalization bound (boundcalc/generalization/bound_inputs.py): the initial
norms drawn from the LeCun initialisation, and the checks of what a user gives."""

from __future__ import annotations

import pytest

from boundcalc.generalization.bound_inputs import lecun_init_norms


def test_lecun_init_norms_have_the_lecun_scale():
    norms = lecun_init_norms(144, 144, 3)
    for name in ("Q", "K", "V"):
        assert norms[f"W{name}0_F"] == pytest.approx(12.0, rel=0.05)  # sqrt(d_m d / d)
        assert norms[f"W{name}0_2"] == pytest.approx(2.0, rel=0.1)  # (sqrt(d_m)+sqrt(d))/sqrt(d)
    assert norms["WO0_2"] == pytest.approx(1.0, rel=0.2)
