"""Transport teacher (Section 6.1) and transported parameters θ̄ (eq. 11); inputs and labels I/O."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from boundcalc.validators.data.inputs import (
    derived_seed,
    load_inputs,
    load_labels,
    synthetic_inputs,
)
from boundcalc.validators.model import (
    Params,
    displacement_radii,
    get_activation,
    head_features,
    init_params,
    last_token_query,
    linearized_output,
)
from boundcalc.validators.teacher import build_teacher, transported_params
from torch.func import jvp

pytestmark = pytest.mark.needs_torch

D, T = 3, 5



@pytest.fixture(scope="module")
def teacher():
    return build_teacher(D, T, seed=4, nu=(1.0, 2.0, 1.5), anchors=6, width=4096)


@pytest.fixture(scope="module")
def data():
    X = synthetic_inputs(12, T, D, seed=derived_seed(4, "data"))
    return X, last_token_query(X)


def test_transport_map_respects_the_sup_norm_budgets(teacher):
    nu_c, nu_u, nu_w = teacher.transport.nu
    v = teacher.v
    assert float(v.c.abs().max()) <= nu_c * (1 + 1e-12)
    assert float(v.U.norm(dim=-1).max()) <= nu_u * (1 + 1e-12)
    assert float(v.W.flatten(1).norm(dim=-1).max()) <= nu_w * (1 + 1e-12)
    assert float(teacher.transport.alpha.abs().sum()) == pytest.approx(1.0, rel=1e-14)


def test_transport_map_depends_on_U_and_W_only_so_paired_heads_agree(teacher):
    p0 = init_params(8, D, seed=11)
    v = teacher.transport(p0.U, p0.W)
    for block in v:
        assert torch.equal(block[:4], block[4:])


def test_teacher_is_exactly_the_mean_of_psi_over_its_own_samples(data):
    """f*_M(X) = (1/M) Σ_s [v_c σ(U_sᵀa) + D_{(U,W)}σ(Uᵀa(W))[v_u, v_w]], ψ by forward-mode AD."""
    X, q = data
    small = build_teacher(D, T, seed=5, nu=1.0, anchors=3, width=7)
    act = small.act

    def g(U, W):  # one head's σ(Uᵀ a(X; W)) for every sample
        z = torch.einsum("ntd,de,ne->nt", X, W, q)
        a = torch.einsum("nt,ntd->nd", torch.softmax(z, -1), X)
        return act.fn(a @ U)

    psi = []
    for s in range(small.width):
        value, deriv = jvp(g, (small.U[s], small.W[s]), (small.v.U[s], small.v.W[s]))
        psi.append(small.v.c[s] * value + deriv)
    expected = torch.stack(psi).mean(0)
    assert torch.allclose(small(X), expected, rtol=1e-12, atol=1e-15)


def test_teacher_equals_f_lin_of_its_own_samples_transported(teacher, data):
    """A width-2M student whose heads are the teacher's samples reproduces f*_M exactly."""
    X, q = data
    M = teacher.width
    c = torch.cat([torch.ones(M), -torch.ones(M)]).to(torch.float64)
    p0 = Params(c, torch.cat([teacher.U, teacher.U]), torch.cat([teacher.W, teacher.W]))
    f_lin = linearized_output(p0, transported_params(p0, teacher), X, q, teacher.act)
    assert torch.allclose(f_lin, teacher(X), rtol=1e-10, atol=1e-13)


def test_teacher_evaluation_does_not_depend_on_chunking(teacher, data, monkeypatch):
    import boundcalc.validators.teacher as mod

    X, _ = data
    full = teacher(X)
    monkeypatch.setattr(mod, "CPU_CHUNK_ELEMENTS", 3 * 1000 * T)   # 3 samples × 1000 heads
    monkeypatch.setattr(mod, "CPU_HEAD_BLOCK", 1000)                 # does not divide 4096
    assert torch.allclose(teacher(X), full, rtol=1e-12, atol=1e-15)


def _psi_mean_reference(U, W, v, X, q, act):
    """The former psi_mean: model.head_features in the (n, k, T) layout, all at once."""
    F = head_features(Params(torch.ones_like(v.c), U, W), X, q, act)
    vq = torch.einsum("kab,nb->nka", v.W, q)
    lin = (F.a * v.U).sum(-1) + (F.GU * vq).sum(-1)
    return (F.h * v.c + F.dh * lin).mean(-1)


def _random_psi_inputs(seed, n=13, k=37, T=6, d=4, scale=1.0, dtype=torch.float64):
    gen = torch.Generator().manual_seed(seed)
    U = torch.randn(k, d, generator=gen, dtype=torch.float64)
    W = scale * torch.randn(k, d, d, generator=gen, dtype=torch.float64)
    v = Params(torch.randn(k, generator=gen, dtype=torch.float64),
               torch.randn(k, d, generator=gen, dtype=torch.float64),
               torch.randn(k, d, d, generator=gen, dtype=torch.float64))
    X = synthetic_inputs(n, T, d, seed=seed)
    q = torch.randn(n, d, generator=gen, dtype=torch.float64) / 2
    return tuple(t.to(dtype) for t in (U, W)), v.to(dtype), X.to(dtype), q.to(dtype)


# (rows, heads) blocks: one block; rows 2 and heads 5, dividing neither n = 13 nor k = 37; 1 × 1
PSI_BLOCKS = [(1 << 20, 1 << 10), (2 * 5 * 6, 5), (6, 1)]


@pytest.mark.parametrize("elements,head_block", PSI_BLOCKS)
@pytest.mark.parametrize("activation", ["tanh", "erf"])
def test_psi_mean_equals_the_head_features_reference_in_float64_for_any_blocking(
        monkeypatch, elements, head_block, activation):
    import boundcalc.validators.teacher as mod

    monkeypatch.setattr(mod, "CPU_CHUNK_ELEMENTS", elements)
    monkeypatch.setattr(mod, "CPU_HEAD_BLOCK", head_block)
    (U, W), v, X, q = _random_psi_inputs(1)
    act = get_activation(activation)
    got = mod.psi_mean(U, W, v, X, q, act)
    expected = _psi_mean_reference(U, W, v, X, q, act)
    assert got.shape == (13,) and got.dtype == torch.float64
    assert torch.allclose(got, expected, rtol=1e-12, atol=1e-14 * float(expected.abs().max()))


@pytest.mark.parametrize("elements,head_block", PSI_BLOCKS)
def test_psi_mean_equals_the_head_features_reference_in_float32(monkeypatch, elements,
                                                                 head_block):
    import boundcalc.validators.teacher as mod

    monkeypatch.setattr(mod, "CPU_CHUNK_ELEMENTS", elements)
    monkeypatch.setattr(mod, "CPU_HEAD_BLOCK", head_block)
    (U, W), v, X, q = _random_psi_inputs(2, dtype=torch.float32)
    act = get_activation("tanh")
    got = mod.psi_mean(U, W, v, X, q, act)
    expected = _psi_mean_reference(*(t.double() for t in (U, W)), v.to(torch.float64),
                                   X.double(), q.double(), act)
    assert got.dtype == torch.float32
    assert torch.allclose(got.double(), expected, rtol=1e-5,
                          atol=1e-6 * float(expected.abs().max()))


def test_psi_mean_stays_exact_when_logits_overflow_the_last_token_shift():
    """Logits of size ~10³ make exp(z_t − z_T) overflow: the block is redone with the max."""
    from boundcalc.validators.teacher import psi_mean

    (U, W), v, X, q = _random_psi_inputs(3, scale=500.0)
    act = get_activation("tanh")
    got = psi_mean(U, W, v, X, q, act)
    expected = _psi_mean_reference(U, W, v, X, q, act)
    assert bool(torch.isfinite(got).all())
    assert torch.allclose(got, expected, rtol=1e-12, atol=1e-14 * float(expected.abs().max()))


def test_psi_mean_blocks_are_cache_sized_on_the_cpu_and_large_elsewhere():
    from boundcalc.validators.teacher import (
        ACCEL_CHUNK_ELEMENTS,
        CPU_CHUNK_ELEMENTS,
        CPU_HEAD_BLOCK,
        _psi_chunking,
    )

    rows, heads = _psi_chunking(5000, 8192, 16, 8, torch.device("cpu"), torch.float64)
    assert heads == CPU_HEAD_BLOCK and rows * 16 * heads <= CPU_CHUNK_ELEMENTS
    assert _psi_chunking(5000, 8192, 1 << 20, 8, torch.device("cpu"), torch.float64) == (1, 1)
    rows, heads = _psi_chunking(5000, 8192, 16, 8, torch.device("meta"), torch.float64)
    assert heads == 8192 and rows * 16 * heads == ACCEL_CHUNK_ELEMENTS


@pytest.mark.parametrize("m", [2, 8, 64])
def test_transported_params_lie_in_omega_nu(teacher, m):
    p0 = init_params(m, D, seed=m)
    used = displacement_radii(transported_params(p0, teacher), p0)
    for r, nu in zip(used, teacher.transport.nu, strict=True):
        assert r <= nu * (1 + 1e-12)


def test_f_lin_at_transported_params_is_the_width_m_mean_of_psi(teacher, data):
    """f_lin(X; θ̄) = (1/m) Σ_i ψ(U_i(0), W_i(0); X): a teacher built on the student's heads."""
    X, q = data
    p0 = init_params(10, D, seed=3)
    f_lin = linearized_output(p0, transported_params(p0, teacher), X, q, teacher.act)
    from boundcalc.validators.teacher import psi_mean

    v = teacher.transport(p0.U[:5], p0.W[:5])
    assert torch.allclose(f_lin, psi_mean(p0.U[:5], p0.W[:5], v, X, q, teacher.act),
                          rtol=1e-12, atol=1e-15)


def test_f_lin_at_transported_params_converges_to_the_teacher_as_m_grows(data):
    """Monte Carlo error of f_lin(θ̄) against a wide teacher shrinks like m^{-1/2}."""
    X, q = data
    wide = build_teacher(D, T, seed=4, nu=(1.0, 2.0, 1.5), anchors=6, width=1 << 15)
    target = wide(X)
    errors = {}
    for m in (8, 2048):
        errs = []
        for seed in range(6):
            p0 = init_params(m, D, seed=seed)
            f_lin = linearized_output(p0, transported_params(p0, wide), X, q, wide.act)
            errs.append(float((f_lin - target).abs().max()))
        errors[m] = float(np.mean(errs))
    # √(2048/8) = 16; demand at least a factor 5 (Monte Carlo noise over 6 seeds)
    assert errors[2048] < errors[8] / 5, errors
    assert errors[2048] < 0.2 * wide.label_sup


def test_teacher_mc_error_bound_is_lemma5_at_twice_the_teacher_width(teacher):
    from boundcalc.calc.api import evaluate
    from boundcalc.inputs.params import validate

    ref = evaluate("lemma5", validate(m=2 * teacher.width, n=12, d=D, delta="0.001",
                                      nu="1.0,2.0,1.5")).bound["eps_app"]
    assert teacher.mc_error_bound(12, 0.001) == pytest.approx(float(ref), rel=1e-12)


def test_same_seed_builds_the_same_teacher_and_other_seeds_differ(data):
    X, _ = data
    a, b, c = (build_teacher(D, T, seed=s, anchors=2, width=64) for s in (1, 1, 2))
    assert torch.equal(a(X), b(X))
    assert not torch.equal(a(X), c(X))
    # the teacher's samples are not the student's init drawn with the same seed
    assert not torch.equal(a.U[:2], init_params(4, D, seed=1).U[:2])


def test_teacher_float32_agrees_with_float64(data):
    X, _ = data
    t64 = build_teacher(D, T, seed=1, anchors=3, width=256)
    t32 = build_teacher(D, T, seed=1, anchors=3, width=256, dtype=torch.float32)
    assert torch.allclose(t32(X.float()).double(), t64(X), atol=1e-5)


def test_build_teacher_rejects_bad_arguments_naming_them():
    with pytest.raises(ValueError, match="`nu`"):
        build_teacher(D, T, seed=0, nu=(1.0, -1.0, 1.0))
    with pytest.raises(ValueError, match="`width`"):
        build_teacher(D, T, seed=0, width=0)
    with pytest.raises(ValueError, match="`anchors`"):
        build_teacher(D, T, seed=0, anchors=0)
    with pytest.raises(ValueError, match="`activation`"):
        build_teacher(D, T, seed=0, activation="relu")


def test_fixed_query_teacher_uses_that_query():
    q = torch.tensor([0.6, 0.0, 0.8], dtype=torch.float64)
    t = build_teacher(D, T, seed=0, anchors=2, width=32, query=q)
    X = synthetic_inputs(3, T, D, seed=0)
    assert torch.equal(t.queries(X), q.expand(3, -1))
    with pytest.raises(ValueError, match="`query`"):
        build_teacher(D, T, seed=0, query=2 * q)


# ---------------------------------------------------------------- inputs and labels (data.py)

def test_synthetic_inputs_have_token_norms_at_most_one_and_are_seeded():
    X = synthetic_inputs(50, 7, 4, seed=3)
    assert tuple(X.shape) == (50, 7, 4)
    assert float(X.norm(dim=-1).max()) <= 1 + 1e-12
    assert torch.equal(X, synthetic_inputs(50, 7, 4, seed=3))
    assert torch.equal(synthetic_inputs(5, 2, 3, seed=1, dtype=torch.float32),
                       synthetic_inputs(5, 2, 3, seed=1).float())


@pytest.mark.parametrize("suffix", [".npy", ".pt"])
def test_load_inputs_roundtrips_valid_arrays(tmp_path, suffix):
    X = synthetic_inputs(4, 3, 2, seed=0)
    path = tmp_path / f"x{suffix}"
    np.save(path, X.numpy()) if suffix == ".npy" else torch.save(X, path)
    assert torch.equal(load_inputs(path), X)


def test_load_inputs_rejects_bad_files_with_one_line_messages(tmp_path):
    cases = {
        "shape.npy": (np.zeros((3, 4)), "shape \\(n, T, d\\)"),
        "nan.npy": (np.full((2, 2, 2), np.nan), "non-finite"),
        "norm.npy": (np.full((2, 3, 2), 5.0), "norm > 1"),
    }
    for name, (array, pattern) in cases.items():
        np.save(tmp_path / name, array)
        with pytest.raises(ValueError, match=pattern) as info:
            load_inputs(tmp_path / name)
        assert name in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ValueError, match="unsupported file type"):
        load_inputs(tmp_path / "x.csv")
    with pytest.raises(ValueError, match="no such file"):
        load_inputs(tmp_path / "missing.npy")


def test_load_inputs_clips_when_asked(tmp_path):
    np.save(tmp_path / "big.npy", np.full((2, 3, 4), 5.0))
    X = load_inputs(tmp_path / "big.npy", clip=True)
    assert float(X.norm(dim=-1).max()) == pytest.approx(1.0, rel=1e-12)


def test_load_labels_checks_length_and_finiteness(tmp_path):
    np.save(tmp_path / "y.npy", np.arange(4.0).reshape(4, 1))
    assert torch.equal(load_labels(tmp_path / "y.npy", n=4), torch.arange(4.0).double())
    with pytest.raises(ValueError, match="expected 5 labels"):
        load_labels(tmp_path / "y.npy", n=5)
    np.save(tmp_path / "bad.npy", np.array([1.0, np.inf]))
    with pytest.raises(ValueError, match="non-finite"):
        load_labels(tmp_path / "bad.npy")


def test_activation_bounds_match_the_calculator_presets():
    from boundcalc.validators.teacher import activation_bounds

    assert activation_bounds(get_activation("tanh")) == (1.0, 1.0)
    s0, s1 = activation_bounds(get_activation("erf"))
    assert s0 == 1.0 and s1 == pytest.approx((2 / np.pi) ** 0.5, rel=1e-15)
