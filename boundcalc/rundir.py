"""Run directories: where every validation or experiment run leaves its evidence.

A run directory holds

* ``config.json`` — every parameter, the seeds, the version of every installed package, the git
  commit when run from a checkout, device and the command line; after each invocation, its
  executor and where each cell it computed ran (host, device, training backend);
* ``cells/<key>.json`` — one finished unit of work (a (statement, seed, width) cell, say), written
  atomically, so an interrupted run loses nothing already computed and a re-run skips it;
* ``results.json`` / ``results.csv`` — the collected records, rewritten atomically at the end.

Every write goes through :func:`boundcalc.files.write_atomic`: a temporary file in the same
directory, moved into place with :func:`os.replace` (atomic on POSIX), so a reader (or a killed
run) never sees half a file. Written files get the permissions of a plain ``open``: 0o666 less the
process umask (0644 under umask 022), so collaborators sharing a run directory can read it.
Nothing here imports torch; :func:`environment` reports torch's version only if it is loaded.

Damage is healed, not fatal: a cell file that is empty, truncated, not JSON, ``{}`` / ``[]`` or
lacks a field its experiment needs is moved to ``cells/corrupt/`` with a warning on stderr naming
it, and counts as not done (so the run recomputes it). A damaged ``config.json`` cannot be
rebuilt safely (it is what says which run the cells belong to): :class:`RunDirectoryError`
(an :class:`~boundcalc.params.InputError` of ``--out``, exit 2) names the file and what to do.

Example:
    >>> import tempfile
    >>> run = RunDirectory(tempfile.mkdtemp(), config={"m": 16})
    >>> run.save_cell("lemma2-seed0", {"measured": 1.0})
    >>> run.load_cell("lemma2-seed0")
    {'measured': 1.0}
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import platform
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from boundcalc.files import write_atomic
from boundcalc.params import InputError
from boundcalc.version import __version__

_KEY = re.compile(r"^[A-Za-z0-9_.=,+-]+$")

#: Sub-folder of ``cells/`` where damaged cell files are moved.
CORRUPT = "corrupt"


class RunDirectoryError(InputError):
    """A run directory that cannot be used as it is; the flag is ``--out`` (exit 2 in the CLI)."""

    def __init__(self, message: str):
        super().__init__("--out", message)


def _jsonable(value: Any) -> Any:
    """Make floats JSON-safe (non-finite → string) and unwrap numpy / torch scalars."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()
        except (ValueError, RuntimeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def dumps(data: Any) -> str:
    """Stable, human-readable JSON (sorted keys off: insertion order is the reading order)."""
    return json.dumps(_jsonable(data), indent=2, ensure_ascii=False) + "\n"


def records_to_csv(records: Iterable[Mapping[str, Any]]) -> str:
    """CSV text with the union of the records' keys as columns (first-seen order)."""
    rows = [dict(_jsonable(r)) for r in records]
    columns: list[str] = []
    for row in rows:
        for key in row:
            if key not in columns:
                columns.append(key)
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: (json.dumps(v) if isinstance(v, (dict, list)) else v)
                         for k, v in row.items()})
    return out.getvalue()


def environment(device: str | None = None) -> dict[str, Any]:
    """Versions and machine facts recorded in every ``config.json``; where the CPU kernel of
    the training step was tried in this process, ``cpu_kernel`` says per (d, dtype) which backend
    runs (``kernel`` or ``torch``) and why torch
    (:func:`boundcalc.validators.kernel.cpu_kernel.backend_report`)."""
    env: dict[str, Any] = {
        "boundcalc": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "argv": list(sys.argv),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    for name in ("numpy", "sympy", "mpmath", "pandas"):
        module = sys.modules.get(name)
        if module is not None:
            env[name] = getattr(module, "__version__", "?")
    commit = git_commit()
    if commit is not None:
        env["git_commit"] = commit
    env["packages"] = package_versions()
    torch = sys.modules.get("torch")
    if torch is not None:
        env["torch"] = torch.__version__
        env["cuda_available"] = bool(torch.cuda.is_available())
        if device is not None and str(device).startswith("cuda") and torch.cuda.is_available():
            env["device_name"] = torch.cuda.get_device_name()
        env["torch_threads"] = torch.get_num_threads()
    if device is not None:
        env["device"] = str(device)
    kernel = sys.modules.get("boundcalc.validators.kernel.cpu_kernel")
    if kernel is not None:  # which backend the CPU training step uses, and why (if torch)
        report = kernel.backend_report()
        if report:
            env["cpu_kernel"] = report
    return env


def git_commit() -> str | None:
    """The commit of the checkout boundcalc runs from (``+dirty`` with uncommitted changes to
    tracked files), or None when it is not run from a git checkout."""
    import subprocess

    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        return None
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+dirty" if dirty else head or None


def package_versions() -> dict[str, str]:
    """Every installed distribution and its version, by name (sorted)."""
    from importlib import metadata

    found: dict[str, str] = {}
    for dist in metadata.distributions():
        name = dist.metadata["Name"] if dist.metadata else None
        if name:
            found.setdefault(str(name), str(dist.version))
    return dict(sorted(found.items(), key=lambda kv: kv[0].lower()))


def cell_problem(text: str, required: Iterable[str] = ()) -> str | None:
    """Why the text of a cell file is not a finished cell, or None when it is one.

    A cell is a non-empty JSON object, or a non-empty list of non-empty objects (a ``validate``
    cell: one record per measurement), holding every key of ``required`` (each record does).

    Example:
        >>> cell_problem('{"m": 8}', ("m",)) is None, cell_problem("{}"), cell_problem("{}", ("m",))
        (True, 'an empty JSON object', 'an empty JSON object')
        >>> cell_problem('{"m": 8', ("m",))[:30], cell_problem('[{"x": 1}]', ("m",))
        ('not valid JSON (truncated?): E', 'lacks m')
    """
    if not text.strip():
        return "an empty file"
    try:
        data = json.loads(text)
    except ValueError as exc:
        return f"not valid JSON (truncated?): {exc}"
    if isinstance(data, dict):
        records = [data]
        if not data:
            return "an empty JSON object"
    elif isinstance(data, list):
        if not data:
            return "an empty JSON list"
        records = data
        if not all(isinstance(r, dict) and r for r in records):
            return "a list whose items are not all non-empty JSON objects"
    else:
        return f"a JSON {type(data).__name__}, not an object"
    missing = sorted({k for r in records for k in required if k not in r})
    if missing:
        return f"lacks {', '.join(missing)}"
    return None


def _aside(path: Path, folder: Path) -> Path:
    """Move ``path`` into ``folder`` under a name not yet taken there; returns the new path."""
    folder.mkdir(exist_ok=True)
    target, i = folder / path.name, 1
    while target.exists():
        target, i = folder / f"{path.name}.{i}", i + 1
    os.replace(path, target)
    return target


class RunDirectory:
    """A folder of one run: config, atomically written cells, collected results.

    Args:
        path: the folder (created if missing).
        config: every parameter of the run; stored with :func:`environment` in ``config.json``.
            When the folder already holds a config, the parameters must agree (a resumed run must
            be the same run) — otherwise :class:`RunDirectoryError` (a ``ValueError``) names the
            differing keys with both values.
        device: recorded in the environment.

    Raises:
        RunDirectoryError: the folder cannot be created or written (``--out``, exit 2), it holds
            a run with other parameters, or ``config.json`` exists but is damaged (empty,
            truncated, not an object with ``parameters``) or unreadable; the message names the
            file and what to do.
    """

    def __init__(self, path: str | os.PathLike, config: Mapping[str, Any],
                 device: str | None = None):
        self.path = Path(path)
        self.cells = self.path / "cells"
        params = _jsonable(dict(config))
        config_file = self.path / "config.json"
        try:
            self.path.mkdir(parents=True, exist_ok=True)
            self.cells.mkdir(exist_ok=True)
            if config_file.exists():
                previous = self._read_config(config_file)
                differing = sorted(k for k in set(previous) | set(params)
                                   if previous.get(k) != params.get(k))
                if differing:
                    shown = "; ".join(f"{k}: {previous.get(k, '(unset)')!r} there, "
                                      f"{params.get(k, '(unset)')!r} now" for k in differing)
                    raise RunDirectoryError(
                        f"run directory {self.path} holds a run with other parameters "
                        f"({shown}); choose another --out")
                self._probe_writable()
            else:
                write_atomic(config_file, dumps({"parameters": params,
                                                      "environment": environment(device)}))
        except OSError as exc:
            raise RunDirectoryError(
                f"cannot write the run directory {self.path} "
                f"({exc.strerror or exc}); choose a writable --out") from None
        self.config = params

    def _probe_writable(self) -> None:
        """Create and remove a temporary file in ``cells/`` (OSError when it cannot)."""
        fd, tmp = tempfile.mkstemp(prefix=".probe.", suffix=".tmp", dir=self.cells)
        os.close(fd)
        os.unlink(tmp)

    @staticmethod
    def _read_config(config_file: Path) -> dict[str, Any]:
        """The ``parameters`` of an existing config.json, or :class:`RunDirectoryError`."""
        try:
            text = config_file.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise RunDirectoryError(f"cannot read {config_file} "
                                    f"({getattr(exc, 'strerror', None) or exc})") from None
        problem = None
        try:
            data = json.loads(text)
        except ValueError as exc:
            problem = "empty" if not text.strip() else f"not valid JSON, truncated? ({exc})"
        else:
            if not isinstance(data, dict) or not isinstance(data.get("parameters"), dict):
                problem = "no 'parameters' object"
        if problem is None:
            return data["parameters"]
        raise RunDirectoryError(
            f"{config_file} is damaged ({problem}); it says which run the cells in "
            f"{config_file.parent} belong to, so it is not rebuilt: move it aside to reuse those "
            f"cells with this command's parameters, or choose another --out")

    def _cell_path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"`key` must match {_KEY.pattern}, got {key!r}")
        return self.cells / f"{key}.json"

    def has_cell(self, key: str, required: Iterable[str] = ()) -> bool:
        """True when cell ``key`` was finished (by this run or an interrupted earlier one).

        A damaged cell file (:func:`cell_problem`, with the keys ``required`` of each record) is
        moved to ``cells/corrupt/`` with a warning on stderr naming it, and counts as not
        finished, so the run computes it again.
        """
        path = self._cell_path(key)
        if not path.exists():
            return False
        try:
            problem = cell_problem(path.read_text(encoding="utf-8"), tuple(required))
        except (OSError, UnicodeDecodeError) as exc:
            problem = f"unreadable: {getattr(exc, 'strerror', None) or exc}"
        if problem is None:
            return True
        try:
            moved = f"moved to {_aside(path, self.cells / CORRUPT)}"
        except FileNotFoundError:  # moved by another process meanwhile
            return self.has_cell(key, required) if path.exists() else False
        except OSError as exc:
            raise RunDirectoryError(f"damaged cell {path} ({problem}) cannot be moved aside "
                                    f"({exc.strerror or exc}); delete it") from None
        sys.stderr.write(f"warning: damaged cell {path} ({problem}); {moved}; "
                         f"computing it again\n")
        sys.stderr.flush()
        return False

    def save_cell(self, key: str, record: Any) -> None:
        """Store one finished cell atomically."""
        write_atomic(self._cell_path(key), dumps(record))

    def load_cell(self, key: str) -> Any:
        """Read back a finished cell (check it with :meth:`has_cell` first)."""
        return json.loads(self._cell_path(key).read_text(encoding="utf-8"))

    def record_execution(self, executor: Mapping[str, Any],
                         cells: Mapping[str, Mapping[str, Any]]) -> None:
        """Add to ``config.json`` the executor of this invocation and where each cell it
        computed ran (host, device, training backend); cells of earlier invocations keep their
        entries. The parameters are untouched."""
        config_file = self.path / "config.json"
        data = json.loads(config_file.read_text(encoding="utf-8"))
        execution = data.get("execution") if isinstance(data.get("execution"), dict) else {}
        runs = list(execution.get("invocations", []))
        runs.append({"executor": dict(executor), "host": platform.node(),
                     "finished_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                     "cells_computed": len(cells)})
        where = dict(execution.get("cells", {}))
        where.update({k: dict(v) for k, v in cells.items()})
        data["execution"] = {"executor": dict(executor), "invocations": runs, "cells": where}
        write_atomic(config_file, dumps(data))

    def write_results(self, records: list[Mapping[str, Any]], stem: str = "results") -> None:
        """Write ``<stem>.json`` and ``<stem>.csv`` atomically."""
        write_atomic(self.path / f"{stem}.json", dumps(records))
        write_atomic(self.path / f"{stem}.csv", records_to_csv(records))


__all__ = ["CORRUPT", "RunDirectory", "RunDirectoryError", "cell_problem", "dumps", "environment",
           "git_commit", "package_versions", "records_to_csv"]
