"""Benchmark ``boundcalc check`` on a run file of the paper's Fig. 1 sizes, and its memory on a
large file.

Usage (from the repository root, after ``pip install -e .``)::

    python benchmarks/check.py                      # m=256, n=4000, d=8, T=16, 100 recorded steps
    python benchmarks/check.py --recorded 20 --m 64  # smaller
    python benchmarks/check.py --device cuda
    python benchmarks/check.py --memory-gb 4         # the whole check of a 4 GB file

Writes a run file (plain GD steps from a symmetric init, every step recorded, float32 arrays as a
training script would save them; ``boundcalc.save_run``) to a temporary folder, then times
:func:`boundcalc.check_run` on it in a fresh process (``boundcalc check RUN --quiet --format
json``), so the import of torch and the bounds' code is counted, with the peak resident memory of
that process. Prints the sizes, the file size, the wall and CPU time, the time per recorded
step, the peak memory and the machine's load average (the project's machines are shared: say
which load a time was measured under).

``--memory-gb G`` instead writes (streaming, never in memory) a run file of about G GB, by
default at m = 4096, d = 16, T = 8 and only n = 8 samples (so that the measurement, whose time
grows with n times the file's size, stays short) with as many recorded iterates as fit, runs the
same whole ``boundcalc check`` on it in a fresh process, reports its wall time and peak resident
memory, and deletes the file. ``--m``, ``--n``, ``--d``, ``--T`` change the sizes of either run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np


def write_run(path: Path, *, m: int, n: int, d: int, T: int, recorded: int, seed: int) -> None:
    """A run file with ``recorded`` consecutive iterates near a symmetric init (float32)."""
    rng = np.random.default_rng(seed)
    half = m // 2
    c = rng.choice([-1.0, 1.0], half)
    U = rng.normal(size=(half, d))
    W = rng.normal(size=(half, d, d))
    c0, U0, W0 = np.concatenate([c, -c]), np.concatenate([U, U]), np.concatenate([W, W])
    X = rng.normal(size=(n, T, d))
    X /= np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1.0)
    drift = np.linspace(0.0, 1.0, recorded + 1)[1:]

    def walk(base: np.ndarray) -> np.ndarray:
        direction = rng.normal(size=base.shape) * 0.5 / np.sqrt(m)
        return (base[None] + drift.reshape(-1, *[1] * base.ndim) * direction[None])

    from boundcalc import save_run

    save_run(path, c0=c0.astype(np.float32), U0=U0.astype(np.float32),
             W0=W0.astype(np.float32), c=walk(c0).astype(np.float32),
             U=walk(U0).astype(np.float32), W=walk(W0).astype(np.float32),
             steps=np.arange(1, recorded + 1), X=X.astype(np.float32),
             y=np.tanh(X[:, 0, 0]).astype(np.float32), eta=0.1, K=recorded)


def write_big_run(path: Path, gb: float, *, m: int, n: int, d: int, T: int) -> int:
    """A run file of about ``gb`` GB (float32) with as many recorded iterates as fit, written
    member by member in 64 MB pieces (never whole in memory); the iterates drift linearly from
    a symmetric θ(0). Returns the number of iterates."""
    import zipfile

    rng = np.random.default_rng(0)
    k = max(1, int(gb * 2**30 // (4 * m * (1 + d + d * d))))
    half = m // 2
    base = {"c0": np.concatenate([np.ones(half), -np.ones(half)]),
            "U0": np.tile(rng.normal(size=(half, d)), (2, 1)),
            "W0": np.tile(rng.normal(size=(half, d, d)), (2, 1, 1))}
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        def put(name: str, shape: tuple, fill) -> None:
            header = {"descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
                      "fortran_order": False, "shape": shape}
            with zf.open(f"{name}.npy", "w", force_zip64=True) as fh:
                np.lib.format.write_array_header_1_0(fh, header)
                rows = max(1, (64 << 20) // max(1, 4 * int(np.prod(shape[1:]))))
                for start in range(0, shape[0], rows):
                    fh.write(np.ascontiguousarray(fill(start, min(shape[0], start + rows)),
                                                  dtype=np.float32).tobytes())

        for name, arr in base.items():
            put(name, arr.shape, lambda a, b, arr=arr: arr[a:b])
        for name in ("c", "U", "W"):
            arr = base[f"{name}0"]
            direction = rng.normal(size=arr.shape) * 0.5 / np.sqrt(m)

            def drift(a: int, b: int, arr=arr, direction=direction) -> np.ndarray:
                t = (np.arange(a, b, dtype=np.float32) + 1) / k
                return arr[None] + t.reshape(-1, *[1] * arr.ndim) * direction[None]

            put(name, (k, *arr.shape), drift)
        X = rng.normal(size=(n, T, d))
        X /= np.maximum(np.linalg.norm(X, axis=-1, keepdims=True), 1.0)
        put("X", X.shape, lambda a, b: X[a:b])
        put("y", (n,), lambda a, b: np.tanh(X[a:b, 0, 0]))
        np.save(zf.open("steps.npy", "w"), np.arange(1, k + 1))
        np.save(zf.open("eta.npy", "w"), np.float64(0.1))
        np.save(zf.open("K.npy", "w"), np.int64(k))
    return k


def time_check(path: Path, device: str) -> tuple[float, dict, float, float, tuple, tuple] | None:
    """``boundcalc check PATH --quiet --format json`` in a fresh process (run from the file's
    folder): (wall seconds, the JSON report, peak resident memory in MB, CPU seconds (user +
    system, all threads), load averages before and after), or None (its stderr written) when it
    fails."""
    code = ("import sys, resource; from boundcalc.cli import main; "
            "code = main(sys.argv[1:]); "
            "use = resource.getrusage(resource.RUSAGE_SELF); "
            "print(use.ru_maxrss, use.ru_utime + use.ru_stime, file=sys.stderr); "
            "sys.exit(code)")
    load_before = os.getloadavg()
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", code, "check", str(path), "--quiet",
                           "--format", "json", "--device", device],
                          capture_output=True, text=True, cwd=path.parent)
    seconds = time.perf_counter() - started
    load_after = os.getloadavg()
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        return None
    peak_kb, cpu = proc.stderr.strip().splitlines()[-1].split()
    return seconds, json.loads(proc.stdout), int(peak_kb) / 1024, float(cpu), load_before, \
        load_after


def report(label: str, timed: tuple, recorded: int) -> None:
    """Print the wall and CPU time, the measurement's time per recorded step, the peak memory
    and the load (on a shared machine the CPU time depends less on the load than the wall
    time)."""
    seconds, result, peak_mb, cpu, before, after = timed
    print(f"boundcalc check{label}: {seconds:.1f} s wall, {cpu:.1f} s CPU in a fresh process "
          f"(measurement {result['seconds']:.1f} s wall, {result['seconds'] / recorded:.3f} s "
          f"per recorded step) on {result['device']}; peak memory {peak_mb:.0f} MB")
    print(f"load average before {before[0]:.2f}, after {after[0]:.2f} on {os.cpu_count()} "
          f"CPU(s)")


def memory(gb: float, *, m: int, n: int, d: int, T: int, device: str) -> int:
    """Write a ``gb`` GB run file to a temporary folder, check it whole, delete it."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.npz"
        started = time.perf_counter()
        k = write_big_run(path, gb, m=m, n=n, d=d, T=T)
        size = path.stat().st_size
        print(f"file {size / 2**30:.2f} GB (m={m} n={n} d={d} T={T}, {k} recorded iterates, "
              f"float32), written in {time.perf_counter() - started:.0f} s")
        timed = time_check(path, device)
    if timed is None:
        return 1
    report(" (the whole file)", timed, k)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--m", type=int, default=None)
    parser.add_argument("--n", type=int, default=None)
    parser.add_argument("--d", type=int, default=None)
    parser.add_argument("--T", type=int, default=None)
    parser.add_argument("--recorded", type=int, default=100)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--memory-gb", type=float, default=None)
    args = parser.parse_args(argv)
    if args.memory_gb is not None:
        return memory(args.memory_gb, m=args.m or 4096, n=args.n or 8, d=args.d or 16,
                      T=args.T or 8, device=args.device)
    m, n, d, T = args.m or 256, args.n or 4000, args.d or 8, args.T or 16
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "run.npz"
        write_run(path, m=m, n=n, d=d, T=T, recorded=args.recorded, seed=args.seed)
        size = path.stat().st_size
        timed = time_check(path, args.device)
    if timed is None:
        return 1
    print(f"sizes: m={m} n={n} d={d} T={T} recorded={args.recorded} "
          f"(file {size / 2**20:.0f} MB, float32)")
    report("", timed, args.recorded)
    return 0


if __name__ == "__main__":
    sys.exit(main())
