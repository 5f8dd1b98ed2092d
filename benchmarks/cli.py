"""Benchmark the calculator: cold start of ``boundcalc theorem1`` and a 10^6-point sweep.

Usage (from the repository root, after ``pip install -e .``)::

    python benchmarks/cli.py                 # 9 alternating cold runs, 3 runs of each sweep
    python benchmarks/cli.py --runs 15 --sweep-runs 1 --json out.json
    python benchmarks/cli.py --no-csv        # skip the (slow, ~470 MB) CSV sweep

The calculator's speed goals, each measured here and printed with PASS / MISS:

* **cold start** — wall time of ``boundcalc theorem1 --m 512 --n 1000 --rho 2`` in a fresh
  process (stdout to /dev/null), as a ratio to ``python -c "import sympy"`` measured in the same
  run: the two commands alternate, ``--runs`` times each, and the ratio is that of the medians
  (goal <= 2). The median of the per-pair ratios is shown too (it is less sensitive to a machine
  whose load changes during the run). The calculator keeps the code it generates from the sympy
  statements in a user cache (``$XDG_CACHE_HOME/boundcalc``); the cold runs use that cache
  (filled by an untimed first run), and the *first run after an install* (an empty cache, through
  ``BOUNDCALC_CACHE_DIR`` pointed at a new folder each time) is reported on its own line.
* **10^6-point sweep** (goal <= 2 s): Theorem 1 over m = 2, 4, ..., 2000 times n = 1, ..., 1000,
  every other input at its default, timed three ways and reported separately:
  ``evaluate_grid`` in this process (the vectorised evaluation alone; its first call, which also
  loads the generated code, on its own line), and the whole CLI in a fresh process with
  ``--format table`` (evaluation, the DataFrame, 60 rows shown) and with ``--format csv --output
  FILE`` (every row written: ~470 MB of text, bounded by the formatting of 3.6·10^7 floats).

Every time is wall-clock (``time.perf_counter``); the load average before and after is printed,
since on a shared machine it moves every number.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

POINT_ARGS = ["theorem1", "--m", "512", "--n", "1000", "--rho", "2"]
SWEEP_ARGS = ["sweep", "theorem1", "--m", "2:2000:2", "--n", "1:1000:1"]
COLD_GOAL = 2.0
SWEEP_GOAL = 2.0


def boundcalc_command(force_module: bool = False) -> list[str]:
    """The installed ``boundcalc`` script next to this interpreter, else ``python -m boundcalc``."""
    script = Path(sys.executable).parent / "boundcalc"
    if not force_module and script.exists():
        return [str(script)]
    return [sys.executable, "-m", "boundcalc"]


def timed(cmd: list[str], env: dict[str, str] | None = None) -> float:
    """Wall seconds of one fresh process; stdout and stderr discarded; a failure is fatal."""
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"benchmark command failed ({proc.returncode}): {' '.join(cmd)}\n"
                         f"{proc.stderr.decode(errors='replace')}")
    return elapsed


def cold_start(runs: int, cli: list[str]) -> dict:
    """Alternating cold runs of ``import sympy`` and the point command; empty-cache runs."""
    sympy_cmd = [sys.executable, "-c", "import sympy"]
    point_cmd = cli + POINT_ARGS
    timed(point_cmd)  # untimed: fills the code cache and the bytecode caches
    timed(sympy_cmd)
    sympy_times, cli_times = [], []
    for i in range(runs):
        order = [(sympy_cmd, sympy_times), (point_cmd, cli_times)]
        for cmd, bucket in order if i % 2 == 0 else order[::-1]:
            bucket.append(timed(cmd))
    first_runs = []
    for _ in range(max(1, runs // 3)):
        with tempfile.TemporaryDirectory(prefix="boundcalc-bench-cache-") as empty:
            env = {**os.environ, "BOUNDCALC_CACHE_DIR": empty}
            first_runs.append(timed(point_cmd, env))
    sympy_median = statistics.median(sympy_times)
    cli_median = statistics.median(cli_times)
    return {
        "sympy_s": sympy_times, "cli_s": cli_times, "empty_cache_cli_s": first_runs,
        "sympy_median_s": sympy_median, "cli_median_s": cli_median,
        "ratio": cli_median / sympy_median,
        "paired_ratio": statistics.median(c / s for c, s in zip(cli_times, sympy_times,
                                                                   strict=True)),
        "empty_cache_ratio": statistics.median(first_runs) / sympy_median,
    }


def grid_columns():
    """The 10^6-point grid (1000 widths x 1000 sample sizes) as evaluate_grid columns."""
    import numpy as np

    from boundcalc.calc.evaluator import activation_values
    from boundcalc.inputs.params import ARGUMENT_NAMES, validate

    inputs = validate()
    act = [float(v) for v in activation_values(inputs.activation, 30)]
    cols: dict[str, object] = dict.fromkeys(ARGUMENT_NAMES, None)
    cols.update(
        m=np.arange(2, 2001, 2, dtype=float).reshape(-1, 1),
        n=np.arange(1, 1001, dtype=float).reshape(1, -1),
        d=float(inputs.d), T=float(inputs.T), delta=float(inputs.delta),
        rho_c=float(inputs.rho[0]), rho_u=float(inputs.rho[1]), rho_w=float(inputs.rho[2]),
        nu_c=float(inputs.nu[0]), nu_u=float(inputs.nu[1]), nu_w=float(inputs.nu[2]),
        sigma0=act[0], sigma1=act[1], sigma2=act[2],
        K=float(inputs.steps), eta=None, b=float(inputs.batch_size),
        epsilon_mis=float(inputs.misspecification),
    )
    return cols


def sweep_in_process(runs: int) -> dict:
    """evaluate_grid over the 10^6-point grid: first call, then the median of ``runs`` calls."""
    from boundcalc.calc.evaluator import evaluate_grid

    cols = grid_columns()
    start = time.perf_counter()
    result = evaluate_grid("theorem1", cols)
    first = time.perf_counter() - start
    points = result["bound.min_iterate"].size
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        evaluate_grid("theorem1", cols)
        times.append(time.perf_counter() - start)
    return {"points": int(points), "first_call_s": first, "grid_s": times,
            "grid_median_s": statistics.median(times)}


def sweep_cli(runs: int, cli: list[str], csv_runs: int) -> dict:
    """The whole sweep command in a fresh process: --format table, and CSV to a file."""
    table = [timed(cli + SWEEP_ARGS + ["--format", "table"]) for _ in range(runs)]
    out: dict[str, object] = {"table_s": table, "table_median_s": statistics.median(table)}
    if csv_runs:
        csv_times, size = [], 0
        with tempfile.TemporaryDirectory(prefix="boundcalc-bench-csv-") as folder:
            target = os.path.join(folder, "sweep.csv")
            for _ in range(csv_runs):
                csv_times.append(timed(cli + SWEEP_ARGS + ["--format", "csv", "--output",
                                                            target]))
                size = os.path.getsize(target)
                os.unlink(target)
        out.update(csv_s=csv_times, csv_median_s=statistics.median(csv_times), csv_bytes=size)
    return out


def _verdict(value: float, goal: float) -> str:
    return "PASS" if value <= goal else "MISS"


def report(res: dict) -> None:
    cold, grid, cli = res["cold"], res["grid"], res["sweep_cli"]
    n, k = len(cold["cli_s"]), len(grid["grid_s"])
    print(f"boundcalc benchmark: Python {platform.python_version()}, {os.cpu_count()} CPUs, "
          f"load average {res['load_before']:.2f} before / {res['load_after']:.2f} after")
    print(f"command: {' '.join(res['command'])}")
    rows = [
        ("python -c 'import sympy', fresh process", f"{cold['sympy_median_s']:.3f} s", n, "",
         ""),
        ("boundcalc theorem1 --m 512 --n 1000 --rho 2", f"{cold['cli_median_s']:.3f} s", n, "",
         ""),
        ("  cold start / import sympy (medians)", f"{cold['ratio']:.2f}", n,
         f"<= {COLD_GOAL:g}", _verdict(cold["ratio"], COLD_GOAL)),
        ("  median of the paired ratios", f"{cold['paired_ratio']:.2f}", n, "", ""),
        ("  first run, empty code cache / import sympy", f"{cold['empty_cache_ratio']:.2f}",
         len(cold["empty_cache_cli_s"]), "info", ""),
        (f"evaluate_grid theorem1, {grid['points']:,} points", f"{grid['grid_median_s']:.3f} s",
         k, f"<= {SWEEP_GOAL:g} s", _verdict(grid["grid_median_s"], SWEEP_GOAL)),
        ("  its first call (loads the generated code)", f"{grid['first_call_s']:.3f} s", 1,
         "info", ""),
        ("boundcalc sweep (10^6 rows) --format table", f"{cli['table_median_s']:.3f} s",
         len(cli["table_s"]), f"<= {SWEEP_GOAL:g} s",
         _verdict(cli["table_median_s"], SWEEP_GOAL)),
    ]
    if "csv_s" in cli:
        rows.append((f"boundcalc sweep (10^6 rows) --format csv --output "
                     f"({cli['csv_bytes'] / 1e6:.0f} MB)", f"{cli['csv_median_s']:.3f} s",
                     len(cli["csv_s"]), f"<= {SWEEP_GOAL:g} s",
                     _verdict(cli["csv_median_s"], SWEEP_GOAL)))
    else:
        rows.append(("boundcalc sweep (10^6 rows) --format csv --output", "skipped", 0, "", ""))
    width = max(len(r[0]) for r in rows)
    print()
    print(f"{'what':<{width}}  {'median':>9}  {'runs':>4}  {'goal':<8}  result")
    print(f"{'-' * width}  {'-' * 9}  {'-' * 4}  {'-' * 8}  ------")
    for what, value, runs, goal, verdict in rows:
        print(f"{what:<{width}}  {value:>9}  {runs:>4}  {goal:<8}  {verdict}")
    print()
    print("sweep: m = 2:2000:2 x n = 1:1000:1 (Theorem 1, other inputs at their defaults); "
          "the CLI times include the interpreter start.")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9,
                        help="cold runs of each command (alternating), default 9")
    parser.add_argument("--sweep-runs", type=int, default=3,
                        help="timed runs of evaluate_grid and of the table sweep, default 3")
    parser.add_argument("--csv-runs", type=int, default=1,
                        help="runs of the CSV sweep, default 1 (each writes ~470 MB)")
    parser.add_argument("--no-csv", action="store_true", help="skip the CSV sweep")
    parser.add_argument("--module", action="store_true",
                        help="run `python -m boundcalc` instead of the installed script")
    parser.add_argument("--json", metavar="FILE", help="also write every timing as JSON")
    args = parser.parse_args(argv)
    if shutil.which("boundcalc") is None and not args.module:
        args.module = not (Path(sys.executable).parent / "boundcalc").exists()
    cli = boundcalc_command(args.module)
    res: dict[str, object] = {"command": cli + POINT_ARGS, "load_before": os.getloadavg()[0]}
    res["grid"] = sweep_in_process(max(1, args.sweep_runs))
    res["cold"] = cold_start(max(1, args.runs), cli)
    res["sweep_cli"] = sweep_cli(max(1, args.sweep_runs), cli,
                                 0 if args.no_csv else max(0, args.csv_runs))
    res["load_after"] = os.getloadavg()[0]
    report(res)
    if args.json:
        Path(args.json).write_text(json.dumps(res, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
