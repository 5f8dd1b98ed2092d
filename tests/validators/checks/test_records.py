"""The records' a-priori and a-posteriori bounds of Lemmas 2, 3 and 6."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.records import a_posteriori, a_priori  # noqa: E402


def test_a_posteriori_equals_a_priori_at_the_worst_case_geometry():
    for act in ("tanh", "erf"):
        prior2 = a_priori("lemma2", m=16, d=4, rho="2,1,3", activation=act)
        prior3 = a_priori("lemma3", m=16, d=4, rho="2,1,3", activation=act)
        prior6 = a_priori("lemma6", m=16, d=4, rho="2,1,3", activation=act)
        post = a_posteriori(m=16, d=4, rho="2,1,3", activation=act,
                            u0_max=prior2["constants"]["u_inf"], x_max=1.0, q_max=1.0, g_max=1.0)
        assert post["lipschitz_L"] == pytest.approx(prior2["bound"]["lipschitz_L"], rel=1e-12)
        assert post["smoothness_beta"] == pytest.approx(prior2["bound"]["smoothness_beta"],
                                                        rel=1e-12)
        assert post["eps_lin"] == pytest.approx(prior3["bound"]["eps_lin"], rel=1e-12)
        assert post["output_envelope_F"] == pytest.approx(prior6["bound"]["output_envelope_F"],
                                                          rel=1e-12)
        assert post["loss_gradient_envelope"] == pytest.approx(
            prior6["bound"]["loss_gradient_envelope"], rel=1e-12)
