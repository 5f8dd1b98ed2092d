"""Run directories: where every validation or experiment run leaves its evidence.

A run directory holds

* ``config.json`` — every parameter, the seeds, package versions, device and the command line;
* ``cells/<key>.json`` — one finished unit of work (a (statement, seed, width) cell, say), written
  atomically, so an interrupted run loses nothing already computed and a re-run skips it;
* ``results.json`` / ``results.csv`` — the collected records, rewritten atomically at the end.

Every write goes to a temporary file in the same directory and is moved into place with
:func:`os.replace`, which is atomic on POSIX: a reader (or a killed run) never sees half a file.
Nothing here imports torch; :func:`environment` reports torch's version only if it is loaded.

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

from boundcalc import __version__

_KEY = re.compile(r"^[A-Za-z0-9_.=,+-]+$")


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically (temp file in the same folder, fsync, os.replace)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


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
    """Versions and machine facts recorded in every ``config.json``."""
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
    torch = sys.modules.get("torch")
    if torch is not None:
        env["torch"] = torch.__version__
        env["cuda_available"] = bool(torch.cuda.is_available())
        if device is not None and str(device).startswith("cuda") and torch.cuda.is_available():
            env["device_name"] = torch.cuda.get_device_name()
        env["torch_threads"] = torch.get_num_threads()
    if device is not None:
        env["device"] = str(device)
    return env


class RunDirectory:
    """A folder of one run: config, atomically written cells, collected results.

    Args:
        path: the folder (created if missing).
        config: every parameter of the run; stored with :func:`environment` in ``config.json``.
            When the folder already holds a config, the parameters must agree (a resumed run must
            be the same run) — otherwise ``ValueError`` names the differing keys.
        device: recorded in the environment.
    """

    def __init__(self, path: str | os.PathLike, config: Mapping[str, Any],
                 device: str | None = None):
        self.path = Path(path)
        self.path.mkdir(parents=True, exist_ok=True)
        self.cells = self.path / "cells"
        self.cells.mkdir(exist_ok=True)
        params = _jsonable(dict(config))
        config_file = self.path / "config.json"
        if config_file.exists():
            previous = json.loads(config_file.read_text(encoding="utf-8")).get("parameters", {})
            differing = sorted(k for k in set(previous) | set(params)
                               if previous.get(k) != params.get(k))
            if differing:
                raise ValueError(
                    f"run directory {self.path} holds a run with other parameters "
                    f"({', '.join(differing)}); choose another --out"
                )
        else:
            atomic_write_text(config_file, dumps({"parameters": params,
                                                  "environment": environment(device)}))
        self.config = params

    def _cell_path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"`key` must match {_KEY.pattern}, got {key!r}")
        return self.cells / f"{key}.json"

    def has_cell(self, key: str) -> bool:
        """True when cell ``key`` was finished (by this run or an interrupted earlier one)."""
        return self._cell_path(key).exists()

    def save_cell(self, key: str, record: Any) -> None:
        """Store one finished cell atomically."""
        atomic_write_text(self._cell_path(key), dumps(record))

    def load_cell(self, key: str) -> Any:
        """Read back a finished cell."""
        return json.loads(self._cell_path(key).read_text(encoding="utf-8"))

    def write_results(self, records: list[Mapping[str, Any]], stem: str = "results") -> None:
        """Write ``<stem>.json`` and ``<stem>.csv`` atomically."""
        atomic_write_text(self.path / f"{stem}.json", dumps(records))
        atomic_write_text(self.path / f"{stem}.csv", records_to_csv(records))


__all__ = ["RunDirectory", "atomic_write_text", "dumps", "environment", "records_to_csv"]
