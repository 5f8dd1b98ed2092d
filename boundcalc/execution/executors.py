"""Where the cells of a run are computed: this process and its workers, Dask, or Slurm.

``boundcalc reproduce`` and ``boundcalc validate`` cut a run into cells (a (seed, width) of
figure 1, a (statement, seed) of ``validate``, …). The ``processes`` executor (the default) is the
experiments' ``--jobs`` pool on this machine (``validate``: this process, one cell after the
other). The other two hand the cells to an engine the
researcher already runs (:mod:`boundcalc.execution.engines`, which imports dask or submitit only
then):

* ``dask``: a Dask distributed scheduler (``--dask-address HOST:PORT`` or
  ``DASK_SCHEDULER_ADDRESS``; with neither a ``LocalCluster`` of ``--jobs`` worker processes);
  workers return the cell records and this process (the *driver*) writes them, so no shared
  filesystem is needed;
* ``slurm``: one Slurm array task per cell (or per ``--cells-per-task`` cells) through submitit,
  whose logs go to ``submitit/`` in the run directory; a task also writes its cells into the run
  directory as it finishes them (Slurm clusters share a filesystem), so a requeued (timed out,
  preempted) or re-run task loads the cells already there and computes only the missing ones.

The contract for every engine: a **task** is a tuple of ``(key, cell)`` pairs; a picklable
top-level generator function ``fn(cells, context)`` yields ``(key, record)`` for each cell it is
given, in any process, with the same seeds and the same torch threads as ``--jobs 1`` (the
context says how many), so every engine writes the same numbers. :func:`execute_task` wraps it in
the worker and adds where each cell ran (host, pid, device, training backend); the driver saves
each record with the run directory's atomic write and prints one :class:`Progress` line with an
ETA per finished cell (:func:`boundcalc.execution.engines.run_tasks`).

One driver owns a run directory: :class:`RunLock` (``.lock`` in it, naming the owner's host and
pid) refuses a second live driver with a clear message and takes over a stale lock (its process
gone, or not refreshed for :data:`STALE_S` seconds when the owner is on another host). The
commands take it (:func:`owned`, which a process may nest) before they import torch, so a second
driver is refused at once; a folder the lock created and nothing filled is removed with it.

Workers end with their driver: a Slurm task on the driver's host (submitit's local executor)
watches the driver process (:func:`watch_driver`) and exits when it is gone, as Dask's local
workers and the ``processes`` pool do.

Nothing here imports torch, dask or submitit.

Example:
    >>> settings = ExecutorSettings(kind="slurm", slurm_partition="gpu", slurm_time=90)
    >>> slurm_parameters(settings, "figure1")["timeout_min"]
    90
    >>> tasks_of([("a", 1), ("b", 2), ("c", 3)], 2)
    [(('a', 1), ('b', 2)), (('c', 3),)]
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.inputs.environment import require_commands, require_modules, require_setting
from boundcalc.inputs.params import InputError

__all__ = ["EXTRAS", "LOCK_FILE", "PROC", "REFRESH_S", "SLURM_CLUSTERS",
           "SLURM_COMMANDS", "STALE_S", "TOGETHER_S", "WATCH_S", "Eta", "ExecutorSettings",
           "Progress", "RunLock", "RunLockedError", "cell_meta", "driver_gone", "driver_identity",
           "execute_task", "owned", "require_engine", "require_extra",
           "slurm_cluster", "slurm_parameters", "tasks_of", "watch_driver"]

#: The optional extra each engine needs, and the modules that prove it is installed.
EXTRAS = {"dask": ("dask", "distributed"), "slurm": ("submitit",)}
#: The lock file of a run directory.
LOCK_FILE = ".lock"
#: Seconds between the owner's refreshes of its lock, and after which an unrefreshed lock of
#: another host is stale.
REFRESH_S = 30.0
STALE_S = 300.0
#: submitit's clusters that ``BOUNDCALC_SLURM_CLUSTER`` may name for the slurm engine (``local``
#: and ``debug`` run the same code path on this machine, as the tests do).
SLURM_CLUSTERS = ("slurm", "local", "debug")
#: Slurm's commands that submitit submits an array job with and runs its tasks through.
SLURM_COMMANDS = ("sbatch", "srun")
#: Seconds between a task's looks at its driver (:func:`watch_driver`).
WATCH_S = 1.0
#: Where Linux shows its processes (their state and start time); elsewhere a task knows its
#: driver by pid alone.
PROC = Path("/proc")


@dataclass(frozen=True)
class ExecutorSettings:
    """The executor of a run and its settings (recorded in ``config.json``)."""

    kind: str = "processes"
    jobs: int = 1
    dask_address: str | None = None
    cells_per_task: int = 1
    slurm_partition: str | None = None
    slurm_time: int | None = None
    slurm_gpus_per_task: int | None = None
    slurm_cpus_per_task: int | None = None
    slurm_array_parallelism: int | None = None
    slurm_setup: tuple[str, ...] = field(default_factory=tuple)
    dask_dashboard: bool = False

    @property
    def engine(self) -> bool:
        """True for dask and slurm (the cells leave this machine's process pool)."""
        return self.kind != "processes"

    def as_dict(self) -> dict[str, Any]:
        """The settings that apply to this executor (None and empty ones left out)."""
        values = asdict(self)
        keep = {"kind", "jobs"} if self.kind == "processes" else {"kind", "cells_per_task"}
        prefix = {"dask": "dask_", "slurm": "slurm_"}.get(self.kind, "-")
        if self.kind == "dask":
            keep.add("jobs")
        if not self.dask_dashboard:
            del values["dask_dashboard"]
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in values.items()
                if (k in keep or k.startswith(prefix)) and v not in (None, ())}


def require_extra(kind: str) -> None:
    """InputError (``--executor``, exit 2) naming the extra to install when ``kind``'s engine is
    missing."""
    missing = []
    for module in EXTRAS.get(kind, ()):
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    require_modules("--executor", missing, kind, f"pip install 'boundcalc[{kind}]'")


def slurm_cluster() -> str:
    """submitit's cluster for the slurm engine: ``BOUNDCALC_SLURM_CLUSTER`` (one of
    :data:`SLURM_CLUSTERS`), else ``slurm``; another value is an InputError (``--executor``)."""
    cluster = os.environ.get("BOUNDCALC_SLURM_CLUSTER") or "slurm"
    return require_setting("--executor", "BOUNDCALC_SLURM_CLUSTER", cluster, SLURM_CLUSTERS,
                           "slurm")


def require_engine(kind: str) -> None:
    """InputError (``--executor``, exit 2) when ``kind``'s engine cannot run from here: its extra
    is not installed (:func:`require_extra`), or, for slurm on a real cluster, Slurm's
    :data:`SLURM_COMMANDS` are not on ``PATH`` (not a Slurm login node). Checked before any run
    directory is made, so a refused command leaves nothing behind."""
    require_extra(kind)
    if kind == "slurm" and slurm_cluster() == "slurm":
        missing = [command for command in SLURM_COMMANDS if shutil.which(command) is None]
        require_commands("--executor", missing, "slurm", "Slurm's",
                         "run on a Slurm cluster's login node, or choose --executor processes "
                         "or dask")


def slurm_parameters(settings: ExecutorSettings, name: str) -> dict[str, Any]:
    """The keyword arguments of submitit's ``AutoExecutor.update_parameters`` for these
    settings (the ``--slurm-*`` flags; generic names where submitit has them)."""
    params: dict[str, Any] = {"name": f"boundcalc-{name}"}
    if settings.slurm_partition:
        params["slurm_partition"] = settings.slurm_partition
    if settings.slurm_time is not None:
        params["timeout_min"] = int(settings.slurm_time)
    if settings.slurm_gpus_per_task is not None:
        params["slurm_gpus_per_task"] = int(settings.slurm_gpus_per_task)
    if settings.slurm_cpus_per_task is not None:
        params["cpus_per_task"] = int(settings.slurm_cpus_per_task)
    if settings.slurm_array_parallelism is not None:
        params["slurm_array_parallelism"] = int(settings.slurm_array_parallelism)
    if settings.slurm_setup:
        params["slurm_setup"] = list(settings.slurm_setup)
    return params


def tasks_of(cells: Sequence[tuple[str, Any]], per_task: int) -> list[tuple[tuple[str, Any], ...]]:
    """``cells`` cut into consecutive tasks of ``per_task`` cells (the last may be shorter)."""
    size = max(1, int(per_task))
    return [tuple(cells[i:i + size]) for i in range(0, len(cells), size)]


# --------------------------------------------------------------------------- in the worker


def cell_meta(context: dict[str, Any]) -> dict[str, Any]:
    """Where a cell was computed: host, pid, device and (where the CPU kernel of the training
    step was tried in this process) the training backend, ``kernel`` or ``torch``; where
    ``BOUNDCALC_TRITON=1`` asked for the GPU's Triton kernels, which were used, or why not."""
    meta: dict[str, Any] = {"host": socket.gethostname(), "pid": os.getpid(),
                            "device": context.get("device")}
    kernel = sys.modules.get("boundcalc.validators.kernel.cpu_kernel")
    report = kernel.backend_report() if kernel is not None else None
    if report:
        backends = sorted({str(v.get("backend", v)) if isinstance(v, dict) else str(v)
                           for v in report.values()})
        meta["backend"] = backends[0] if len(backends) == 1 else ",".join(backends)
    elif context.get("device") is not None:
        meta["backend"] = "torch"
    triton = sys.modules.get("boundcalc.validators.kernel.gpu_kernel")
    usage = triton.usage_report() if triton is not None else None
    if usage:               # BOUNDCALC_TRITON=1: which Triton kernels ran here, or why not
        meta["triton"] = usage
    return meta


def execute_task(fn: Callable[..., Iterable[tuple[str, Any]]], task: Sequence[tuple[str, Any]],
                 context: dict[str, Any], store: str | None = None
                 ) -> list[tuple[str, Any, dict[str, Any]]]:
    """Run ``fn`` on the cells of ``task`` in a worker; ``(key, record, where)`` per cell.

    With ``store`` (a run directory on a shared filesystem: the slurm engine) a cell already
    stored there, sound and computed with the run's parameters, is loaded, not computed (a
    requeued task computes only its missing cells), and each computed cell is written there
    atomically, with its parameters, as soon as it is done.
    """
    from boundcalc.runs.directory import save_cell_file, stored_cell

    results: list[tuple[str, Any, dict[str, Any]]] = []
    todo = []
    for key, cell in task:
        stored = stored_cell(store, key) if store else None
        if stored is not None:
            results.append((key, stored, {"loaded": True}))
            continue
        todo.append((key, cell))
    if todo:
        for key, record in fn(tuple(todo), context):
            if store:
                save_cell_file(store, key, record)
            results.append((key, record, cell_meta(context)))
    return results


def _process_state(pid: int) -> tuple[str, int] | None:
    """The state letter and start time (clock ticks since boot) of process ``pid`` from
    :data:`PROC`; None when there is no such process. Only where :data:`PROC` exists (Linux)."""
    try:
        text = (PROC / str(pid) / "stat").read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    fields = text.rpartition(")")[2].split()   # after the command name, which may hold spaces
    return fields[0], int(fields[19])


def driver_identity() -> dict[str, Any]:
    """This process as the driver of its tasks: host, pid and, on Linux, its start time (so that
    a task can tell its driver from a later process that got the same pid)."""
    pid = os.getpid()
    state = _process_state(pid) if PROC.is_dir() else None
    return {"host": socket.gethostname(), "pid": pid,
            "start": state[1] if state is not None else None}


def driver_gone(driver: dict[str, Any]) -> bool:
    """True when the driver process ``driver`` (:func:`driver_identity`) of a task on its host has
    ended: no such pid, a zombie, or a process started later under the same pid (without
    :data:`PROC`: no such pid). A driver on another host cannot be seen from here: False."""
    if driver.get("host") != socket.gethostname():
        return False
    pid = int(driver["pid"])
    if not PROC.is_dir():
        return not _alive(pid)
    state = _process_state(pid)
    if state is None or state[0] in ("Z", "X"):
        return True
    return driver.get("start") is not None and state[1] != driver["start"]


_WATCHED: set[int] = set()


def watch_driver(driver: dict[str, Any], interval: float = WATCH_S) -> None:
    """In a task: a daemon thread that ends this process (exit status 1, one line on stderr, in
    the task's log) once its driver is gone (:func:`driver_gone`), so that killing the driver,
    even with SIGKILL, ends its tasks on this host too; the cells they finished are stored. One
    watch per process."""
    if os.getpid() in _WATCHED:
        return
    _WATCHED.add(os.getpid())

    def watch() -> None:
        while not driver_gone(driver):
            time.sleep(interval)
        sys.stderr.write(f"boundcalc: the driver (host {driver.get('host')}, pid "
                         f"{driver.get('pid')}) is gone; this task ends with it\n")
        sys.stderr.flush()
        os._exit(1)

    threading.Thread(target=watch, daemon=True, name="boundcalc-driver-watch").start()


# --------------------------------------------------------------------------- in the driver


#: Seconds after the first finished cell within which the cells finished count as finished
#: with it (the widths of a seed trained together, the cells of one task, report at once).
TOGETHER_S = 1.0


class Eta:
    """The time left, from the cells finished since the first one: the clock starts when the
    first cell is done, so the start-up (imports, the CPU kernel's build, a cluster's workers,
    the first teacher) is not spread over the cells left. The cells finished within
    :data:`TOGETHER_S` of the first count as its batch: the clock starts at the last of them.

    Example:
        >>> times = iter([10.0, 30.0, 30.0, 50.0])
        >>> eta = Eta(clock=lambda: next(times))
        >>> eta.cell(); eta.text(3)
        'ETA after the next cell; 3 cell(s) left'
        >>> eta.cell(); eta.text(2)
        'ETA 40 s for the 2 cell(s) left'
        >>> eta.cell(); eta.text(0)
        'all cells done'
    """

    def __init__(self, clock: Callable[[], float] = time.perf_counter):
        self.clock = clock
        self.first: float | None = None
        self.start: float | None = None
        self.after = 0

    def cell(self) -> None:
        """One more cell finished now."""
        now = self.clock()
        if self.first is None:
            self.first = self.start = now
        elif self.after == 0 and now - self.first <= TOGETHER_S:
            self.start = now
        else:
            self.after += 1

    def text(self, left: int) -> str:
        """``ETA 40 s for the 4 cell(s) left``: the cells left times the mean interval between
        the cells finished after the first batch; ``all cells done`` at the end."""
        from boundcalc.execution.progress import duration

        if left <= 0:
            return "all cells done"
        if not self.after or self.start is None:
            return f"ETA after the next cell; {left} cell(s) left"
        per_cell = (self.clock() - self.start) / self.after
        return f"ETA {duration(left * per_cell)} for the {left} cell(s) left"


class Progress:
    """One line per finished cell on stderr, ``[name i/N] key: detail; ETA …``; the ETA
    (:class:`Eta`) starts at the first finished cell of this run (any engine)."""

    def __init__(self, name: str, total: int, done: int,
                 write: Callable[[str], None] | None = None,
                 clock: Callable[[], float] = time.perf_counter):
        self.name, self.total, self.done, self.computed = name, total, done, 0
        self.timing = Eta(clock)
        self.write = write

    def eta(self) -> str:
        return self.timing.text(self.total - self.done)

    def cell(self, key: str, detail: str = "") -> None:
        self.done, self.computed = self.done + 1, self.computed + 1
        self.timing.cell()
        if self.write is not None:
            text = f": {detail}" if detail else ""
            self.write(f"[{self.name} {self.done}/{self.total}] {key}{text}; {self.eta()}")


class RunLockedError(InputError):
    """A live driver owns the run directory (``--out``, exit 2)."""

    def __init__(self, message: str):
        super().__init__("--out", message)


def _alive(pid: int) -> bool:
    if pid <= 0:                     # no process (0 and below name process groups)
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, OverflowError):
        return False
    except PermissionError:
        return True
    return True


class RunLock:
    """``<run>/.lock``: this driver owns the run directory while the lock is held.

    The file holds the owner's host, pid and start time, and is refreshed every
    :data:`REFRESH_S` seconds. A lock whose owner is on this host and no longer running, or whose
    owner is on another host and has not refreshed it for :data:`STALE_S` seconds, is stale: it is
    taken over with a note on stderr. Otherwise :class:`RunLockedError` names the owner.

    The folders that :meth:`acquire` creates (the run directory and any missing parents) are
    removed by :meth:`release` when they are still empty: a command refused after taking the
    lock (bad input found later) leaves nothing behind.
    """

    def __init__(self, path: str | os.PathLike, refresh_s: float = REFRESH_S,
                 stale_s: float = STALE_S):
        self.folder = Path(path)
        self.file = self.folder / LOCK_FILE
        self.refresh_s, self.stale_s = refresh_s, stale_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._created: list[Path] = []
        self.owner = {"host": socket.gethostname(), "pid": os.getpid(),
                      "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    def _stale(self, holder: dict[str, Any], age: float) -> str | None:
        """Why the lock of ``holder`` is stale, or None while its owner may be alive."""
        if holder.get("host") == self.owner["host"]:
            pid = holder.get("pid")
            if not isinstance(pid, int) or not _alive(pid):
                return f"its process {pid} on this host is gone"
            return None
        if age > self.stale_s:
            return f"not refreshed for {age:.0f} s"
        return None

    def acquire(self) -> RunLock:
        self._created = [p for p in (self.folder, *self.folder.parents) if not p.exists()]
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            return self._take()
        except BaseException:
            self._remove_created()
            raise

    def _take(self) -> RunLock:
        """Create the lock file (taking over a stale one), or RunLockedError naming its owner."""
        text = json.dumps(self.owner) + "\n"
        for _ in range(5):
            try:
                fd = os.open(self.file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            except FileExistsError:
                try:
                    raw = self.file.read_text(encoding="utf-8")
                    age = time.time() - self.file.stat().st_mtime
                except FileNotFoundError:
                    continue
                try:
                    holder = json.loads(raw)
                    holder = holder if isinstance(holder, dict) else {}
                except (ValueError, RecursionError):   # damaged, or nested without end
                    holder = {}
                if not holder and age < 5:      # being written right now
                    time.sleep(0.2)
                    continue
                why = self._stale(holder, age) if holder else "it is unreadable"
                if why is None:
                    raise RunLockedError(
                        f"run directory {self.folder} is in use by the driver on host "
                        f"{holder.get('host')}, pid {holder.get('pid')} (since "
                        f"{holder.get('started_utc')}); one driver owns a run directory: wait "
                        f"for it to finish, stop it, or choose another --out") from None
                sys.stderr.write(f"note: taking over the stale lock {self.file} of host "
                                 f"{holder.get('host')}, pid {holder.get('pid')} ({why})\n")
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(self.file)
                continue
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            self._thread = threading.Thread(target=self._refresh, daemon=True,
                                            name="boundcalc-run-lock")
            self._thread.start()
            return self
        raise RunLockedError(f"cannot take the lock {self.file}; try again")

    def _refresh(self) -> None:
        while not self._stop.wait(self.refresh_s):
            with contextlib.suppress(OSError):
                os.utime(self.file)

    def release(self) -> None:
        self._stop.set()
        with contextlib.suppress(OSError, ValueError, RecursionError, AttributeError):
            holder = json.loads(self.file.read_text(encoding="utf-8"))
            if holder.get("pid") == self.owner["pid"] and holder.get("host") == self.owner["host"]:
                os.unlink(self.file)
        self._remove_created()

    def _remove_created(self) -> None:
        """Remove the folders :meth:`acquire` created while they are empty (deepest first)."""
        for folder in self._created:
            try:
                folder.rmdir()
            except OSError:     # filled (the run wrote into it), or already gone
                break
        self._created = []

    def __enter__(self) -> RunLock:
        return self.acquire()

    def __exit__(self, *exc: object) -> None:
        self.release()


#: The run directories whose lock this process holds (through :func:`owned`), by resolved path.
_OWNED: dict[Path, RunLock] = {}


@contextlib.contextmanager
def owned(path: str | os.PathLike) -> Iterator[RunLock]:
    """The run directory ``path``, locked by this driver for the duration of the block.

    Blocks may nest in one process: an inner block on a run directory this process already
    holds uses that lock (the CLI takes it before importing torch, the experiment's code again
    around its run), and only the outermost block releases it.
    """
    key = Path(path).resolve()
    held = _OWNED.get(key)
    if held is not None and held.owner["pid"] == os.getpid():
        yield held
        return
    lock = RunLock(path)
    try:
        lock.acquire()
    except OSError as exc:
        from boundcalc.runs.directory import RunDirectoryError

        raise RunDirectoryError(f"cannot write the run directory {path} "
                                f"({exc.strerror or exc}); choose a writable --out") from None
    _OWNED[key] = lock
    try:
        yield lock
    finally:
        _OWNED.pop(key, None)
        lock.release()
