"""Lemma 3's measurement: the paper's boundary point of Ω_ρ and its alignments; the device."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.checks.adversary import synthetic_inputs  # noqa: E402
from boundcalc.validators.checks.lemma3 import paper_boundary_point, validate_lemma3  # noqa: E402
from boundcalc.validators.model import displacement_radii, get_activation, init_params  # noqa: E402


def test_paper_boundary_point_sits_on_the_boundary_of_omega():
    p0 = init_params(8, 3, seed=1)
    X, q = synthetic_inputs(5, 4, 3, seed=1)
    disp = paper_boundary_point(p0, X, q, (2.0, 1.0, 3.0), get_activation("tanh"))
    assert displacement_radii(p0 + disp, p0) == pytest.approx((2.0, 1.0, 3.0), rel=1e-12)
    assert (disp.c > 0).all()


def test_boundary_alignments_differ_by_the_sign_of_c_and_only_feature_keeps_second_order():
    """``output`` moves mirrored heads (i, i + m/2) in opposite directions, ``feature`` in the
    same one; the second-order gap survives only the latter, so at m = 64 the ``feature`` point's
    |f − f_lin| is several times the ``output`` point's (measured ≈ 30× at m = 64 in the
    figure-1 setting)."""
    act = get_activation("tanh")
    m = 64
    p0 = init_params(m, 4, seed=2)
    X, q = synthetic_inputs(200, 6, 4, seed=2)
    out = paper_boundary_point(p0, X, q, (3.0, 3.0, 3.0), act, align="output")
    feat = paper_boundary_point(p0, X, q, (3.0, 3.0, 3.0), act, align="feature")
    half = m // 2
    assert torch.allclose(out.U[half:], -out.U[:half])
    assert torch.allclose(out.W[half:], -out.W[:half])
    assert torch.allclose(feat.U[half:], feat.U[:half])
    assert torch.allclose(feat.W[half:], feat.W[:half])
    assert torch.equal(out.c, feat.c)
    sign = torch.sign(p0.c).view(-1, 1)
    assert torch.allclose(feat.U, out.U * sign)
    assert displacement_radii(p0 + feat, p0) == pytest.approx((3.0, 3.0, 3.0), rel=1e-12)

    from boundcalc.validators.model import forward, linearized_output

    def gap(disp):
        theta = p0 + disp
        with torch.no_grad():
            return float((forward(theta, X, q, act)
                          - linearized_output(p0, theta, X, q, act)).abs().mean())

    assert gap(feat) > 5 * gap(out)
    with pytest.raises(ValueError, match="align"):
        paper_boundary_point(p0, X, q, (3.0, 3.0, 3.0), act, align="loss")


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a GPU")
def test_device_argument_is_honoured_on_cuda():
    cpu = validate_lemma3(4, 2, 3, "2", starts=3, steps=5, samples=2, device="cpu")
    gpu = validate_lemma3(4, 2, 3, "2", starts=3, steps=5, samples=2, device="cuda")
    assert all(r["device"].startswith("cuda") for r in gpu)
    for a, b in zip(cpu, gpu, strict=True):
        assert a["measured"] == pytest.approx(b["measured"], rel=1e-6)
