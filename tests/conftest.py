"""Shared fixtures: ``cli`` runs ``boundcalc.cli.main`` in-process and captures its streams;
``plain_run`` trains the paper's model by a plain torch loop written from its formula (not the
project's model) and returns a run file's arrays, ``plain_forward`` is that formula;
``kill_at_first_cell`` starts a driver and kills it, with its workers, once its first cell is
stored.

A test module that drives the torch validators says so with ``pytestmark =
pytest.mark.needs_torch``; where torch is not installed (the calculator's lowest-pins CI step) such
a module is not collected at all, since importing it may already need torch.
"""

from __future__ import annotations

import importlib.util
import math
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from boundcalc.cli import main

_TORCH = importlib.util.find_spec("torch") is not None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs_torch: the module drives the torch validators")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave out the modules marked ``needs_torch`` where torch is absent."""
    if _TORCH or collection_path.suffix != ".py" or not collection_path.name.startswith("test_"):
        return None
    return "pytestmark = pytest.mark.needs_torch" in collection_path.read_text(encoding="utf-8")


@dataclass(frozen=True)
class Run:
    """Exit code and captured streams of one ``boundcalc`` invocation."""

    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Run]:
    """``cli("theorem1", "--m", "8")`` runs the command and returns :class:`Run`."""

    def run(*args: str) -> Run:
        capsys.readouterr()
        code = main(list(args))
        captured = capsys.readouterr()
        return Run(code, captured.out, captured.err)

    return run


def _plain_forward(c, U, W, X, q):
    """f(X; θ) = m^{-1/2} Σ_i c_i tanh(U_iᵀ X softmax(Xᵀ W_i q)), tokens as the rows of X."""
    import torch

    logits = torch.einsum("nta,mab,nb->nmt", X, W, q)
    attended = torch.einsum("nmt,nta->nma", torch.softmax(logits, dim=-1), X)
    return (c * torch.tanh((attended * U).sum(-1))).sum(-1) / math.sqrt(c.shape[0])


def _plain_run(*, optimizer="gd", symmetric=True, m=6, d=3, T=4, n=9, steps=8, eta=0.05,
              seed=0, record=None):
    """Train by plain GD (no projection) or Adam on (1/n)Σ(f − y)²; the run file's arrays."""
    import numpy as np
    import torch

    gen = torch.Generator().manual_seed(seed)
    half = m // 2
    c = torch.where(torch.rand(half, generator=gen) < 0.5, -1.0, 1.0).double()
    U = torch.randn(half, d, generator=gen, dtype=torch.float64)
    W = torch.randn(half, d, d, generator=gen, dtype=torch.float64)
    if symmetric:
        c0, U0, W0 = torch.cat([c, -c]), torch.cat([U, U]), torch.cat([W, W])
    else:
        c0 = torch.where(torch.rand(m, generator=gen) < 0.5, -1.0, 1.0).double()
        U0 = torch.randn(m, d, generator=gen, dtype=torch.float64)
        W0 = torch.randn(m, d, d, generator=gen, dtype=torch.float64)
    X = torch.randn(n, T, d, generator=gen, dtype=torch.float64)
    X = X / X.norm(dim=-1, keepdim=True).clamp_min(1.0)
    y = torch.sin(3 * X[:, 0, 0])
    params = [t.clone().requires_grad_(True) for t in (c0, U0, W0)]
    moments = [(torch.zeros_like(p), torch.zeros_like(p)) for p in params]
    keep = set(range(1, steps + 1) if record is None else record)
    traj = {"c": [], "U": [], "W": [], "steps": []}
    for k in range(1, steps + 1):
        loss = ((_plain_forward(*params, X, X[:, -1]) - y) ** 2).mean()
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, (first, second) in zip(params, grads, moments, strict=True):
                if optimizer == "gd":
                    p -= eta * g
                else:  # Adam, betas (0.9, 0.999), eps 1e-8
                    first.mul_(0.9).add_(0.1 * g)
                    second.mul_(0.999).add_(0.001 * g * g)
                    step = first / (1 - 0.9**k) / ((second / (1 - 0.999**k)).sqrt() + 1e-8)
                    p -= eta * step
        if k in keep:
            for name, p in zip("cUW", params, strict=True):
                traj[name].append(p.detach().clone())
            traj["steps"].append(k)
    return {"c0": c0, "U0": U0, "W0": W0, "c": torch.stack(traj["c"]),
            "U": torch.stack(traj["U"]), "W": torch.stack(traj["W"]),
            "steps": np.array(traj["steps"]), "X": X, "y": y, "eta": eta, "K": steps}


@pytest.fixture
def plain_forward() -> Callable[..., object]:
    """The model's formula in plain torch (:func:`_plain_forward`)."""
    return _plain_forward


@pytest.fixture
def plain_run() -> Callable[..., dict]:
    """``plain_run(optimizer="gd"|"adam", symmetric=True, ...)``: a run file's arrays
    (:func:`_plain_run`)."""
    return _plain_run


def _kill_at_first_cell(cmd: list[str], run: Path, cwd: Path, *, env: dict | None = None,
                        timeout: float = 180.0,
                        while_running: Callable[[int], None] | None = None) -> dict[str, int]:
    """Start ``cmd`` (a driver writing the run directory ``run``) in a session of its own, wait
    until ``run/cells`` holds a cell (or the driver ends, or ``timeout`` seconds pass), call
    ``while_running(pid)`` if given, then SIGKILL the whole session (the driver and the workers
    it started); return the cells left, {name: mtime_ns}."""
    driver = subprocess.Popen(cmd, cwd=cwd, env=env, start_new_session=True,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout
        while not _stored_cells(run) and time.monotonic() < deadline and driver.poll() is None:
            time.sleep(0.02)
        if while_running is not None:
            while_running(driver.pid)
    finally:
        os.killpg(driver.pid, signal.SIGKILL)
        driver.wait()
    return _stored_cells(run)


def _stored_cells(run: Path) -> dict[str, int]:
    return {p.stem: p.stat().st_mtime_ns for p in (run / "cells").glob("*.json")}


@pytest.fixture
def kill_at_first_cell() -> Callable[..., dict[str, int]]:
    """``kill_at_first_cell(cmd, run, cwd, env=None, timeout=180, while_running=None)``: the
    cells a driver left when killed after its first (:func:`_kill_at_first_cell`)."""
    return _kill_at_first_cell


def _no_internal_error(run: Run) -> None:
    """``run`` (a :func:`cli` result) ended as a user error or a result, never an internal one:
    exit 0, 1 or 2, no traceback, and an exit 2 is one line naming a flag or an argument."""
    assert run.code in (0, 1, 2), (run.code, run.err)
    assert "Traceback" not in run.err and "internal error" not in run.err, run.err
    if run.code == 2:
        lines = run.err.strip().splitlines()
        assert len(lines) == 1, run.err
        assert re.match(r"error: (--[A-Za-z][A-Za-z0-9-]*|[A-Z]+) ", lines[0]), run.err


@pytest.fixture(scope="session")
def no_internal_error() -> Callable[[Run], None]:
    """``no_internal_error(run)``: assert that a :func:`cli` run ended without an internal
    error (exit 0, 1 or 2; an exit 2 in one line naming its flag)."""
    return _no_internal_error
