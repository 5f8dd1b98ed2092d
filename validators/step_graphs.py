"""Run the steps of a training loop as replays of one CUDA graph where possible.

A full-batch training step of this project is a fixed sequence of tensor operations on tensors
of fixed shapes: on a GPU its cost at the paper's sizes is mostly the host's — Python and one
kernel launch per operation (≈ 100 launches per ProjGD step of figure 1, ≈ 10 per token per
step of figure 2's IndRNN). :func:`run_steps` captures one step into a
``torch.cuda.CUDAGraph`` and replays it, so each later step costs one launch. The numbers are
those of calling the step eagerly: the graph replays the same kernels on the same tensors (a
CUDA test compares both).

The step has to be written for it (the same code then runs eagerly on the CPU):

* every piece of state it changes is a tensor allocated before the loop and updated in place
  (``copy_``, ``add_``, ``index_copy_``), never a Python object rebound to a new tensor;
* the step index it writes records at is a device tensor it advances itself
  (``k.add_(1)``), never a Python int (a replay re-runs the captured offsets);
* it neither reads a device value on the host (``float(t)``, ``.item()``, ``.cpu()``, a
  data-dependent shape) nor copies from the host.

``BOUNDCALC_CUDA_GRAPHS=0`` turns graphs off (every step eager). A step that cannot be captured
is run eagerly from there on, with one line on stderr saying why.

Example (on the CPU every step is an ordinary call):
    >>> import torch
    >>> total, k = torch.zeros(4), torch.zeros(1, dtype=torch.int64)
    >>> def step():
    ...     total.index_copy_(0, k, (k + 1).to(total.dtype))
    ...     k.add_(1)
    >>> run_steps(step, 4, torch.device("cpu"))
    'eager'
    >>> total.tolist()
    [1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import torch

__all__ = ["GRAPHS_ENV", "WARMUP_STEPS", "graphs_enabled", "run_steps"]

#: Environment variable: ``0`` runs every step eagerly on CUDA too.
GRAPHS_ENV = "BOUNDCALC_CUDA_GRAPHS"

#: Eager steps on a side stream before the capture (cuBLAS handles, workspaces and the caching
#: allocator's blocks are set up by them, as capture requires).
WARMUP_STEPS = 3


def graphs_enabled(device: torch.device) -> bool:
    """Whether :func:`run_steps` captures a graph on ``device``: CUDA, unless
    ``BOUNDCALC_CUDA_GRAPHS=0``."""
    return device.type == "cuda" and os.environ.get(GRAPHS_ENV, "1").strip() != "0"


def run_steps(step: Callable[[], None], steps: int, device: torch.device, *,
              after: Callable[[int], None] | None = None, warmup: int = WARMUP_STEPS) -> str:
    """Call ``step()`` ``steps`` times: eagerly, or (on CUDA) as replays of a captured graph.

    Args:
        step: one step of the loop, written as the module docstring says (state in place, the
            step index a device tensor it advances).
        steps: how many steps (≥ 0).
        device: where the step's tensors live.
        after: called as ``after(k)`` on the host after the k-th step was issued, k = 1 …
            ``steps`` (a progress line, say); it must not touch the step's tensors.
        warmup: eager steps before the capture (on CUDA they run on a side stream).

    Returns:
        ``"graph"`` when the steps after the warm-up were graph replays, else ``"eager"``.
    """
    steps = int(steps)
    done = 0

    def eager(count: int) -> None:
        nonlocal done
        for _ in range(count):
            step()
            done += 1
            if after is not None:
                after(done)

    if not graphs_enabled(device) or steps <= warmup + 1:
        eager(steps)
        return "eager"
    side = torch.cuda.Stream(device)
    side.wait_stream(torch.cuda.current_stream(device))
    with torch.cuda.stream(side):
        eager(warmup)
    torch.cuda.current_stream(device).wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            step()
    except Exception as exc:   # not capturable: say why once, go on eagerly
        print(f"note: CUDA graph capture failed ({type(exc).__name__}: "
              f"{str(exc).splitlines()[0] if str(exc) else ''}); running the steps eagerly",
              file=sys.stderr)
        torch.cuda.synchronize(device)
        eager(steps - done)
        return "eager"
    for _ in range(steps - done):
        graph.replay()
        done += 1
        if after is not None:
            after(done)
    return "graph"
