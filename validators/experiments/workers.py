"""Worker processes for the experiments' ``--jobs``: they never outlive the run that started them.

A :class:`~concurrent.futures.ProcessPoolExecutor` worker whose parent is killed (SIGKILL, the
OOM killer, a closed terminal) is re-parented and would go on computing and writing cells, then
wait for work forever. :func:`worker_pool` starts each worker with :func:`die_with_parent`, which

* on Linux asks the kernel to send the worker SIGKILL when its parent dies
  (``prctl(PR_SET_PDEATHSIG, SIGKILL)`` through ctypes), and
* everywhere starts a daemon thread that polls ``os.getppid()`` every :data:`WATCH_S` seconds and
  ends the worker (``os._exit``) once the parent has changed: the portable fallback.

Cells are written atomically, so a worker killed in the middle of one leaves no half cell, and a
re-run computes exactly the missing cells.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

#: Seconds between the watchdog's looks at the parent process id.
WATCH_S = 0.5
_PR_SET_PDEATHSIG = 1


def _set_parent_death_signal() -> bool:
    """Linux: SIGKILL this process when its parent dies. False where that is not available."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch_parent(parent_pid: int) -> None:
    while True:
        time.sleep(WATCH_S)
        if os.getppid() != parent_pid:
            os._exit(1)


def die_with_parent(parent_pid: int) -> None:
    """Initializer of a pool worker: end this process when ``parent_pid`` (its parent) dies."""
    _set_parent_death_signal()
    if os.getppid() != parent_pid:     # the parent died before the death signal was armed
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent_pid,), name="boundcalc-parent-watch",
                     daemon=True).start()


def worker_pool(jobs: int) -> ProcessPoolExecutor:
    """``jobs`` spawned worker processes that end when this process ends, however it ends.

    The workers are started by the thread that submits work (spawn start method), which must
    stay alive while they run: the parent-death signal follows the thread that started them.
    """
    return ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"),
                               initializer=die_with_parent, initargs=(os.getpid(),))


__all__ = ["WATCH_S", "die_with_parent", "worker_pool"]
