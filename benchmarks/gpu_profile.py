"""Where the GPU time of a training step goes: the CUDA kernels of a few eager steps, by share.

Usage (from the repository root, after ``pip install -e .``, on a machine with a GPU)::

    python benchmarks/gpu_profile.py            # figure 1's step, figure 2's L = 96, the T sweep's
    python benchmarks/gpu_profile.py --top 8 --only figure2,tsweep

Per case the steps of ``benchmarks/gpu_steps.py`` run eagerly (``BOUNDCALC_CUDA_GRAPHS=0``, so
that every kernel is seen) under ``torch.profiler``; printed are the kernels with the largest
total device time, their share of the device time of those steps, the device time per step and
the wall time per step. Device time per step ≈ wall time per step means the step is bound by the
GPU's work, not by the host's launches.
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--only", default=None,
                        help="comma-separated: figure1, figure2, tsweep (default: all)")
    args = parser.parse_args(argv)
    os.environ["BOUNDCALC_CUDA_GRAPHS"] = "0"
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
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            t0 = time.perf_counter()
            run(steps)
            torch.cuda.synchronize()
            wall = time.perf_counter() - t0
        events = [e for e in prof.key_averages() if e.device_time_total > 0]
        total = sum(e.self_device_time_total for e in events)
        print(f"== {label}: {steps} steps (+ set-up) in {wall * 1e3:.1f} ms wall, "
              f"{total / 1e3:.1f} ms of kernels", flush=True)
        for e in sorted(events, key=lambda e: -e.self_device_time_total)[:args.top]:
            print(f"  {100 * e.self_device_time_total / total:5.1f} %  "
                  f"{e.self_device_time_total / 1e3:8.2f} ms  x{e.count:<6d} {e.key[:90]}",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
