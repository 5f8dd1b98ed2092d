"""Benchmark figure 1's training step: every width of a seed batched against one run per width.

Usage (from the repository root, after ``pip install -e .``)::

    python benchmarks/figure1.py                    # paper sizes, float32, CPU
    python benchmarks/figure1.py --dtype float64
    python benchmarks/figure1.py --device cuda
    python benchmarks/figure1.py --json out.json    # also write the numbers

Figure 1 trains, for each seed, one student per width (8, 16, …, 256: 504 heads) for
K = 4000 ProjGD steps on n_train = 4000 samples (d = 8, T = 16). Timed, per ProjGD step, in
``--repeats`` interleaved rounds after a warm-up (each round times every candidate, so all see the
same machine conditions; best times and the median per-round ratios are reported):

* **batched** — :func:`boundcalc.validators.train_students.train_students` over all widths: one
  fused pass per step serves every student (on the CPU the compiled kernel where it builds);
* **unbatched** — :func:`boundcalc.validators.train.proj_gd` once per width, the per-step times
  added: what figure 1 did before its widths were batched;
* **FLOP floor** — the analytic FLOPs of the step's contractions summed over the widths
  (``benchmarks/step.py``'s ``step_flops``) divided by this device's measured rate on a large
  matrix product in the same dtype: the time the step would take if it ran at matmul speed.
  Elementwise work (the softmax exponentials, tanh) is not counted, so a step can approach but
  hardly reach the floor.

The ratios printed are unbatched / batched (the gain of batching) and batched / floor (the
distance left to the yardstick). The estimate of one seed's training is the batched step times K.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
from pathlib import Path

import torch
from boundcalc.validators.data.inputs import synthetic_inputs
from boundcalc.validators.model import get_activation, init_params, last_token_query
from boundcalc.validators.train import proj_gd
from boundcalc.validators.train_students import train_students

sys.path.insert(0, str(Path(__file__).resolve().parent))
# benchmarks/ is not a package: step.py's helpers are imported from this folder
from step import (  # noqa: E402
    _machine,
    add_timing_options,
    load_average,
    matmul_yardstick,
    report,
    step_flops,
)

PAPER_WIDTHS = (8, 16, 32, 64, 128, 256)


def run(args: argparse.Namespace) -> dict:
    device = torch.device(args.device)
    if device.type == "cuda" and not torch.cuda.is_available():
        raise SystemExit("error: --device cuda but no CUDA device is available")
    if args.threads:
        torch.set_num_threads(args.threads)
    dtype = {"float32": torch.float32, "float64": torch.float64}[args.dtype]
    widths = tuple(int(w) for w in args.widths.split(","))
    n, d, T = args.n, args.d, args.T
    act = get_activation("tanh")
    X = synthetic_inputs(n, T, d, seed=0, dtype=dtype, device=device)
    q = last_token_query(X)
    y = 0.1 * torch.randn(n, generator=torch.Generator().manual_seed(1)).to(device, dtype)
    inits = [init_params(m, d, seed=m, dtype=dtype, device=device) for m in widths]
    rho, eta = (3.0, 3.0, 3.0), 1.75 / math.sqrt(4000)
    ran: dict[str, str] = {}

    def batched() -> float:
        runs = train_students(inits, X, q, y, act, steps=args.steps, eta=eta, rho=rho)
        ran["batched"] = runs[0].config["backend"]
        return runs[0].seconds / args.steps

    def unbatched() -> dict[int, float]:
        out = {}
        for p0 in inits:
            res = proj_gd(p0, X, q, y, act, steps=args.steps, eta=eta, rho=rho)
            ran["unbatched"] = res.config["backend"]
            out[p0.width] = res.seconds / args.steps
        return out

    size, matmul = matmul_yardstick(device, dtype)
    load_start = load_average()
    batched(), unbatched(), matmul()           # warm-up (builds the kernel, caches)
    rounds = []
    for _ in range(args.repeats):
        per_width = unbatched()
        rounds.append({"batched": batched(), "unbatched": sum(per_width.values()),
                       "unbatched_per_width": per_width,
                       "matmul_gflops": max(matmul() for _ in range(3))})
    best_b = min(r["batched"] for r in rounds)
    best_u = min(r["unbatched"] for r in rounds)
    rate = max(r["matmul_gflops"] for r in rounds)
    flops = sum(sum(step_flops(n, m, d, T).values()) for m in widths)
    floor = flops / (rate * 1e9)
    gains = sorted(r["unbatched"] / r["batched"] for r in rounds)
    over = sorted(r["batched"] * r["matmul_gflops"] * 1e9 / flops for r in rounds)
    return {
        "config": {"widths": list(widths), "heads": sum(widths), "n": n, "d": d, "T": T,
                   "dtype": args.dtype, "device": str(device),
                   "threads": torch.get_num_threads(), "steps_per_timing": args.steps,
                   "backend": ran, "rounds": args.repeats, "torch": torch.__version__,
                   "machine": _machine(device), "python": platform.python_version()},
        "flops_per_step": flops,
        "seconds_per_step": {"batched": best_b, "unbatched": best_u,
                             "unbatched_per_width": {
                                 str(m): min(r["unbatched_per_width"][m] for r in rounds)
                                 for m in widths}},
        "unbatched_over_batched": best_u / best_b,
        "unbatched_over_batched_per_round_median": gains[len(gains) // 2],
        "matmul_gflops": rate, "matmul_size": size, "achieved_gflops": flops / best_b / 1e9,
        "flop_floor_seconds": floor, "batched_over_floor": best_b / floor,
        "batched_over_floor_per_round_median": over[len(over) // 2],
        "seed_training_seconds_at_4000_steps": 4000 * best_b,
        "rounds": rounds,
        "load_average_start": load_start,
        "load_average": load_average(),
    }


def print_table(res: dict) -> None:
    c, s = res["config"], res["seconds_per_step"]
    print(f"figure 1 ProjGD step, widths {c['widths']} ({c['heads']} heads), n={c['n']} "
          f"d={c['d']} T={c['T']} {c['dtype']} on {c['device']} ({c['machine']}; torch "
          f"{c['torch']}, {c['threads']} threads, backend {c['backend']['batched']})")
    rows = [("batched (train_students, all widths)", f"{s['batched'] * 1e3:.2f} ms/step"),
            ("unbatched (proj_gd per width, summed)", f"{s['unbatched'] * 1e3:.2f} ms/step")]
    rows += [(f"  of which m = {m}", f"{t * 1e3:.2f} ms/step")
             for m, t in s["unbatched_per_width"].items()]
    rows += [
        ("unbatched / batched (best times)", f"{res['unbatched_over_batched']:.2f}x"),
        ("unbatched / batched (per-round median)",
         f"{res['unbatched_over_batched_per_round_median']:.2f}x"),
        (f"{c['dtype']} matmul {res['matmul_size']}^3", f"{res['matmul_gflops']:.1f} GFLOP/s"),
        ("FLOPs per step (all widths)", f"{res['flops_per_step'] / 1e9:.3f} GFLOP"),
        ("FLOP floor (FLOPs / matmul rate)", f"{res['flop_floor_seconds'] * 1e3:.2f} ms"),
        ("achieved (batched)", f"{res['achieved_gflops']:.1f} GFLOP/s"),
        ("batched / FLOP floor (best)", f"{res['batched_over_floor']:.2f}x"),
        ("batched / FLOP floor (per-round median)",
         f"{res['batched_over_floor_per_round_median']:.2f}x"),
        ("one seed's training, K = 4000 (batched)",
         f"{res['seed_training_seconds_at_4000_steps']:.1f} s"),
    ]
    width = max(len(r[0]) for r in rows)
    for name, value in rows:
        print(f"  {name:{width}s}  {value:>18s}")
    print(f"  load average at start / end: {res['load_average_start']:.2f} / "
          f"{res['load_average']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--widths", default=",".join(map(str, PAPER_WIDTHS)),
                        help="comma-separated student widths (default: the paper's)")
    parser.add_argument("--n", type=int, default=4000, help="training samples (paper: 4000)")
    parser.add_argument("--d", type=int, default=8)
    parser.add_argument("--T", type=int, default=16)
    parser.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    add_timing_options(parser, steps=10, repeats=3, threads=1,
                       threads_help="torch threads (default 1, as each of --jobs 2 workers; "
                                    "0 = torch's)")
    args = parser.parse_args(argv)
    res = run(args)
    report(res, print_table, args.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
