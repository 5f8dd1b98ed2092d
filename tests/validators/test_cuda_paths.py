"""Every CUDA path gives the CPU's numbers: batched students, graph replays, figure 2's vmap,
table 1's encoder, the experiments end to end. Skipped on machines without a GPU (CI's); run on
a lent GPU by ``benchmarks/device_check.sh``."""

from __future__ import annotations

import math

import pytest
import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import init_params, last_token_query
from boundcalc.validators.step_graphs import GRAPHS_ENV
from boundcalc.validators.train_students import train_students

pytestmark = pytest.mark.needs_torch
pytestmark = [pytestmark,
              pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]

WIDTHS = (2, 6, 10, 16)


def _students(device: str, dtype=torch.float64, steps: int = 12):
    X = synthetic_inputs(96, 5, 3, seed=2, dtype=dtype)
    gen = torch.Generator().manual_seed(9)
    y = (0.4 * torch.randn(96, generator=gen, dtype=torch.float64)).to(dtype)
    inits = [init_params(m, 3, seed=30 + m, dtype=dtype).to(device=device) for m in WIDTHS]
    return train_students(inits, X.to(device), last_token_query(X).to(device), y.to(device),
                          "tanh", steps=steps, eta=0.4, rho=1.5, backend="torch")


def _rel(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.cpu() - b.cpu()).abs().max() / b.cpu().abs().max().clamp_min(1e-300))


def test_batched_students_on_cuda_replay_a_graph_with_the_cpu_numbers():
    cpu, gpu = _students("cpu"), _students("cuda")
    assert gpu[0].config["loop"] == "graph" and cpu[0].config["loop"] == "eager"
    for a, b in zip(gpu, cpu, strict=True):
        for name in ("loss", "grad_norm", "radius", "distance"):
            assert _rel(getattr(a, name), getattr(b, name)) < 1e-10, name
        assert _rel(a.params.W, b.params.W) < 1e-10
        assert a.average_loss == pytest.approx(b.average_loss, rel=1e-10)


def test_graph_replays_equal_eager_cuda_steps(monkeypatch):
    graph = _students("cuda")
    monkeypatch.setenv(GRAPHS_ENV, "0")
    eager = _students("cuda")
    assert eager[0].config["loop"] == "eager"
    for a, b in zip(graph, eager, strict=True):
        assert _rel(a.loss, b.loss) < 1e-12 and _rel(a.params.U, b.params.U) < 1e-12


@pytest.mark.parametrize("model", ["transformer", "indrnn"])
def test_figure2_group_on_cuda_matches_the_cpu(model):
    from dataclasses import replace

    from boundcalc.validators.experiments.figure2 import PRESETS, train_group

    cfg = replace(PRESETS["quick"], steps=20, dtype="float64")
    cpu = train_group(model, 4, (0, 1), cfg)
    gpu = train_group(model, 4, (0, 1), replace(cfg, device="cuda"))
    for a, b in zip(gpu, cpu, strict=True):
        for key in ("max_jacobian", "max_loss_gradient", "min_val_loss", "final_train_loss"):
            assert a[key] == pytest.approx(b[key], rel=1e-9), key
        assert a["min_val_step"] == b["min_val_step"]


def test_table1_cell_on_cuda_matches_the_cpu():
    from dataclasses import replace

    from boundcalc.validators.data.digits import load_digit_tokens
    from boundcalc.validators.experiments.table1 import PRESETS, train_cell

    cfg = replace(PRESETS["quick"], steps=15)
    data = load_digit_tokens(cfg.data, Ns=cfg.Ns, seed=cfg.seed, n_test=cfg.n_test,
                             n_generated=cfg.n_generated, digits=cfg.digits, patch=cfg.patch,
                             scale=cfg.scale)
    d_m, N = cfg.dms[0], cfg.Ns[0]
    cpu = train_cell(d_m, N, data, cfg)
    gpu = train_cell(d_m, N, data, replace(cfg, device="cuda"))
    for key in ("lowest_test_loss", "final_train_loss", "theorem5_bound"):
        if isinstance(cpu.get(key), float) and math.isfinite(cpu[key]):
            assert gpu[key] == pytest.approx(cpu[key], rel=1e-8), key
    assert gpu["lowest_test_epoch"] == cpu["lowest_test_epoch"]


@pytest.mark.parametrize("name", ["figure1", "tsweep"])
def test_experiment_cells_on_cuda_match_the_cpu(name, tmp_path):
    import boundcalc

    settings = {"seeds": 1, "steps": 30}
    cpu = boundcalc.reproduce(name, out=tmp_path / "cpu", device="cpu", progress=False,
                              **settings)
    gpu = boundcalc.reproduce(name, out=tmp_path / "gpu", device="cuda", progress=False,
                              **settings)
    keys = [c for c in ("seed", "m", "T") if c in cpu.cells.columns]
    a = cpu.cells.sort_values(keys).reset_index(drop=True)
    b = gpu.cells.sort_values(keys).reset_index(drop=True)
    for metric in ("lin_error", "app_error", "min_train_loss"):
        assert b[metric].to_numpy() == pytest.approx(a[metric].to_numpy(), rel=1e-8), metric


def test_proj_gd_on_cuda_replays_a_graph_with_the_cpu_numbers(monkeypatch):
    from boundcalc.validators.train import proj_gd

    X = synthetic_inputs(80, 6, 3, seed=4, dtype=torch.float64)
    q = last_token_query(X)
    y = 0.3 * torch.sin(torch.arange(80, dtype=torch.float64))
    p0 = init_params(8, 3, seed=5, dtype=torch.float64)

    def run(device: str):
        return proj_gd(p0.to(device=device), X.to(device), q.to(device), y.to(device), "tanh",
                       steps=10, eta=0.5, rho=2.0, backend="torch")

    cpu, gpu = run("cpu"), run("cuda")
    monkeypatch.setenv(GRAPHS_ENV, "0")
    eager = run("cuda")
    assert (gpu.config["loop"], eager.config["loop"]) == ("graph", "eager")
    for name in ("loss", "grad_norm", "radius", "distance"):
        assert _rel(getattr(gpu, name), getattr(cpu, name)) < 1e-10, name
        assert _rel(getattr(gpu, name), getattr(eager, name)) < 1e-12, name
    assert _rel(gpu.params.W, cpu.params.W) < 1e-10
