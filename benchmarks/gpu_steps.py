"""Time one training step of every experiment at its paper size, eagerly and as graph replays.

Usage (from the repository root, after ``pip install -e .``, on a machine with a GPU)::

    python benchmarks/gpu_steps.py                 # every experiment, cuda
    python benchmarks/gpu_steps.py --only figure2  # one of figure1, figure2, table1, tsweep
    python benchmarks/gpu_steps.py --json out.json
    python benchmarks/gpu_steps.py --only tsweep --modes graph,chunked

Per experiment the step is the project's own code at the paper preset's sizes (figure 1: one
seed's 504 heads, n_train = 4000, T = 16, float64; figure 2: one (model, L) group of 20 seeds,
float32, L = 4 and 96; table 1: one GD epoch of the (d_m, N) = (4096, 10000) cell, float32;
tsweep: one seed's two students (64 and 256 heads) at T = 1024, float64). The time per step is
the difference of two runs of different lengths divided by the difference of their lengths, so
per-run set-up (data, init, first-call compilation) cancels; each run ends with a device
synchronisation. ``eager`` sets ``BOUNDCALC_CUDA_GRAPHS=0``; ``graph`` leaves the default (the
steps after the warm-up replay one captured graph; table 1's GD epochs are timed eagerly only,
their autograd pass is not captured). The yardstick is the device's own rate: a
large matrix product in the step's dtype (TFLOP/s) and a device-to-device copy (GB/s), printed
first. The estimate of a preset's training time is the per-step time times its steps and groups.
``chunked`` times figure 1's and the T sweep's steps with the fused pass organised as on the CPU
(``BOUNDCALC_TOKEN_MOMENTS=0``) instead of the accelerators' token-moments organisation;
``triton`` with the Triton kernels (``BOUNDCALC_TRITON=1``; graph replays): the softmax-weighted
token sums of figure 1's, the T sweep's and figure 2's Transformer steps
(:mod:`boundcalc.validators.kernel.gpu_kernel`), once per tile of ``--triton-tiles`` (heads ×
tokens × warps, e.g. ``32x32x4,16x64x4``; for d > 16 too), and the IndRNN's recurrence
(:mod:`boundcalc.validators.kernel.gpu_recurrence`).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from dataclasses import replace

import torch


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _yardsticks(dev: torch.device) -> dict[str, float]:
    out = {}
    for dt in (torch.float32, torch.float64):
        a = torch.randn(4096, 4096, dtype=dt, device=dev)
        for _ in range(2):
            a @ a
        _sync()
        t0 = time.perf_counter()
        for _ in range(5):
            a @ a
        _sync()
        out[f"matmul_tflops_{str(dt)[6:]}"] = 5 * 2 * 4096**3 / (time.perf_counter() - t0) / 1e12
    x = torch.empty(1 << 28, dtype=torch.float32, device=dev)
    y = torch.empty_like(x)
    y.copy_(x)
    _sync()
    t0 = time.perf_counter()
    for _ in range(5):
        y.copy_(x)
    _sync()
    out["copy_gbps"] = 5 * 2 * x.numel() * 4 / (time.perf_counter() - t0) / 1e9
    return out


def _per_step(run, short: int, long: int) -> float:
    """Seconds per step: (t(long) − t(short)) / (long − short), best of two, after one warm-up
    run (the first run of a process pays CUDA's and cuBLAS's start-up)."""
    run(short)
    best = math.inf
    for _ in range(2):
        times = []
        for steps in (short, long):
            _sync()
            t0 = time.perf_counter()
            run(steps)
            _sync()
            times.append(time.perf_counter() - t0)
        best = min(best, (times[1] - times[0]) / (long - short))
    return best


def figure1_step_runner(dev, T: int, widths, dtype, n_train: int = 4000):
    from boundcalc.validators.data.inputs import synthetic_inputs
    from boundcalc.validators.model import init_params, last_token_query
    from boundcalc.validators.train_students import train_students

    X = synthetic_inputs(n_train, T, 8, seed=1, dtype=dtype).to(dev)
    q = last_token_query(X)
    y = torch.zeros(n_train, dtype=dtype, device=dev)
    inits = [init_params(m, 8, seed=m, dtype=dtype).to(device=dev) for m in widths]

    def run(steps: int) -> None:
        train_students(inits, X, q, y, "tanh", steps=steps, eta=0.03, rho=3.0)
    return run


def figure2_step_runner(dev, model: str, L: int):
    from boundcalc.validators.experiments.figure2 import PRESETS, train_group

    cfg = replace(PRESETS["paper"], device=str(dev))

    def run(steps: int) -> None:
        train_group(model, L, cfg.seeds, replace(cfg, steps=steps))
    return run


def table1_step_runner(dev, d_m: int = 4096, N: int = 10000):
    from boundcalc.validators.encoder import lecun_init, train_gd

    gen = torch.Generator().manual_seed(0)
    X = (torch.rand(N, 16, 64, generator=gen) * 8).to(dev)
    y = (torch.rand(N, generator=gen) > 0.5).float().to(dev)
    X_te = X[:2000].clone()
    y_te = y[:2000].clone()
    p0 = lecun_init(d_m, 64, seed=0, dtype=torch.float32, device=dev)

    def run(steps: int) -> None:
        train_gd(p0, X, y, steps=steps, lr=0.1, objective="cross_entropy",
                 eval_loss="logistic", X_test=X_te, y_test=y_te)
    return run


def cases(dev):
    """(experiment, label, run factory, short, long, steps per preset, groups per preset)."""
    f64 = torch.float64
    return [
        ("figure1", "one seed, 6 widths, T=16, float64",
         lambda: figure1_step_runner(dev, 16, (8, 16, 32, 64, 128, 256), f64), 20, 120, 4000, 10),
        ("figure2", "transformer L=96, 20 seeds, float32",
         lambda: figure2_step_runner(dev, "transformer", 96), 10, 60, 5000, None),
        ("figure2", "indrnn L=96, 20 seeds, float32",
         lambda: figure2_step_runner(dev, "indrnn", 96), 10, 40, 5000, None),
        ("figure2", "indrnn L=4, 20 seeds, float32",
         lambda: figure2_step_runner(dev, "indrnn", 4), 10, 110, 5000, None),
        ("table1", "d_m=4096, N=10000 epoch, float32",
         lambda: table1_step_runner(dev), 1, 4, 1000, None),
        ("tsweep", "one seed, m=64+256, T=1024, float64",
         lambda: figure1_step_runner(dev, 1024, (64, 256), f64), 5, 25, 4000, 10),
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--only", default=None, help="comma-separated experiments")
    parser.add_argument("--json", default=None)
    parser.add_argument("--modes", default="eager,graph",
                        help="comma-separated: eager, graph (replays), chunked (replays of the "
                             "fused pass's chunked organisation, BOUNDCALC_TOKEN_MOMENTS=0), "
                             "triton (replays with the Triton kernel, BOUNDCALC_TRITON=1)")
    parser.add_argument("--triton-tiles", default=None,
                        help="comma-separated HxTxW tiles (heads x tokens x warps, powers of "
                             "two, H and T >= 16) timed in mode triton (default: the kernel's "
                             "own, one run)")
    args = parser.parse_args(argv)
    from boundcalc.validators.kernel import gpu_kernel

    default_tile = (gpu_kernel.BLOCK_HEADS, gpu_kernel.BLOCK_TOKENS, gpu_kernel.NUM_WARPS)
    wide_heads = gpu_kernel.BLOCK_HEADS_WIDE
    tiles = ([tuple(int(v) for v in t.split("x")) for t in args.triton_tiles.split(",")]
             if args.triton_tiles else [default_tile])
    dev = torch.device(args.device)
    report = {"device": torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu",
              "torch": torch.__version__, **_yardsticks(dev), "steps": []}
    print(json.dumps({k: v for k, v in report.items() if k != "steps"}), flush=True)
    for name, label, factory, short, long, preset_steps, groups in cases(dev):
        if args.only and name not in args.only.split(","):
            continue
        row = {"experiment": name, "case": label}
        runs = [(mode, None) for mode in args.modes.split(",") if mode != "triton"]
        if "triton" in args.modes.split(","):   # the IndRNN's kernels have no tile: once
            runs += [("triton", tile) for tile in (tiles[:1] if "indrnn" in label else tiles)]
        for mode, tile in runs:
            if (name == "table1" and mode != "eager") or (
                    mode == "chunked" and name not in ("figure1", "tsweep")):
                continue
            os.environ["BOUNDCALC_CUDA_GRAPHS"] = "0" if mode == "eager" else "1"
            os.environ["BOUNDCALC_TOKEN_MOMENTS"] = "0" if mode == "chunked" else "1"
            os.environ["BOUNDCALC_TRITON"] = "1" if mode == "triton" else "0"
            key = mode if tile is None else f"{mode}_{'x'.join(map(str, tile))}"
            if tile is not None:
                gpu_kernel.BLOCK_HEADS, gpu_kernel.BLOCK_TOKENS, gpu_kernel.NUM_WARPS = tile
                gpu_kernel.BLOCK_HEADS_WIDE = tile[0]
            try:
                row[f"{key}_ms"] = 1e3 * _per_step(factory(), short, long)
            except Exception as exc:  # report and go on to the next case
                row[f"{key}_error"] = f"{type(exc).__name__}: {str(exc)[:300]}"
        gpu_kernel.BLOCK_HEADS, gpu_kernel.BLOCK_TOKENS, gpu_kernel.NUM_WARPS = default_tile
        gpu_kernel.BLOCK_HEADS_WIDE = wide_heads
        for var in ("BOUNDCALC_CUDA_GRAPHS", "BOUNDCALC_TOKEN_MOMENTS", "BOUNDCALC_TRITON"):
            os.environ.pop(var, None)
        best = min(row.get("eager_ms", math.inf), row.get("graph_ms", math.inf))
        if math.isfinite(best) and groups:
            row["preset_training_s_sequential"] = best * preset_steps * groups / 1e3
        fastest = min((v for k, v in row.items() if k.startswith("triton_")
                       and k.endswith("_ms")), default=math.inf)
        if math.isfinite(fastest) and groups:
            row["preset_training_s_triton"] = fastest * preset_steps * groups / 1e3
        print(json.dumps(row), flush=True)
        report["steps"].append(row)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
