"""Where the GPU time of a training step goes: the CUDA kernels of a few eager steps, by share.

Usage (from the repository root, after ``pip install -e .``, on a machine with a GPU)::

    python benchmarks/gpu_profile.py            # figure 1's step, figure 2's L = 96, the T sweep's
    python benchmarks/gpu_profile.py --top 8 --only figure2,tsweep

Per case the steps of ``benchmarks/gpu_steps.py`` run eagerly (``BOUNDCALC_CUDA_GRAPHS=0``, so
that every kernel is seen) under ``torch.profiler``, twice: one step, then 1 + K steps. Each
kernel's device time is the difference of the two runs, so the set-up of a run (copying the
data to the device, the initial parameters, the final losses) cancels and what is printed is the
K steps alone: the kernels with the largest device time, their share, the device time per step
and the wall time per step. Device time per step ≈ wall time per step means the step is bound by
the GPU's work, not by the host's launches. ``--triton`` sets ``BOUNDCALC_TRITON=1`` (the Triton
kernel of the token sums, :mod:`boundcalc.validators.kernel.gpu_kernel`; as does the caller's
environment).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(__file__))
from gpu_steps import figure1_step_runner, figure2_step_runner  # noqa: E402


def _profiled(run, steps: int) -> tuple[float, dict[str, tuple[float, int]]]:
    """Wall seconds of ``run(steps)`` and, per CUDA kernel, (device µs, calls) under the
    profiler."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t0 = time.perf_counter()
        run(steps)
        torch.cuda.synchronize()
        wall = time.perf_counter() - t0
    return wall, {e.key: (e.self_device_time_total, e.count) for e in prof.key_averages()
                  if e.self_device_time_total > 0}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--only", default=None,
                        help="comma-separated: figure1, figure2, tsweep (default: all)")
    parser.add_argument("--triton", action="store_true",
                        help="with the Triton kernel of the token sums (BOUNDCALC_TRITON=1)")
    args = parser.parse_args(argv)
    os.environ["BOUNDCALC_CUDA_GRAPHS"] = "0"
    if args.triton:
        os.environ["BOUNDCALC_TRITON"] = "1"
    dev = torch.device("cuda")
    cases = [("figure1", "figure1 step (one seed, 504 heads, float64)",
              lambda: figure1_step_runner(dev, 16, (8, 16, 32, 64, 128, 256), torch.float64), 20),
             ("figure2", "figure2 transformer L=96 (20 seeds, float32)",
              lambda: figure2_step_runner(dev, "transformer", 96), 5),
             ("figure2", "figure2 indrnn L=96 (20 seeds, float32)",
              lambda: figure2_step_runner(dev, "indrnn", 96), 5),
             ("tsweep", "tsweep step (one seed, m = 64 + 256, T = 1024, float64)",
              lambda: figure1_step_runner(dev, 1024, (64, 256), torch.float64), 3)]
    for name, label, factory, steps in cases:
        if args.only and name not in args.only.split(","):
            continue
        run = factory()
        run(2)                                   # warm-up
        (wall_short, short), (wall_long, long) = (_profiled(run, k) for k in (1, 1 + steps))
        per_kernel = {key: long.get(key, (0.0, 0))[0] - short.get(key, (0.0, 0))[0]
                      for key in long}
        total = sum(per_kernel.values())
        print(f"== {label}: {steps} steps, {total / 1e3 / steps:.2f} ms of kernels and "
              f"{(wall_long - wall_short) * 1e3 / steps:.2f} ms of wall time a step "
              "(set-up subtracted)",
              flush=True)
        for key, t in sorted(per_kernel.items(), key=lambda kv: -kv[1])[:args.top]:
            count = long[key][1] - short.get(key, (0.0, 0))[1]
            print(f"  {100 * t / total:5.1f} %  {t / 1e3 / steps:8.3f} ms/step  "
                  f"x{count / steps:<6.1f} {key[:90]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
