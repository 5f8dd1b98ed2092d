"""The compiled CPU kernel of the fused step: same numbers as Lemma 1's closed form and as the
torch path, where it applies; a clean fallback where it does not."""

from __future__ import annotations

import json
import os
import shutil

import pytest
import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.kernel import cpu_kernel
from boundcalc.validators.model import (
    Params,
    get_activation,
    init_params,
    last_token_query,
    loss_and_gradient,
)
from boundcalc.validators.train import fused_loss_and_gradient, proj_gd, proj_sgd

HAS_CC = shutil.which(os.environ.get("CC") or "cc") is not None
needs_cc = pytest.mark.skipif(not HAS_CC, reason="no C compiler on this machine")
TANH = get_activation("tanh")


def _problem(n, m, d, T, dtype, u_scale=0.3, w_scale=0.3, seed=0):
    X = synthetic_inputs(n, T, d, seed=seed + 1, dtype=dtype)
    q = last_token_query(X)
    gen = torch.Generator().manual_seed(seed + 2)
    y = (0.3 * torch.randn(n, generator=gen, dtype=torch.float64)).to(dtype)
    p = init_params(m, d, seed=seed, dtype=dtype)
    moved = Params(p.c, u_scale * (p.U + torch.randn(p.U.shape, generator=gen,
                                                     dtype=torch.float64).to(dtype)),
                   p.W + w_scale * torch.randn(p.W.shape, generator=gen,
                                               dtype=torch.float64).to(dtype))
    return X, q, y, moved


def _assert_close(got, want, rtol):
    loss, grad, pred = want
    f_loss, f_grad, f_pred = got
    assert float(f_loss) == pytest.approx(float(loss), rel=rtol)
    assert torch.allclose(f_pred, pred, rtol=rtol, atol=rtol * float(pred.abs().max()))
    for a, b in zip(f_grad, grad, strict=True):   # (T = 1: ∇_W is 0 up to rounding)
        assert torch.allclose(a, b, rtol=rtol, atol=rtol * max(float(b.abs().max()), 1e-3))


@needs_cc
def test_the_kernel_builds_where_a_c_compiler_is_present():
    for dtype in (torch.float32, torch.float64):
        assert cpu_kernel.load_kernel(8, dtype) is not None, \
            cpu_kernel.kernel_unavailable_reason(8, dtype)


@needs_cc
@pytest.mark.parametrize("dtype,rtol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
@pytest.mark.parametrize("n,m,d,T", [(40, 8, 8, 16), (33, 6, 3, 5), (17, 18, 1, 1), (9, 2, 5, 7),
                                     (25, 40, 4, 3)])
def test_kernel_equals_the_closed_form_of_lemma1(n, m, d, T, dtype, rtol):
    # widths that are not a multiple of the head block (6, 18, 2, 40 with float64's 4 lanes)
    # exercise the zero-padded heads; d = 1 and T = 1 the degenerate loops
    X, q, y, p = _problem(n, m, d, T, dtype)
    want = loss_and_gradient(p, X, q, y, TANH)
    _assert_close(fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel"), want, rtol)


@needs_cc
@pytest.mark.parametrize("vector_bytes", ["32", "64"])
@pytest.mark.parametrize("dtype,rtol", [(torch.float64, 1e-12), (torch.float32, 2e-5)])
def test_kernel_of_either_vector_width_equals_the_closed_form(vector_bytes, dtype, rtol,
                                                              monkeypatch):
    # 32-byte blocks (4 float64 / 8 float32 heads) and 64-byte ones (8 / 16), whatever this
    # machine's compiler targets by default; widths 6 and 18 leave padded heads in both
    monkeypatch.setenv(cpu_kernel.VECTOR_BYTES_ENV, vector_bytes)
    monkeypatch.setattr(cpu_kernel, "_CACHE", {})
    kernel = cpu_kernel.load_kernel(5, dtype)
    assert kernel is not None and kernel.lanes == int(vector_bytes) * 8 // (
        64 if dtype == torch.float64 else 32)
    for m in (6, 18):
        X, q, y, p = _problem(23, m, 5, 7, dtype)
        want = loss_and_gradient(p, X, q, y, TANH)
        _assert_close(fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel"), want, rtol)


def test_a_vector_width_other_than_32_or_64_bytes_is_refused(monkeypatch):
    monkeypatch.setenv(cpu_kernel.VECTOR_BYTES_ENV, "48")
    with pytest.raises(RuntimeError, match="BOUNDCALC_KERNEL_VECTOR_BYTES"):
        cpu_kernel._vector_bytes_define()


@needs_cc
@pytest.mark.parametrize("u_scale", [1e-4, 0.05, 3.0, 30.0])
def test_kernel_tanh_is_accurate_on_both_branches_and_in_saturation(u_scale):
    # |pre| = |a_iᵀU_i| scales with U: ≤ 2e-4 (series branch), ≤ 0.11 (both), ≤ 6.8, ≤ 68
    X, q, y, p = _problem(64, 16, 6, 8, torch.float64, u_scale=u_scale)
    want = loss_and_gradient(p, X, q, y, TANH)
    _assert_close(fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel"), want, 1e-12)


@needs_cc
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_kernel_softmax_is_stable_for_large_attention_logits(dtype):
    X, q, y, p0 = _problem(12, 8, 3, 6, dtype)
    X = X / X.norm(dim=-1, keepdim=True)               # unit tokens: |z| up to ‖W_i q‖ = 1e3
    q = last_token_query(X)
    p = Params(p0.c, p0.U, 1e3 * p0.W / p0.W.flatten(1).norm(dim=-1).view(-1, 1, 1))
    want = loss_and_gradient(p, X, q, y, TANH)
    got = fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel")
    assert all(bool(torch.isfinite(t).all()) for t in (*got[1], got[2], got[0]))
    _assert_close(got, want, 1e-4 if dtype == torch.float32 else 1e-9)


@needs_cc
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_kernel_equals_the_torch_path_and_repeats_bitwise(workers):
    X, q, y, p = _problem(101, 24, 8, 16, torch.float32)
    torch_path = fused_loss_and_gradient(p, X, q, y, TANH, backend="torch")
    first = fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel", workers=workers)
    again = fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel", workers=workers)
    _assert_close(first, torch_path, 2e-5)
    assert torch.equal(first[0], again[0]) and torch.equal(first[2], again[2])
    assert all(torch.equal(a, b) for a, b in zip(first[1], again[1], strict=True))


@needs_cc
def test_kernel_loss_only_pass_returns_no_gradient():
    X, q, y, p = _problem(30, 8, 4, 5, torch.float64)
    loss, grad, pred = fused_loss_and_gradient(p, X, q, y, TANH, need_grad=False,
                                               backend="kernel")
    want = loss_and_gradient(p, X, q, y, TANH)
    assert grad is None
    assert float(loss) == pytest.approx(float(want[0]), rel=1e-12)
    assert torch.allclose(pred, want[2], rtol=1e-12, atol=1e-15)


@needs_cc
def test_projgd_trajectory_is_the_same_with_kernel_and_torch_path(monkeypatch):
    X, q, y, _ = _problem(60, 8, 3, 5, torch.float64)
    p0 = init_params(8, 3, seed=4, dtype=torch.float64)
    kernel_run = proj_gd(p0, X, q, y, TANH, steps=15, eta=2.0, rho=0.8)
    monkeypatch.setenv("BOUNDCALC_CPU_KERNEL", "0")
    torch_run = proj_gd(p0, X, q, y, TANH, steps=15, eta=2.0, rho=0.8)
    assert torch.allclose(kernel_run.loss, torch_run.loss, rtol=1e-11)
    for a, b in zip(kernel_run.params, torch_run.params, strict=True):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-13)


@needs_cc
def test_projsgd_trajectory_is_the_same_with_kernel_and_torch_path():
    X, q, y, _ = _problem(60, 8, 3, 5, torch.float64)
    p0 = init_params(8, 3, seed=4, dtype=torch.float64)
    runs = [proj_sgd(p0, X, q, y, TANH, steps=12, eta=2.0, rho=0.8, batch_size=16, seed=3,
                     backend=backend) for backend in ("kernel", "torch")]
    assert [r.config["backend"] for r in runs] == ["kernel", "torch"]
    assert torch.allclose(runs[0].loss, runs[1].loss, rtol=1e-11)
    assert torch.allclose(runs[0].batch_loss, runs[1].batch_loss, rtol=1e-11)
    for a, b in zip(runs[0].params, runs[1].params, strict=True):
        assert torch.allclose(a, b, rtol=1e-10, atol=1e-13)


def test_switching_the_kernel_off_gives_none_and_backend_kernel_is_refused(monkeypatch):
    monkeypatch.setenv("BOUNDCALC_CPU_KERNEL", "off")
    assert cpu_kernel.load_kernel(8, torch.float64) is None
    X, q, y, p = _problem(10, 4, 3, 4, torch.float64)
    with pytest.raises(ValueError, match="`backend` 'kernel'"):
        fused_loss_and_gradient(p, X, q, y, TANH, backend="kernel")
    # auto falls back to the torch path with the same numbers as the closed form
    _assert_close(fused_loss_and_gradient(p, X, q, y, TANH), loss_and_gradient(p, X, q, y, TANH),
                  1e-12)


def test_the_kernel_is_only_offered_where_it_applies():
    X, q, y, p = _problem(10, 4, 3, 4, torch.float64)
    with pytest.raises(ValueError, match="`backend` 'kernel'"):
        fused_loss_and_gradient(p, X, q, y, get_activation("erf"), backend="kernel")
    with pytest.raises(ValueError, match="`backend` must be"):
        fused_loss_and_gradient(p, X, q, y, TANH, backend="fast")
    assert cpu_kernel.load_kernel(cpu_kernel.MAX_D + 1, torch.float64) is None
    assert cpu_kernel.load_kernel(8, torch.float16) is None


def test_a_failed_build_falls_back_to_torch_and_says_why(monkeypatch, tmp_path):
    monkeypatch.setattr(cpu_kernel, "_CACHE", {})
    monkeypatch.setattr(cpu_kernel, "_FAILED", {})
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CC", "false")                  # a "compiler" that always fails
    monkeypatch.setattr(cpu_kernel.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    assert cpu_kernel.load_kernel(5, torch.float64) is None
    assert "failed" in cpu_kernel.kernel_unavailable_reason(5, torch.float64)
    X, q, y, p = _problem(10, 4, 5, 4, torch.float64)
    _assert_close(fused_loss_and_gradient(p, X, q, y, TANH), loss_and_gradient(p, X, q, y, TANH),
                  1e-12)
    assert not list((tmp_path / "cache").glob("*.so"))   # nothing half-written left behind


@needs_cc
def test_a_built_kernel_is_cached_and_reused(monkeypatch, tmp_path):
    monkeypatch.setattr(cpu_kernel, "_CACHE", {})
    monkeypatch.setattr(cpu_kernel, "_FAILED", {})
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path))
    assert cpu_kernel.load_kernel(2, torch.float64) is not None
    built = list(tmp_path.glob("fused_step_d2_float64_*.so"))
    assert len(built) == 1
    stamp = built[0].stat().st_mtime_ns
    monkeypatch.setattr(cpu_kernel, "_CACHE", {})

    def no_compiling(*args, **kwargs):
        raise AssertionError("the cached kernel was rebuilt")

    monkeypatch.setattr(cpu_kernel.subprocess, "run", no_compiling)
    assert cpu_kernel.load_kernel(2, torch.float64) is not None
    assert built[0].stat().st_mtime_ns == stamp


# ----------------------------------------------------------------- fallback, trust, arch flags


@pytest.fixture
def fresh_kernel_state(monkeypatch):
    """Empty in-process caches, the fallback note not yet printed (restored afterwards)."""
    for name in ("_CACHE", "_FAILED", "_BUILT", "_SKIPPED"):
        if hasattr(cpu_kernel, name):
            monkeypatch.setattr(cpu_kernel, name, {})
    monkeypatch.setenv("BOUNDCALC_KERNEL_FALLBACK_NOTED", "")


def test_a_fallback_is_noted_once_and_recorded_in_config_json(monkeypatch, tmp_path, capfd,
                                                              fresh_kernel_state):
    from boundcalc.runs.directory import RunDirectory

    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "cache"))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(cpu_kernel.tempfile, "gettempdir", lambda: str(tmp_path / "tmp"))
    monkeypatch.setenv("CC", "false")                  # a "compiler" that always fails
    for d in (3, 4, 3):
        assert cpu_kernel.load_kernel(d, torch.float64) is None
    err = capfd.readouterr().err
    assert err.count("compiled CPU kernel is not available") == 1, err
    assert "torch path" in err and "false" in err and len(err.strip().splitlines()) == 1
    RunDirectory(tmp_path / "run", {"d": 3})
    env = json.loads((tmp_path / "run" / "config.json").read_text())["environment"]
    assert env["cpu_kernel"]["d3-float64"]["backend"] == "torch"
    assert "failed" in env["cpu_kernel"]["d3-float64"]["reason"]
    # a worker process inherits the mark and stays quiet
    assert os.environ.get("BOUNDCALC_KERNEL_FALLBACK_NOTED")


@needs_cc
def test_the_backend_that_runs_is_recorded(monkeypatch, tmp_path, fresh_kernel_state):
    from boundcalc.runs.directory import environment

    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "cache"))
    assert cpu_kernel.load_kernel(2, torch.float64) is not None
    report = environment()["cpu_kernel"]["d2-float64"]
    assert report["backend"] == "kernel" and report["reason"] is None
    assert report["library"].startswith(str(tmp_path / "cache"))


@needs_cc
def test_no_library_is_loaded_from_a_folder_others_can_write(monkeypatch, tmp_path,
                                                             fresh_kernel_state):
    # learn the library's name from a build in a private folder
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "private"))
    assert cpu_kernel.load_kernel(2, torch.float64) is not None
    (built,) = (tmp_path / "private").glob("*.so")
    for name in ("_CACHE", "_FAILED", "_BUILT"):
        if hasattr(cpu_kernel, name):
            monkeypatch.setattr(cpu_kernel, name, {})
    # the user's cache cannot be created; the shared temporary folders hold a planted library
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "a-file" / "kernels"))
    shared = tmp_path / "tmp"
    monkeypatch.setattr(cpu_kernel.tempfile, "gettempdir", lambda: str(shared))
    planted = []
    for folder in (shared / "boundcalc-kernels", shared / f"boundcalc-{os.getuid()}" / "kernels"):
        folder.mkdir(parents=True)
        folder.chmod(0o777)                            # world-writable, as /tmp is
        (folder / built.name).write_bytes(b"not the library you built")
        planted.append(folder / built.name)
    loaded = []
    real_cdll = cpu_kernel.ctypes.CDLL
    monkeypatch.setattr(cpu_kernel.ctypes, "CDLL",
                        lambda path, *a, **k: loaded.append(str(path)) or real_cdll(path, *a, **k))
    assert cpu_kernel.load_kernel(2, torch.float64) is None
    assert not [p for p in loaded if p in {str(x) for x in planted}], loaded
    assert "writable by others" in cpu_kernel.kernel_unavailable_reason(2, torch.float64)


@needs_cc
def test_arm64_uses_mcpu_native_and_retries_without_it(monkeypatch, tmp_path,
                                                       fresh_kernel_state):
    log = tmp_path / "cc.log"
    fake = tmp_path / "fake-cc"
    real = shutil.which(os.environ.get("CC") or "cc")
    fake.write_text(f"""#!/bin/sh
echo "$@" >> {log}
for a in "$@"; do case "$a" in -mcpu=native|-march=native) echo "unknown: $a" >&2; exit 1;; esac
done
exec {real} "$@"
""")
    fake.chmod(0o755)
    monkeypatch.setenv("CC", str(fake))
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(cpu_kernel.platform, "machine", lambda: "aarch64")
    assert cpu_kernel.load_kernel(2, torch.float32) is not None
    calls = log.read_text().splitlines()
    assert len(calls) == 2 and "-mcpu=native" in calls[0].split()
    assert "-mcpu=native" not in calls[1].split() and "-march=native" not in calls[1].split()


def _shared_parent(tmp_path, owner: str):
    """A folder others can change: world-writable (as a careless shared scratch folder), or
    another user's (uid 65534, needs root to arrange)."""
    if owner == "another uid" and os.geteuid() != 0:
        pytest.skip("giving a folder to another uid needs root")
    shared = tmp_path / "shared"
    shared.mkdir()
    if owner == "another uid":
        os.chown(shared, 65534, 65534)
    else:
        shared.chmod(0o777)
    return shared


@needs_cc
@pytest.mark.parametrize("owner", ["world-writable", "another uid"])
def test_no_kernel_is_built_or_loaded_below_a_folder_others_can_change(monkeypatch, tmp_path,
                                                                     fresh_kernel_state, owner):
    shared = _shared_parent(tmp_path, owner)
    # the cache and $TMPDIR (the fallback) both below it, each leaf our own 0700 folder
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(shared / "cache" / "kernels"))
    (shared / "tmp").mkdir(mode=0o700)
    monkeypatch.setattr(cpu_kernel.tempfile, "gettempdir", lambda: str(shared / "tmp"))
    loaded = []
    real_cdll = cpu_kernel.ctypes.CDLL
    monkeypatch.setattr(cpu_kernel.ctypes, "CDLL",
                        lambda path, *a, **k: loaded.append(str(path)) or real_cdll(path, *a, **k))
    assert cpu_kernel.load_kernel(2, torch.float64) is None
    assert not list(shared.rglob("*.so")) and not loaded
    assert f"{shared} above" in cpu_kernel.kernel_unavailable_reason(2, torch.float64)


@needs_cc
@pytest.mark.parametrize("owner", ["world-writable", "another uid"])
def test_a_cache_below_a_folder_others_can_change_gives_way_to_a_private_one(
        monkeypatch, tmp_path, capfd, fresh_kernel_state, owner):
    shared = _shared_parent(tmp_path, owner)
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE", str(shared / "kernels"))
    monkeypatch.setenv("BOUNDCALC_KERNEL_CACHE_SKIP_NOTED", "")
    monkeypatch.setattr(cpu_kernel.tempfile, "gettempdir", lambda: str(tmp_path / "own"))
    for d in (2, 3):
        assert cpu_kernel.load_kernel(d, torch.float64) is not None
    own = tmp_path / "own" / f"boundcalc-{os.getuid()}" / "kernels"
    assert len(list(own.glob("*.so"))) == 2 and not list(shared.rglob("*.so"))
    notes = [line for line in capfd.readouterr().err.splitlines() if "is not used" in line]
    assert len(notes) == 1 and str(shared / "kernels") in notes[0] and str(own) in notes[0]
