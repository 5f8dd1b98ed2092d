"""The engine adapters of :mod:`boundcalc.execution.executors`: Dask distributed and Slurm
(submitit).

Each adapter submits the tasks of a run and yields, as tasks finish, either the task's list of
``(key, record, where)`` (from :func:`boundcalc.execution.executors.execute_task`) or the exception
of a failed task. dask / distributed and submitit are imported only here, only when used (the extras
``boundcalc[dask]`` and ``boundcalc[slurm]``).

``BOUNDCALC_SLURM_CLUSTER=local`` makes the slurm engine use submitit's local executor: the same
code path (array submission, pickled tasks in separate processes, logs, result files) run on this
machine, as the tests do; ``debug`` runs the tasks in this process. A task on the driver's host
(the local executor) ends when its driver does, even one killed with SIGKILL
(:func:`boundcalc.execution.executors.watch_driver`); on a real cluster the tasks of a killed
driver run on and store their cells, which a re-run loads (``scancel`` stops them).

A Dask scheduler named by address that does not answer within :data:`CONNECT_S` seconds (nothing
listening, an unknown host, a malformed address) is refused naming ``--dask-address`` before the run
(:func:`boundcalc.inputs.environment.require_dask_scheduler`); one that stops answering during the
run fails it with the finished cells stored (:func:`dask_client`).
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor
from concurrent.futures import as_completed as finished_first
from pathlib import Path
from typing import Any

from boundcalc.execution.executors import (
    ExecutorSettings,
    Progress,
    driver_identity,
    execute_task,
    require_engine,
    require_extra,
    slurm_parameters,
    watch_driver,
)
from boundcalc.inputs.environment import CONNECT_S

__all__ = ["CONNECT_S", "NANNY_ENVIRON", "POLL_S", "SlurmTask", "TasksFailedError",
           "dashboard_line", "dask_client", "dask_results", "failure_text", "local_cluster",
           "process_results", "run_tasks", "slurm_results", "submitit_folder"]

#: Seconds between the slurm driver's looks at its jobs.
POLL_S = 1.0


def dask_client(address: str, timeout: float | None = None) -> Any:
    """A ``distributed.Client`` of the scheduler at ``address`` for a run. The CLI refused an
    address that does not answer before the run directory was opened
    (:func:`boundcalc.inputs.environment.require_dask_scheduler`); a scheduler that stops
    answering since is a :class:`TasksFailedError` (exit 1: the finished cells are stored, a
    rerun resumes)."""
    import asyncio

    timeout = CONNECT_S if timeout is None else timeout

    require_extra("dask")
    from distributed import Client

    try:
        return Client(address, timeout=timeout)
    except (ValueError, TypeError, OSError, asyncio.TimeoutError) as exc:
        raise TasksFailedError(f"the Dask scheduler at {address} did not answer within "
                               f"{timeout:g} s ({_flat(exc)}); the finished cells are stored, "
                               f"rerun to resume") from None


def _flat(exc: BaseException) -> str:
    """An exception's message on one line (its type when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__

Outcome = list[tuple[str, Any, dict[str, Any]]] | BaseException


def dask_results(fn: Callable[..., Any], tasks: Sequence[Any], context: dict[str, Any],
                 settings: ExecutorSettings, run_path: Path, name: str,
                 write: Callable[[str], None] | None = None) -> Iterator[Outcome]:
    """Run the tasks on a Dask scheduler (``settings.dask_address``, else
    ``DASK_SCHEDULER_ADDRESS``, else a ``LocalCluster`` of ``settings.jobs`` single-threaded
    worker processes, at most one per task, :func:`local_cluster`); the workers return the
    records, nothing is written by them. ``write`` gets one line with the dashboard's address
    (a scheduler's own; the local cluster's when ``settings.dask_dashboard`` turns it on, else
    that it is off and how to turn it on)."""
    require_extra("dask")
    from distributed import Client, LocalCluster, as_completed

    address = settings.dask_address or os.environ.get("DASK_SCHEDULER_ADDRESS")
    cluster = None
    if address:
        client = dask_client(address)
    else:
        cluster = local_cluster(LocalCluster, settings, len(tasks))
        client = Client(cluster)
    if write is not None:
        write(f"[{name}] {dashboard_line(client, bool(address) or settings.dask_dashboard)}")
    try:
        futures = [client.submit(execute_task, fn, task, context, None, pure=False,
                                 key=f"boundcalc-{name}-{task[0][0]}-{time.time_ns()}")
                   for task in tasks]
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # a failed task: reported, the others go on
                yield exc
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


#: The environment a Dask nanny gives its worker before starting it, as distributed ships it
#: (``distributed.nanny.pre-spawn-environ``): glibc's ``MALLOC_TRIM_THRESHOLD_`` and one OpenMP /
#: MKL / OpenBLAS thread. The local cluster's workers are started without it
#: (:func:`local_cluster`).
NANNY_ENVIRON = "distributed.nanny.pre-spawn-environ"


def local_cluster(make: Callable[..., Any], settings: ExecutorSettings,
                  tasks: int | None = None) -> Any:
    """The dask engine's ``LocalCluster`` (``make``): ``settings.jobs`` single-threaded worker
    processes, no more than there are ``tasks`` (a worker with nothing to do would only add its
    start-up, as the ``--jobs`` pool starts no idle worker), that start with this driver's
    environment, as the ``--jobs`` worker processes do, so that both run a cell the same way
    and as fast. Distributed's nannies otherwise set
    :data:`NANNY_ENVIRON` in a worker first; its ``MALLOC_TRIM_THRESHOLD_`` fixes glibc's mmap
    threshold, so that every large tensor torch allocates is mapped, faulted in and unmapped again
    (figure 1's teacher took three times as long, mostly in the kernel, and each training step
    more system time). The torch threads of a cell are the task's (the run's ``context``), on
    every engine.

    Example (``make`` sees the configuration the nannies read):
        >>> import dask
        >>> def make(**kwargs):
        ...     return kwargs["n_workers"], dask.config.get(NANNY_ENVIRON)
        >>> local_cluster(make, ExecutorSettings(kind="dask", jobs=2))
        (2, {})
        >>> local_cluster(make, ExecutorSettings(kind="dask", jobs=2), tasks=1)
        (1, {})
    """
    import dask

    workers = max(1, settings.jobs if tasks is None else min(settings.jobs, tasks))
    with dask.config.set({NANNY_ENVIRON: {}}):
        return make(n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=":0" if settings.dask_dashboard else None,
                    silence_logs=logging.ERROR)


def dashboard_line(client: Any, served: bool) -> str:
    """``Dask dashboard: http://…/status`` when ``served`` and the scheduler reports one, else
    why there is none (the local cluster's is off unless ``--dask-dashboard``).

    Example:
        >>> from types import SimpleNamespace
        >>> dashboard_line(SimpleNamespace(dashboard_link="http://h:8787/status"), True)
        'Dask dashboard: http://h:8787/status'
        >>> dashboard_line(None, False)
        'Dask dashboard: off (--dask-dashboard serves it)'
    """
    if not served:
        return "Dask dashboard: off (--dask-dashboard serves it)"
    try:
        link = client.dashboard_link
    except Exception:  # a scheduler without the dashboard service
        link = None
    return f"Dask dashboard: {link}" if link else "Dask dashboard: none (the scheduler serves none)"


class SlurmTask:
    """What each Slurm array task runs: :func:`~boundcalc.execution.executors.execute_task`, made
    checkpointable for submitit, so that a task that times out or is preempted is requeued with
    the same arguments; the requeued task loads the cells it already wrote and computes only the
    missing ones. Given its ``driver`` (:func:`~boundcalc.execution.executors.driver_identity`), a
    task ends when that driver is gone (:func:`~boundcalc.execution.executors.watch_driver`)."""

    def __init__(self, driver: dict[str, Any] | None = None):
        self.driver = driver

    def __call__(self, fn: Callable[..., Any], task: Sequence[Any], context: dict[str, Any],
                 store: str | None) -> list[tuple[str, Any, dict[str, Any]]]:
        if self.driver is not None and self.driver.get("pid") != os.getpid():
            watch_driver(self.driver)       # (the debug cluster runs tasks in the driver)
        return execute_task(fn, task, context, store)

    def checkpoint(self, *args: Any, **kwargs: Any) -> Any:
        """submitit's hook on timeout or preemption: resubmit this task unchanged."""
        from submitit.helpers import DelayedSubmission

        return DelayedSubmission(self, *args, **kwargs)


def submitit_folder(run_path: str | os.PathLike, cluster: str) -> Path:
    """Where submitit keeps a run's logs: ``<run>/submitit/%j`` on Slurm, one folder per job (the
    job id fills ``%j`` in); ``<run>/submitit`` on another submitit cluster (``local``), which
    would make a folder literally named ``%j`` (its file names still carry the job id).

    Example:
        >>> str(submitit_folder("run", "slurm")), str(submitit_folder("run", "local"))
        ('run/submitit/%j', 'run/submitit')
    """
    folder = Path(run_path) / "submitit"
    return folder / "%j" if cluster == "slurm" else folder


def slurm_results(fn: Callable[..., Any], tasks: Sequence[Any], context: dict[str, Any],
                  settings: ExecutorSettings, run_path: Path, name: str) -> Iterator[Outcome]:
    """Submit the tasks as one Slurm array job through submitit (logs in
    ``<run>/submitit/``); each task writes its cells into the run directory as it goes and skips
    those already there."""
    require_engine("slurm")
    import submitit

    cluster = os.environ.get("BOUNDCALC_SLURM_CLUSTER") or "slurm"
    executor = submitit.AutoExecutor(folder=submitit_folder(run_path, cluster), cluster=cluster)
    params = slurm_parameters(settings, name)
    if cluster != "slurm" and "slurm_setup" in params:
        params[f"{cluster}_setup"] = params["slurm_setup"]
    executor.update_parameters(**params)
    store = str(Path(run_path).resolve())
    n = len(tasks)
    jobs = executor.map_array(SlurmTask(driver_identity()), [fn] * n, list(tasks), [context] * n,
                              [store] * n)
    pending = list(jobs)
    try:
        while pending:
            finished = [job for job in pending if job.done()]
            for job in finished:
                pending.remove(job)
                try:
                    yield job.result()
                except Exception as exc:  # a failed task: reported, the others go on
                    yield exc
            if pending and not finished:
                time.sleep(POLL_S)
    except BaseException:
        for job in pending:   # the driver stops: so do its tasks
            with contextlib.suppress(Exception):
                job.cancel(check=False)
        raise


def process_results(fn: Callable[..., Any], tasks: Sequence[Any], context: dict[str, Any],
                    jobs: int, pool: Callable[[int], Executor] | None = None
                    ) -> Iterator[Outcome]:
    """Run the tasks on this machine: one after the other in this process (``jobs`` 1, or no
    ``pool``), else on ``pool(jobs)`` worker processes (``fn`` picklable), yielding each task's
    outcome as it finishes; the driver writes the records."""
    if jobs <= 1 or pool is None:
        for task in tasks:
            try:
                yield execute_task(fn, task, context)
            except Exception as exc:  # a failed task: reported, the others go on
                yield exc
        return
    with pool(jobs) as workers:
        submitted = [workers.submit(execute_task, fn, task, context) for task in tasks]
        for future in finished_first(submitted):
            try:
                yield future.result()
            except Exception as exc:
                yield exc


def run_tasks(run: Any, fn: Callable[..., Iterable[tuple[str, Any]]],
              tasks: Sequence[Sequence[tuple[str, Any]]], context: dict[str, Any],
              settings: ExecutorSettings, name: str, *, total: int,
              describe: Callable[[str, Any], str] | None = None,
              write: Callable[[str], None] | None = None,
              pool: Callable[[int], Executor] | None = None) -> dict[str, dict[str, Any]]:
    """Compute the cells of ``tasks`` (the missing ones of ``run``, :func:`tasks_of`) on
    ``settings``' engine (``processes``: :func:`process_results` with ``pool``); the driver saves
    each returned record atomically in ``run`` and prints a progress line. Returns where each
    cell was computed, by key. A failed task is reported and the others go on; then an error
    names the failures (a re-run computes only the cells still missing)."""
    progress = Progress(name, total, total - sum(len(t) for t in tasks), write)
    where: dict[str, dict[str, Any]] = {}
    failures = []
    if settings.kind == "dask":
        outcomes = dask_results(fn, tasks, context, settings, run.path, name, write)
    elif settings.kind == "slurm":
        outcomes = slurm_results(fn, tasks, context, settings, run.path, name)
    else:
        outcomes = process_results(fn, tasks, context, settings.jobs, pool)
    for outcome in outcomes:
        if isinstance(outcome, BaseException):
            failures.append(outcome)
            if write is not None:
                write(f"[{name}] a task failed: {failure_text(outcome)}")
            continue
        for key, record, meta in outcome:
            run.save_cell(key, record)
            where[key] = meta
            progress.cell(key, describe(key, record) if describe else "")
    if failures:
        logs = (f"; logs in {Path(run.path) / 'submitit'}" if settings.kind == "slurm" else "")
        raise TasksFailedError(f"{len(failures)} of {len(tasks)} {settings.kind} task(s) failed "
                               f"(first: {failure_text(failures[0])}){logs}; the finished cells "
                               f"are stored: re-run the same command to compute only the "
                               f"missing ones")
    return where


class TasksFailedError(RuntimeError):
    """Some tasks of a run failed (the others' cells are stored)."""


def failure_text(exc: BaseException) -> str:
    """One line for a failed task: the innermost ``SomeError: message`` line of a remote
    traceback (submitit, dask), else the exception's first line.

    Example:
        >>> failure_text(RuntimeError("failed with trace:" + chr(10) + "ValueError: bad cell"))
        'ValueError: bad cell'
        >>> failure_text(OSError("disk full"))
        'OSError: disk full'
    """
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit): ", line):
            return line
    return f"{type(exc).__name__}: {lines[0] if lines else ''}".rstrip(": ")
