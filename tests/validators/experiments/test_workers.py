"""Worker processes that never outlive their run (validators/experiments/workers.py): a pool
worker ends when the process that started it is killed, by the kernel's parent-death signal and,
without it, by the watchdog thread; a worker whose parent is already gone ends at once."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

#: The longest wait for a process to end before the test fails (a ceiling, not a measured time).
DEADLINE_S = 30.0


def _gone(pid: int) -> bool:
    """The process has exited (a zombie nobody reaps counts as exited)."""
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        try:
            return "\nState:\tZ" in status.read_text()
        except OSError:
            return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


def _wait_gone(pid: int) -> bool:
    end = time.monotonic() + DEADLINE_S
    while time.monotonic() < end:
        if _gone(pid):
            return True
        time.sleep(0.1)
    return False


def _start_parent(script: str) -> tuple[subprocess.Popen, int]:
    """Run ``script`` as a parent process that prints its worker's pid, then sleeps."""
    parent = subprocess.Popen([sys.executable, "-c", textwrap.dedent(script)],
                              stdout=subprocess.PIPE, text=True,
                              cwd=tempfile.gettempdir())   # the installed package
    line = parent.stdout.readline()
    assert line.strip().isdigit(), f"the parent printed {line!r}"
    return parent, int(line)


def _kill_parent_and_check_the_worker_ends(parent: subprocess.Popen, worker: int) -> None:
    try:
        assert not _gone(worker)
        parent.send_signal(signal.SIGKILL)
        parent.wait()
        assert _wait_gone(worker), f"worker {worker} outlived its killed parent"
    finally:
        if not _gone(worker):
            os.kill(worker, signal.SIGKILL)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_pool_worker_ends_when_the_process_that_started_it_is_killed():
    parent, worker = _start_parent("""
        import os, time
        from boundcalc.validators.experiments.workers import worker_pool
        pool = worker_pool(1)
        print(pool.submit(os.getpid).result(), flush=True)
        time.sleep(120)
    """)
    _kill_parent_and_check_the_worker_ends(parent, worker)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_without_the_death_signal_the_watchdog_ends_the_worker():
    parent, worker = _start_parent("""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-c", '''
        import os, time
        from boundcalc.validators.experiments import workers
        workers._set_parent_death_signal = lambda: False     # the watchdog alone
        workers.die_with_parent(os.getppid())
        print(os.getpid(), flush=True)
        time.sleep(120)
        '''], stdout=subprocess.PIPE, text=True)
        print(child.stdout.readline().strip(), flush=True)
        time.sleep(120)
    """)
    _kill_parent_and_check_the_worker_ends(parent, worker)


def test_a_worker_whose_parent_is_already_gone_exits_before_any_work():
    out = subprocess.run(
        [sys.executable, "-c", "import os\n"
         "from boundcalc.validators.experiments.workers import die_with_parent\n"
         "die_with_parent(os.getppid() + 1_000_000)\n"       # not this process's parent
         "print('computed a cell')"],
        capture_output=True, text=True, timeout=DEADLINE_S)
    assert out.returncode == 1 and "computed a cell" not in out.stdout
