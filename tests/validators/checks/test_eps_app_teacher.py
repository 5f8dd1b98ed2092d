"""ε_app's falsifier inside Lemma 5's class: the signed teacher (checks/eps_app_teacher.py).

Its target is 0 at the reference input exactly, its error is the model's own linearized output at
the transported θ̄, it is far larger than the training teacher's, and a lowered ε_app is caught.
"""

from __future__ import annotations

import math

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.eps_app_teacher import (  # noqa: E402
    reference_input,
    signed_teacher_error,
    signed_teacher_record,
)
from boundcalc.validators.model import get_activation, head_features, init_params  # noqa: E402

NU = (3.0, 3.0, 3.0)


def _psi(m: int, d: int, seed: int) -> torch.Tensor:
    """Each head's term r(ν_c|σ(z)| + ν_uσ'(z)‖a‖ + ν_wσ'(z)‖GU‖‖q‖) at X₀, in closed form."""
    act = get_activation("tanh")
    p0 = init_params(m, d, seed=seed)
    X, q = reference_input(d)
    F = head_features(p0, X, q, act)
    r = torch.where(p0.U[:, 1] >= 0, 1.0, -1.0).double()
    return r * (NU[0] * F.h[0].abs() + NU[1] * F.dh[0] * F.a[0].norm(dim=-1)
                + NU[2] * F.dh[0] * F.GU[0].norm(dim=-1))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_error_is_the_mean_of_the_heads_signed_terms(seed):
    # f_lin(X0; theta_bar) = (1/m) sum_i psi_i (eq. 11, c_i(0)^2 = 1), and f*(X0) = 0
    m, d = 16, 3
    expect = float(_psi(m, d, seed).mean().abs())
    assert signed_teacher_error(m, d, NU, seed) == pytest.approx(expect, rel=1e-12, abs=1e-15)


def test_the_target_is_zero_by_the_sign_symmetry():
    # flipping U_2 flips r and leaves z, a, GU unchanged: each head's term changes sign exactly
    m, d = 8, 3
    act = get_activation("tanh")
    p0 = init_params(m, d, seed=5)
    X, q = reference_input(d)
    flipped = p0._replace(U=p0.U * torch.tensor([1.0, -1.0, 1.0], dtype=torch.float64))
    f, g = head_features(p0, X, q, act), head_features(flipped, X, q, act)
    assert torch.equal(f.pre, g.pre) and torch.allclose(f.GU, g.GU, rtol=0, atol=1e-15)


def test_each_pair_term_stays_inside_the_class_bound():
    # |psi| <= sigma0 nu_c + sigma1 nu_u + sigma1 nu_w ||U|| (Lemma 5's B0 + B_w ||U||)
    m, d = 64, 4
    psi = _psi(m, d, 3)
    U = init_params(m, d, seed=3).U
    assert bool((psi.abs() <= 6.0 + 3.0 * U.norm(dim=-1) + 1e-12).all())


def test_the_signed_teacher_reaches_far_more_of_eps_app_than_the_training_teacher():
    # m = 256, d = 8, nu = 3: eps_app = 4.667 (n = 64); the training teacher reached 0.0197 of it
    rec = signed_teacher_record(256, 8, NU, 4.667, seeds=40)
    assert rec["holds"] and rec["violation_rate"] == 0.0
    assert rec["ratio"] > 0.1 and rec["mean_error"] > 0.1


def test_a_lowered_eps_app_is_reported_as_a_violation():
    rec = signed_teacher_record(16, 2, NU, 4.0, seeds=40, bound_scale=0.1)
    assert not rec["holds"] and rec["violation_rate"] > 0.05
    assert rec["bound"] == pytest.approx(0.4) and math.isfinite(rec["ratio"])


def test_d_below_two_is_refused():
    with pytest.raises(ValueError, match="`d` must be at least 2"):
        signed_teacher_error(4, 1, NU, 0)


def test_the_signed_teacher_reaches_three_tenths_of_eps_app_on_a_one_input_data_set():
    # Lemma 5 holds for every n >= 1; at n = 1 its union over inputs costs sqrt(2 log(4/delta))
    # instead of sqrt(2 log(4n/delta)), and the teacher's error does not depend on n (it is
    # measured at the one reference input), so the class is tested closest there.
    from boundcalc.validators.checks.tight import tight_bounds

    eps_app = tight_bounds(m=256, d=8, rho="3", nu="3", n=1)["eps_app"]
    rec = signed_teacher_record(256, 8, NU, eps_app, seeds=200, n=1)
    assert rec["holds"] and rec["violation_rate"] == 0.0
    assert rec["ratio"] >= 0.3


def test_the_tight_check_evaluates_eps_app_at_the_runs_data_set_size():
    from boundcalc.validators.checks.tight import tight_bounds, validate_tight

    small = dict(starts=1, steps=1, samples=1, draws=10, teacher_seeds=4)
    for n in (1, 64):
        records = validate_tight(16, 2, 2, "1", nu="1", n=n, **small)
        teacher = next(r for r in records if r["name"] == "tight.eps_app_teacher")
        expected = tight_bounds(m=16, d=2, rho="1", nu="1", n=n)["eps_app"]
        assert teacher["n"] == n and teacher["bound"] == pytest.approx(expected, rel=1e-12)
    assert tight_bounds(m=16, d=2, rho="1", nu="1", n=1)["eps_app"] < expected
