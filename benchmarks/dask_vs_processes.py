"""Benchmark ``reproduce figure1`` on the dask engine against the processes executor, per step.

Usage (from the repository root, after ``pip install -e '.[validators,dask]'``)::

    python benchmarks/dask_vs_processes.py                  # paper preset, seed 1, 100 steps
    python benchmarks/dask_vs_processes.py --steps 400 --rounds 3   # the done-when figure
    python benchmarks/dask_vs_processes.py --steps 20 --set widths=8,16,32 --rounds 1
    python benchmarks/dask_vs_processes.py --json out.json  # also write the numbers

Each run is the command ``boundcalc reproduce figure1 --preset paper --set seeds=1 --set steps=K
[--set …] --executor E --jobs 2`` into a fresh run directory, in a fresh process, with E =
``processes`` (P) and ``dask`` (D, a local cluster). The runs are interleaved in rounds P D, D P,
P D, … (each pair of rounds is P D D P), so a machine whose load changes hits both engines alike;
the ratio dask / processes is taken within each round and its median, least and largest are
printed. The 1-minute load average is printed before and after every run.

Two times per run, reported apart:

* **per step** — from the run directory's recorded timings: every cell records ``wall_s``, the
  time of its own panels (a), (b) plus the training it shares with the other widths of its seed
  (one fused pass per step). The smallest cell's ``wall_s`` over the K steps is the per-step
  figure: the training step plus that one width's panels spread over the steps, the same work on
  both engines, measured inside the worker (no start-up in it). Nothing records the training
  alone, so at few steps the panels weigh more in it: compare engines at equal K only.
* **wall** — the whole command: the interpreter and torch imports, the dask local cluster's
  start-up and shut-down, the teacher (built once per seed, in the worker), the cells, the
  outputs (tables and the figure).

The cell records (``wall_s`` aside) are compared between the engines: they must be identical.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ENGINES = ("processes", "dask")


def load_average() -> float:
    """The 1-minute load average (NaN where the platform has none)."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan


def command(engine: str, steps: int, sets: list[str], out: Path) -> list[str]:
    """The ``boundcalc reproduce figure1`` command of one run on ``engine``."""
    fields = ["seeds=1", f"steps={steps}", *sets]
    return [sys.executable, "-m", "boundcalc", "reproduce", "figure1", "--preset", "paper",
            *[arg for field in fields for arg in ("--set", field)],
            "--executor", engine, "--jobs", "2", "--out", str(out)]


def cells_of(out: Path) -> dict[str, dict]:
    """The cell records of a run directory, by key."""
    return {f.stem: json.loads(f.read_text()) for f in sorted((out / "cells").glob("*.json"))}


def one_run(engine: str, steps: int, sets: list[str], folder: Path, index: int) -> dict:
    """Run the command once on ``engine``; its wall time, per-step time, loads and cells."""
    out = folder / f"run{index}-{engine}"
    load_before = load_average()
    started = time.perf_counter()
    done = subprocess.run(command(engine, steps, sets, out), cwd=folder, capture_output=True,
                          text=True)
    wall = time.perf_counter() - started
    load_after = load_average()
    if done.returncode != 0:
        raise SystemExit(f"error: the {engine} run failed (exit {done.returncode}):\n"
                         f"{done.stderr[-2000:]}")
    cells = cells_of(out)
    smallest = min(record["wall_s"] for record in cells.values())
    return {"engine": engine, "wall_s": wall, "cell_s": smallest, "per_step_s": smallest / steps,
            "load_before": load_before, "load_after": load_after,
            "cells": {k: {f: v for f, v in r.items() if f != "wall_s"} for k, r in cells.items()}}


def run(args: argparse.Namespace) -> dict:
    folder = Path(tempfile.mkdtemp(prefix="boundcalc-dask-vs-processes-"))
    runs: list[dict] = []
    try:
        for r in range(args.rounds):
            order = ENGINES if r % 2 == 0 else ENGINES[::-1]      # P D, D P, P D, …
            pair = {}
            for engine in order:
                res = one_run(engine, args.steps, args.set, folder, len(runs))
                runs.append(res)
                pair[engine] = res
                print(f"round {r + 1} {engine:<9}: {res['per_step_s']:.4f} s/step "
                      f"(smallest cell {res['cell_s']:.2f} s), wall {res['wall_s']:.1f} s; "
                      f"load {res['load_before']:.2f} -> {res['load_after']:.2f}", flush=True)
    finally:
        if args.keep:
            print(f"run directories kept in {folder}")
        else:
            shutil.rmtree(folder, ignore_errors=True)
    by = {e: [x for x in runs if x["engine"] == e] for e in ENGINES}
    rounds = list(zip(by["processes"], by["dask"], strict=True))
    step_ratios = [d["per_step_s"] / p["per_step_s"] for p, d in rounds]
    wall_ratios = [d["wall_s"] / p["wall_s"] for p, d in rounds]
    identical = all(x["cells"] == runs[0]["cells"] for x in runs)
    return {
        "what": (f"boundcalc reproduce figure1 --preset paper --set seeds=1 --set steps="
                 f"{args.steps}" + "".join(f" --set {s}" for s in args.set)
                 + " --executor {processes|dask} --jobs 2"),
        "rounds": args.rounds, "cpus": os.cpu_count(),
        "per_step_s": {e: [x["per_step_s"] for x in by[e]] for e in ENGINES},
        "wall_s": {e: [x["wall_s"] for x in by[e]] for e in ENGINES},
        "step_ratios": step_ratios, "wall_ratios": wall_ratios,
        "loads": [(x["engine"], x["load_before"], x["load_after"]) for x in runs],
        "identical_cells": identical,
    }


def _spread(values: list[float]) -> str:
    return (f"median {statistics.median(values):.3f} "
            f"(least {min(values):.3f}, largest {max(values):.3f}, {len(values)} round(s))")


def print_table(res: dict) -> None:
    print()
    print(f"ran: {res['what']}")
    print(f"     {res['rounds']} round(s), interleaved P D / D P; {res['cpus']} CPU(s)")
    for e in ENGINES:
        steps, walls = res["per_step_s"][e], res["wall_s"][e]
        print(f"{e:<9}  per step {statistics.median(steps):.4f} s (median; "
              f"{min(steps):.4f}-{max(steps):.4f})   wall {statistics.median(walls):.1f} s "
              f"(median; {min(walls):.1f}-{max(walls):.1f}; start-up and outputs included)")
    print(f"dask / processes per step: {_spread(res['step_ratios'])}   (goal <= 1.2)")
    print(f"dask / processes wall:     {_spread(res['wall_ratios'])}")
    loads = [v for _, before, after in res["loads"] for v in (before, after)]
    print(f"load average (1 min) over the runs: {min(loads):.2f} to {max(loads):.2f}")
    print(f"cell records identical between the engines (wall_s aside): "
          f"{'yes' if res['identical_cells'] else 'NO'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100,
                        help="ProjGD steps K of each run (the paper preset: 4000)")
    parser.add_argument("--rounds", type=int, default=2,
                        help="rounds of one run per engine (alternating order)")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                        help="another --set of the runs, e.g. widths=8,16,32")
    parser.add_argument("--keep", action="store_true", help="keep the run directories")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.rounds < 1:
        parser.error("--steps and --rounds must be at least 1")
    if any(s.split("=", 1)[0].strip() in ("seeds", "steps") for s in args.set):
        parser.error("--set seeds / steps: the runs use seeds=1 and --steps")
    res = run(args)
    print_table(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
