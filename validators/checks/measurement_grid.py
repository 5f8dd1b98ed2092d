"""The grid of adversarial measurements (Definition 1, Lemmas 2, 3 and 6), resumable and parallel.

:func:`run_grid` runs every measurement at every point of a grid of (m, d, T, ρ, activation) —
by default :data:`GRID`, the grid documented in docs/validation.md — in worker processes (CPU,
and optionally CUDA for the most expensive jobs), appending each finished job's records to a
JSON-lines file from which a later run resumes; :func:`summarize` reduces the records to the
largest measured/bound ratio per (name, method).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence

import torch

from .event import validate_event
from .lemma2 import validate_lemma2
from .lemma3 import validate_lemma3
from .lemma6 import validate_lemma6
from .records import DEFAULT_STARTS, DEFAULT_STEPS

__all__ = ["GRID", "grid_jobs", "run_grid", "run_job", "summarize"]


#: The acceptance grid of the adversarial measurements (docs/validation.md, "The full grid").
GRID = {"m": (2, 4, 16, 64), "d": (1, 2, 8), "T": (1, 2, 16, 128), "rho": ("0.5", "2", "5"),
        "activation": ("tanh", "erf")}


def grid_jobs(*, ms: Sequence[int] = GRID["m"], ds: Sequence[int] = GRID["d"],
              Ts: Sequence[int] = GRID["T"], rhos: Sequence[object] = GRID["rho"],
              activations: Sequence[str] = GRID["activation"]) -> list[tuple]:
    """One ``('event', m, d)`` job per (m, d) and one ``('lemmas', m, d, T, ρ, activation)`` job
    per grid point, the most expensive first."""
    jobs: list[tuple] = [("event", m, d) for m in ms for d in ds]
    lemma = [("lemmas", m, d, T, str(rho), act) for m in ms for d in ds for T in Ts
             for rho in rhos for act in activations]
    lemma.sort(key=lambda j: -j[1] * max(j[3], 4) * (1 + j[2] ** 2))
    return jobs + lemma


def run_job(job: tuple, settings: dict) -> list[dict]:
    """Run one job of :func:`grid_jobs` (event, or Lemmas 2, 3 and 6 at one grid point)."""
    kw = dict(settings)
    event_seeds = kw.pop("event_seeds", 200)
    if job[0] == "event":
        return validate_event(job[1], job[2], delta=kw["delta"], seeds=event_seeds,
                              seed=kw["seed"], device=kw["device"], dtype=kw["dtype"])
    _, m, d, T, rho, act = job
    lanczos = kw.pop("lanczos", 32)
    records = validate_lemma2(m, d, T, rho, activation=act, lanczos=lanczos, **kw)
    records += validate_lemma3(m, d, T, rho, activation=act, **kw)
    records += validate_lemma6(m, d, T, rho, activation=act, **kw)
    return records


def _job_key(job: tuple) -> str:
    return json.dumps(list(job))


def _worker(payload: tuple) -> tuple[str, list[dict], float]:
    job, settings = payload
    torch.set_num_threads(1)
    t0 = time.time()
    records = run_job(job, settings)
    for r in records:
        r["job"] = _job_key(job)
    return _job_key(job), records, time.time() - t0


def run_grid(*, ms: Sequence[int] = GRID["m"], ds: Sequence[int] = GRID["d"],
             Ts: Sequence[int] = GRID["T"], rhos: Sequence[object] = GRID["rho"],
             activations: Sequence[str] = GRID["activation"], delta: object = "0.05",
             starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
             samples: int = 4, lanczos: int = 32, device: str | torch.device = "cpu",
             dtype: torch.dtype | str = torch.float64, event_seeds: int = 200,
             workers: int = 1, cuda_workers: int = 0, cuda_share: float = 0.25,
             records_path: str | None = None, progress: bool = False) -> list[dict]:
    """Every measurement (event, Lemmas 2, 3, 6) at every point of the grid; records list.

    Args:
        workers: CPU processes (one intra-op thread each); 1 runs in this process.
        cuda_workers: extra processes on ``cuda`` that take the most expensive jobs (a fraction
            ``cuda_share`` of the lemma jobs), when CUDA is available.
        records_path: JSON-lines file; each finished job's records are appended at once, and
            jobs already in the file are skipped (resume).
    """
    settings = {"starts": starts, "steps": steps, "seed": seed, "samples": samples,
                "lanczos": lanczos, "device": str(device), "dtype": str(dtype).replace(
                    "torch.", ""), "delta": str(delta), "event_seeds": event_seeds}
    jobs = grid_jobs(ms=ms, ds=ds, Ts=Ts, rhos=rhos, activations=activations)
    records: list[dict] = []
    done: set[str] = set()
    if records_path:
        try:
            with open(records_path) as fh:
                for line in fh:
                    if line.strip():
                        r = json.loads(line)
                        records.append(r)
                        done.add(r.get("job", ""))
        except FileNotFoundError:
            pass
    jobs = [j for j in jobs if _job_key(j) not in done]

    def finish(key: str, recs: list[dict], seconds: float) -> None:
        records.extend(recs)
        if records_path:
            with open(records_path, "a") as fh:
                for r in recs:
                    fh.write(json.dumps(r) + "\n")
        if progress:
            print(f"{key}: {seconds:.1f}s", file=sys.stderr, flush=True)

    use_cuda = cuda_workers > 0 and torch.cuda.is_available()
    if workers <= 1 and not use_cuda:
        for job in jobs:
            finish(*_worker((job, settings)))
        return records
    import concurrent.futures as cf
    import multiprocessing as mp

    ctx = mp.get_context("spawn")
    lemma_jobs = [j for j in jobs if j[0] == "lemmas"]
    n_gpu = int(cuda_share * len(lemma_jobs)) if use_cuda else 0
    gpu_jobs = set(map(_job_key, lemma_jobs[:n_gpu]))
    gpu_settings = {**settings, "device": "cuda"}
    with cf.ProcessPoolExecutor(max(workers, 1), mp_context=ctx) as cpu_pool, \
            cf.ProcessPoolExecutor(max(cuda_workers, 1), mp_context=ctx) as gpu_pool:
        futures = []
        for job in jobs:
            if _job_key(job) in gpu_jobs:
                futures.append(gpu_pool.submit(_worker, (job, gpu_settings)))
            else:
                futures.append(cpu_pool.submit(_worker, (job, settings)))
        for fut in cf.as_completed(futures):
            try:
                finish(*fut.result())
            except Exception as exc:  # report and go on with the other jobs
                print(f"job failed: {exc!r}", file=sys.stderr, flush=True)
    return records


def summarize(records: Sequence[dict]) -> list[dict]:
    """Max ratio per (name, method): {name, method, count, max_ratio, worst (settings), violations,
    within_1pct}."""
    groups: dict[tuple[str, str], list[dict]] = {}
    for r in records:
        groups.setdefault((r["name"], r["method"]), []).append(r)
    out = []
    for (name, method), recs in sorted(groups.items()):
        worst = max(recs, key=lambda r: r["ratio"])
        out.append({
            "name": name, "method": method, "count": len(recs), "max_ratio": worst["ratio"],
            "worst": {k: worst.get(k) for k in ("m", "d", "T", "rho_c", "rho_u", "rho_w",
                                                 "activation", "measured", "bound")},
            "violations": sum(not r["holds"] for r in recs),
            "within_1pct": sum(r["holds"] and r["ratio"] >= 0.99 for r in recs),
        })
    return out
