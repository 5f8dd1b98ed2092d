"""Figure 2 (Section 6.2): the quick preset end to end, resuming, the summary statistics."""

from __future__ import annotations

import csv
import json
import math
import re

import pytest
from boundcalc.validators.experiments.figure2 import (
    PRESETS,
    all_cells,
    make_config,
    mean_ci95,
    run_figure2,
    work_units,
)

OUTPUTS = ("config.json", "results.csv", "results.json", "summary.csv", "summary.json",
           "figure2.png", "figure2.pdf", "figure2.caption.txt", "figure2_table.tex")

# a tiny run with the full protocol (both models, plain GD, metrics at every iterate)
TINY = dict(lags=(4, 16), n=60, m=4, steps=8, seeds=(0, 1, 2))


def _rows(path):
    with open(path, newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_quick_preset_writes_every_output(tmp_path):
    out = run_figure2("quick", out=tmp_path / "quick", progress=False)
    for name in OUTPUTS:
        assert (out / name).stat().st_size > 0, name
    cfg = PRESETS["quick"]
    cells = _rows(out / "results.csv")
    assert len(cells) == len(all_cells(cfg)) == 2 * len(cfg.lags) * len(cfg.seeds)
    summary = _rows(out / "summary.csv")
    assert {(r["model"], int(r["L"])) for r in summary} == {
        (m, L) for m in ("transformer", "indrnn") for L in (4, 16, 72, 96)}
    for row in summary:
        assert float(row["max_jacobian_mean"]) > 0 and math.isfinite(float(
            row["max_jacobian_mean"]))
        assert 0 < float(row["min_val_loss_mean"]) < 10
        T = int(row["T"])
        expected = T * 17 if row["model"] == "transformer" else cfg.m
        assert int(row["memory_floats_per_sample"]) == expected
    table = (out / "figure2_table.tex").read_text()
    assert "\\toprule" in table and "\\bottomrule" in table
    assert sum(line.endswith("\\\\") for line in table.splitlines()) == 2 + len(cfg.lags)
    assert "\\multicolumn{2}{c}{max Jacobian norm}" in table
    assert not re.search(r"\d[eE][+-]?\d", table) and "e+" not in table
    assert (out / "figure2.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    pdf = (out / "figure2.pdf").read_bytes()
    assert pdf[:5] == b"%PDF-" and b"/Type3" not in pdf and b"/CIDFontType2" in pdf
    config = json.loads((out / "config.json").read_text())
    assert config["parameters"]["preset"] == "quick"
    assert config["parameters"]["steps"] == cfg.steps


@pytest.mark.slow
def test_interrupted_run_resumes_to_the_same_summary(tmp_path):
    fresh = run_figure2("quick", out=tmp_path / "fresh", progress=False, **TINY)
    partial = tmp_path / "partial"
    run_figure2("quick", out=partial, progress=False, max_cells=5, **TINY)
    done = sorted(p.name for p in (partial / "cells").iterdir())
    assert len(done) == 5
    before = {name: (partial / "cells" / name).read_text() for name in done}
    run_figure2("quick", out=partial, progress=False, **TINY)
    assert (partial / "summary.csv").read_text() == (fresh / "summary.csv").read_text()
    assert (partial / "figure2_table.tex").read_text() == (
        fresh / "figure2_table.tex").read_text()
    # cells finished before the interruption were kept, not recomputed
    assert all((partial / "cells" / n).read_text() == text for n, text in before.items())


def test_seed_groups_are_fixed_so_a_resumed_run_batches_like_a_fresh_one():
    cfg = make_config("quick", seeds=5, seed_batch=2)
    groups = {u[2] for u in work_units(cfg)}
    assert groups == {(0, 1), (2, 3), (4,)}
    cells = {(m, L, s) for m, L, g in work_units(cfg) for s in g}
    assert cells == set(all_cells(cfg))


def test_batched_seeds_reproduce_unbatched_training(tmp_path):
    one = run_figure2("quick", out=tmp_path / "one", progress=False, **TINY)
    many = run_figure2("quick", out=tmp_path / "many", progress=False, seed_batch=3, **TINY)
    a, b = _rows(one / "results.csv"), _rows(many / "results.csv")
    for x, y in zip(a, b, strict=True):
        assert (x["model"], x["L"], x["seed"]) == (y["model"], y["L"], y["seed"])
        for key in ("max_jacobian", "min_val_loss"):
            assert float(x[key]) == pytest.approx(float(y[key]), rel=1e-4)


@pytest.mark.slow
def test_parallel_processes_give_the_same_summary(tmp_path):
    serial = run_figure2("quick", out=tmp_path / "serial", progress=False, **TINY)
    parallel = run_figure2("quick", out=tmp_path / "parallel", progress=False, jobs=2, **TINY)
    assert (parallel / "summary.csv").read_text() == (serial / "summary.csv").read_text()


def test_resuming_with_other_parameters_is_refused(tmp_path):
    run_figure2("quick", out=tmp_path / "r", progress=False, **TINY)
    with pytest.raises(ValueError, match="other parameters"):
        run_figure2("quick", out=tmp_path / "r", progress=False, **{**TINY, "steps": 9})


@pytest.mark.parametrize("kwargs, name", [
    ({"preset": "full"}, "`preset`"), ({"jobs": 0}, "`jobs`"), ({"seeds": 0}, "`seeds`"),
    ({"m": 5}, "`m`"), ({"lags": (0,)}, "`lags`"), ({"device": "tpu"}, "`device`"),
])
def test_bad_arguments_are_named(tmp_path, kwargs, name):
    kwargs = {"preset": "quick", **kwargs}
    with pytest.raises(ValueError, match=name):
        run_figure2(out=tmp_path / "x", progress=False, **kwargs)


def test_mean_ci95_uses_student_t_quantiles():
    mean, half, k = mean_ci95([1.0, 3.0])
    assert (mean, k) == (2.0, 2)
    assert half == pytest.approx(12.7062047 * math.sqrt(2) / math.sqrt(2), rel=1e-6)
    _, half5, _ = mean_ci95([1.0, 2.0, 3.0, 4.0, 5.0])
    assert half5 == pytest.approx(2.7764451 * math.sqrt(2.5) / math.sqrt(5), rel=1e-6)
    assert math.isnan(mean_ci95([1.0])[1]) and mean_ci95([math.nan])[2] == 0


@pytest.mark.parametrize("model", ["transformer", "indrnn"])
@pytest.mark.parametrize("seeds", [(0, 1, 2), (1,)])
def test_a_group_trained_with_the_triton_kernels_gives_the_torch_numbers(monkeypatch, model,
                                                                         seeds):
    # the seeds as a leading axis through the Triton kernels (run by Triton's interpreter on a
    # CPU): the Transformer's against the per-seed closed form under vmap, the IndRNN's against
    # its torch recurrence; and a single seed without the axis
    pytest.importorskip("triton", reason="the kernels need Triton (the `gpu` extra)")
    import torch
    from boundcalc.validators.experiments.figure2 import train_group
    from boundcalc.validators.kernel import gpu_kernel, gpu_recurrence

    if not (torch.cuda.is_available() or gpu_kernel.interpreting()):
        pytest.skip("Triton was imported before TRITON_INTERPRET=1 was set")
    device = "cuda" if torch.cuda.is_available() else "cpu"
    cfg = make_config("quick", seeds=len(seeds), seed_batch=len(seeds), n=40, m=4, steps=5,
                      dtype="float64", device=device)
    plain = train_group(model, 4, seeds, cfg)
    monkeypatch.setenv("BOUNDCALC_TRITON", "1")
    # the self-checks first (figure 2's d = 17), so that only the training's calls are counted
    assert gpu_kernel.uses_triton_kernel(device, 17, torch.float64)
    assert gpu_recurrence.uses_recurrence_kernel(device, torch.float64)
    module, name = ((gpu_kernel, "softmax_token_sums") if model == "transformer"
                    else (gpu_recurrence, "indrnn_recurrence"))
    calls = []
    real = getattr(module, name)
    monkeypatch.setattr(module, name, lambda first, *args, **kw: calls.append(first.dim())
                        or real(first, *args, **kw))
    fast = train_group(model, 4, seeds, cfg)
    # the Transformer's X (seeds, n, T, d) or (n, T, d); the IndRNN's drive (T, seeds, n, m)
    # or (T, n, m)
    assert calls and set(calls) == {3 + (len(seeds) > 1)}
    for a, b in zip(plain, fast, strict=True):
        assert a["seed"] == b["seed"]
        for key in ("max_jacobian", "jacobian_final", "max_loss_gradient", "min_val_loss",
                    "final_val_loss", "min_train_loss"):
            assert b[key] == pytest.approx(a[key], rel=1e-10), key
