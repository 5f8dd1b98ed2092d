"""Benchmark one ProjGD step: the project's trainer against a plain autograd step.

Usage (from the repository root, after ``pip install -e .``)::

    python benchmarks/step.py                  # n=4000, m=256, d=8, T=16, float32, CPU
    python benchmarks/step.py --device cuda
    python benchmarks/step.py --json out.json  # also write the numbers

Measured in one run, in ``--repeats`` interleaved rounds after a warm-up (each round times every
candidate, so all see the same machine conditions; best times and the median per-round ratios
are reported):

* **trainer** — seconds per step of :func:`boundcalc.validators.train.proj_gd` (fused closed-form
  gradient — on the CPU the compiled kernel of ``validators/kernel/fused_step.c`` where it builds —,
  projection onto Ω_ρ and the full per-step record), from a ``--steps``-step run
  (its own timer: per-run setup — history buffers, the θ-independent input layouts of
  ``fused_inputs`` (≈ 0.7 ms once per run here) — is outside the timed loop);
* **torch path** — the same trainer with ``backend="torch"`` (the fused pass as chunked torch
  operations, no compiled code);
* **closed** — the same trainer with ``gradient="closed"`` (``model.loss_and_gradient``);
* **autograd** — the naive reference: build R̂ = (1/n)Σ(f − y)² with autograd through
  ``model.forward``, ``backward()``, then θ − η∇R̂ and the projection;
* the analytic FLOP count of the step's contractions (printed term by term), the achieved
  GFLOP/s, this machine's measured fp32 rate on a large matrix product, and the ratio of the
  step time to the FLOP floor (FLOPs / matmul rate). Elementwise work (softmax exponentials,
  activations) is not counted.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable

import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import (
    Params,
    forward,
    get_activation,
    init_params,
    last_token_query,
    project,
)
from boundcalc.validators.train import proj_gd


def step_flops(n: int, m: int, d: int, T: int) -> dict[str, int]:
    """Multiply–add FLOPs (2 per MAC) of the contractions of one full-batch loss + gradient.

    These are the einsums of ``model.loss_and_gradient`` (Lemma 1); the total is
    2nm(2d² + 4Td + 2d + 2).
    """
    return {
        "W_i q            (n m d^2)": 2 * n * m * d * d,
        "z = X^T W_i q    (n m T d)": 2 * n * m * T * d,
        "p = X^T U_i      (n m T d)": 2 * n * m * T * d,
        "a = X s          (n m T d)": 2 * n * m * T * d,
        "G U = X(s(p-pre))(n m T d)": 2 * n * m * T * d,
        "pre = U^T a      (n m d)": 2 * n * m * d,
        "f = c^T h        (n m)": 2 * n * m,
        "grad c           (n m)": 2 * n * m,
        "grad U           (n m d)": 2 * n * m * d,
        "grad W           (n m d^2)": 2 * n * m * d * d,
    }


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def matmul_yardstick(device: torch.device, dtype: torch.dtype) -> tuple[int, Callable[[], float]]:
    """(size, timer): one call of timer multiplies two size × size matrices in ``dtype`` on
    ``device`` (size 2048 on the CPU, 8192 elsewhere) and returns the GFLOP/s achieved — the
    machine's matmul rate, the yardstick of the FLOP floor."""
    size = 2048 if device.type == "cpu" else 8192
    gen = torch.Generator().manual_seed(0)
    A = torch.randn(size, size, generator=gen, dtype=dtype).to(device)
    B = torch.randn(size, size, generator=gen, dtype=dtype).to(device)

    def timer() -> float:
        _sync(device)
        start = time.perf_counter()
        A @ B
        _sync(device)
        return 2 * size**3 / (time.perf_counter() - start) / 1e9

    return size, timer


def load_average() -> float:
    """The 1-minute load average (NaN where the platform has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan


def report(res: dict, print_table: Callable[[dict], None], json_path: str | None) -> None:
    """Print the results' table and, with ``json_path``, also write them as JSON."""
    print_table(res)
    if json_path:
        with open(json_path, "w") as fh:
            json.dump(res, fh, indent=2)


def add_timing_options(parser: argparse.ArgumentParser, *, steps: int, repeats: int,
                       threads: int, threads_help: str) -> None:
    """The options the benchmarks share: --device, --steps, --repeats, --threads, --json."""
    parser.add_argument("--device", default="cpu", help="cpu or cuda")
    parser.add_argument("--steps", type=int, default=steps, help="trainer steps per timing")
    parser.add_argument("--repeats", type=int, default=repeats,
                        help="interleaved timing rounds; best times and median ratios reported")
    parser.add_argument("--threads", type=int, default=threads, help=threads_help)
    parser.add_argument("--json", default=None, help="also write the results to this file")


def autograd_step(theta: Params, theta0: Params, X, q, y, act, eta: float, rho) -> Params:
    """The naive reference step: autograd through ``forward``, then update and project."""
    leaves = Params(*(t.detach().clone().requires_grad_() for t in theta))
    loss = ((forward(leaves, X, q, act) - y) ** 2).mean()
    loss.backward()
    with torch.no_grad():
        moved = Params(*(t - eta * t.grad for t in leaves))
        return project(moved, theta0, rho)


def run(args: argparse.Namespace) -> dict:
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("error: --device cuda but no CUDA device is available")
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    n, m, d, T = args.n, args.m, args.d, args.T
    act = get_activation("tanh")
    X = synthetic_inputs(n, T, d, seed=0, dtype=dtype, device=device)
    q = last_token_query(X)
    y = 0.1 * torch.randn(n, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    p0 = init_params(m, d, seed=0, dtype=dtype, device=device)
    rho, eta = (2.0, 2.0, 2.0), 0.05

    ran = {}      # backend asked for → backend that ran (TrainResult.config["backend"])

    def trainer(gradient: str, backend: str = "auto") -> float:
        res = proj_gd(p0, X, q, y, act, steps=args.steps, eta=eta, rho=rho, gradient=gradient,
                      backend=backend)
        ran[backend] = res.config["backend"]
        return res.seconds / args.steps

    def autograd() -> float:
        theta = p0
        _sync(device)
        start = time.perf_counter()
        for _ in range(args.steps):
            theta = autograd_step(theta, p0, X, q, y, act, eta, rho)
        _sync(device)
        return (time.perf_counter() - start) / args.steps

    load_start = load_average()
    size, matmul = matmul_yardstick(device, torch.float32)

    # warm-up, then interleaved rounds so that every round times all of them under the same
    # machine conditions (a shared VM's speed drifts); best of the rounds, median of the ratios
    trainer("fused"), trainer("fused", "torch"), autograd(), matmul()
    backend = ran["auto"]
    if not args.skip_closed:
        trainer("closed")
    rounds = []
    for _ in range(args.repeats):
        row = {"trainer": trainer("fused"), "trainer_torch_path": trainer("fused", "torch"),
               "autograd": autograd(),
               "trainer_closed_form": math.nan if args.skip_closed else trainer("closed"),
               "matmul_gflops": max(matmul() for _ in range(3))}
        rounds.append(row)
    best = {k: min(r[k] for r in rounds)
            for k in ("trainer", "trainer_torch_path", "autograd", "trainer_closed_form")}
    rate = max(r["matmul_gflops"] for r in rounds)
    flops = step_flops(n, m, d, T)
    total = sum(flops.values())
    floor = total / (rate * 1e9)
    speedups = sorted(r["autograd"] / r["trainer"] for r in rounds)
    floor_ratios = sorted(r["trainer"] * r["matmul_gflops"] * 1e9 / total for r in rounds)
    return {
        "config": {"n": n, "m": m, "d": d, "T": T, "dtype": args.dtype, "device": str(device),
                   "threads": torch.get_num_threads(), "steps_per_timing": args.steps,
                   "trainer_backend": backend,
                   "rounds": args.repeats, "torch": torch.__version__,
                   "machine": _machine(device), "python": platform.python_version()},
        "flops": flops, "flops_total": total,
        "seconds_per_step": best,
        "speedup_vs_autograd": best["autograd"] / best["trainer"],
        "speedup_vs_torch_path": best["trainer_torch_path"] / best["trainer"],
        "speedup_per_round": {"min": speedups[0], "median": speedups[len(speedups) // 2],
                              "max": speedups[-1]},
        "achieved_gflops": total / best["trainer"] / 1e9,
        "matmul_gflops": rate, "matmul_size": size,
        "flop_floor_seconds": floor, "step_over_floor": best["trainer"] / floor,
        "step_over_floor_per_round_median": floor_ratios[len(floor_ratios) // 2],
        "rounds": rounds,
        "load_average_start": load_start,
        "load_average": load_average(),
    }


def _machine(device: torch.device) -> str:
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    name = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{name}, {os.cpu_count()} logical CPUs"


def print_table(res: dict) -> None:
    c = res["config"]
    print(f"ProjGD step, n={c['n']} m={c['m']} d={c['d']} T={c['T']} {c['dtype']} on "
          f"{c['device']} ({c['machine']}; torch {c['torch']}, {c['threads']} threads, "
          f"load avg {res['load_average']:.2f})")
    print("\nFLOPs of the step's contractions (2 per multiply-add):")
    for name, value in res["flops"].items():
        print(f"  {name:28s} {value / 1e6:10.1f} MFLOP")
    print(f"  {'total':28s} {res['flops_total'] / 1e9:10.3f} GFLOP")
    s = res["seconds_per_step"]
    rows = [
        (f"trainer (fused: {c['trainer_backend']}, proj + record)", f"{s['trainer']:.4f} s/step"),
        ("trainer, backend='torch'", f"{s['trainer_torch_path']:.4f} s/step"),
        ("trainer, gradient='closed'", f"{s['trainer_closed_form']:.4f} s/step"),
        ("plain autograd step", f"{s['autograd']:.4f} s/step"),
        ("speed-up vs autograd (best times)", f"{res['speedup_vs_autograd']:.2f}x"),
        ("speed-up vs the torch path", f"{res['speedup_vs_torch_path']:.2f}x"),
        ("speed-up per round min/med/max",
         "{min:.2f}/{median:.2f}/{max:.2f}x".format(**res["speedup_per_round"])),
        ("achieved (trainer)", f"{res['achieved_gflops']:.1f} GFLOP/s"),
        (f"fp32 matmul {res['matmul_size']}^3", f"{res['matmul_gflops']:.1f} GFLOP/s"),
        ("FLOP floor (FLOPs / matmul rate)", f"{res['flop_floor_seconds']:.4f} s"),
        ("trainer / FLOP floor", f"{res['step_over_floor']:.2f}x"),
        ("trainer / FLOP floor, per-round median",
         f"{res['step_over_floor_per_round_median']:.2f}x"),
    ]
    width = max(len(r[0]) for r in rows)
    print()
    for name, value in rows:
        print(f"  {name:{width}s}  {value:>18s}")
    print("\nrounds (s/step; ratios within the round):")
    print("  round  trainer   torch     autograd  autograd/trainer  matmul GFLOP/s  "
          "trainer/floor")
    for k, r in enumerate(res["rounds"], 1):
        over = r["trainer"] * r["matmul_gflops"] * 1e9 / res["flops_total"]
        print(f"  {k:5d}  {r['trainer']:.4f}   {r['trainer_torch_path']:.4f}   "
              f"{r['autograd']:.4f}   "
              f"{r['autograd'] / r['trainer']:16.2f}  {r['matmul_gflops']:14.1f}  {over:13.2f}")
    print(f"  load average at start / end: {res['load_average_start']:.2f} / "
          f"{res['load_average']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--m", type=int, default=256)
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--T", type=int, default=16)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    add_timing_options(parser, steps=5, repeats=5, threads=0,
                       threads_help="torch threads (0 = default)")
    parser.add_argument("--skip-closed", action="store_true",
                        help="do not time the gradient='closed' trainer")
    args = parser.parse_args(argv)
    res = run(args)
    report(res, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
