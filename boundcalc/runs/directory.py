"""Run directories: where every validation or experiment run leaves its evidence.

A run directory holds

* ``config.json`` — every parameter, the seeds, the version of every installed package, the git
  commit when run from a checkout, device and the command line; after each invocation, its
  executor and where each cell it computed ran (host, device, training backend);
* ``cells/<key>.json`` — one finished unit of work (a (statement, seed, width) cell, say), written
  atomically, so an interrupted run loses nothing already computed and a re-run skips it; each
  record of a cell keeps, under ``computed_with``, the parameters it was computed with (the run's,
  less those that only list its cells: :func:`cell_parameters`), so a cell is never reused by a
  run with other parameters, even when ``config.json`` is gone;
* ``results.json`` / ``results.csv`` — the collected records, rewritten atomically at the end.

Every write goes through :func:`boundcalc.files.write_atomic`: a temporary file in the same
directory, moved into place with :func:`os.replace` (atomic on POSIX), so a reader (or a killed
run) never sees half a file. Written files get the permissions of a plain ``open``: 0o666 less the
process umask (0644 under umask 022), so collaborators sharing a run directory can read it.
Nothing here imports torch; :func:`environment` reports torch's version only if it is loaded.

Damage is healed, not fatal: a cell file that is empty, truncated, not JSON, ``{}`` / ``[]``,
lacks a field its experiment needs, holds NaN (or inf) where a finite number belongs, names
another cell than its file name (another seed or width), or records other parameters than the
run's is moved to ``cells/corrupt/`` with a warning on stderr naming it, and counts as not done
(so the run recomputes it). A damaged ``config.json`` cannot be rebuilt safely (it is what says
which run the cells belong to): :class:`RunDirectoryError` (an
:class:`~boundcalc.inputs.params.InputError` of ``--out``, exit 2) names the file and what to do.
When ``config.json`` is missing, the cells are the run's only record: a cell whose recorded
parameters differ from the command's is refused (:class:`RunDirectoryError` naming the flag that
differs, before anything is written), and a cell that records none (written before cells
recorded their parameters) is moved aside and computed again, since nothing says what it was
computed with; with ``config.json`` present and matching, such a cell is trusted.

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
from boundcalc.inputs.params import InputError
from boundcalc.runs.records import (
    MAX_CONFIG_BYTES,
    RecordError,
    parse_json,
    read_stored,
    record_problem,
    writable_problem,
)
from boundcalc.version import __version__

_KEY = re.compile(r"^[A-Za-z0-9_.=,+-]+$")

#: Sub-folder of ``cells/`` where damaged cell files are moved.
CORRUPT = "corrupt"


#: Key under which every record of a stored cell keeps the parameters it was computed with.
COMPUTED_WITH = "computed_with"

#: Parameters that only list which cells a run has (its seeds, widths, lengths, lags, sizes,
#: statements), not how one is computed: a cell's record leaves them out, so that the cells of
#: runs that split the seeds between machines can be gathered into one run.
CELL_LIST_PARAMETERS = frozenset({"seeds", "widths", "Ts", "lags", "dms", "Ns", "statements"})

#: Flags of ``reproduce`` that set the run parameter of that name; ``--set NAME`` (or the preset)
#: sets the others.
_REPRODUCE_FLAGS = {"dtype": "--dtype", "lin_align": "--lin-align", "device": "--device",
                    "data": "--data", "preset": "--preset", "experiment": "EXPERIMENT"}
_UNSET = "(unset)"


class RunDirectoryError(InputError):
    """A run directory that cannot be used as it is; the flag is ``--out`` unless another one
    is named (exit 2 in the CLI)."""

    def __init__(self, message: str, flag: str = "--out"):
        super().__init__(flag, message)


def jsonable(value: Any) -> Any:
    """``value`` as plain JSON data: mappings (keys as text) and sequences walked, numpy / torch
    scalars unwrapped, non-finite floats as text (``json`` would write ``NaN``, which is not
    JSON); what every JSON file and JSON output of a run is written from.

    >>> jsonable({"ratio": float("inf"), 1: (0.5, float("nan"))})
    {'ratio': 'inf', '1': [0.5, 'nan']}
    """
    if isinstance(value, Mapping):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if hasattr(value, "item") and callable(value.item):
        try:
            value = value.item()
        except (ValueError, RuntimeError):
            return str(value)
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def dumps(data: Any) -> str:
    """Stable, human-readable, standard JSON (sorted keys off: insertion order is the reading
    order; never a ``NaN`` literal: :func:`jsonable` first, and ``allow_nan=False``)."""
    return json.dumps(jsonable(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def records_to_csv(records: Iterable[Mapping[str, Any]]) -> str:
    """CSV text with the union of the records' keys as columns (first-seen order)."""
    rows = [dict(jsonable(r)) for r in records]
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


#: Environment variables that choose how the training step is organised (the same sums, another
#: rounding); ``config.json`` records those that are set, under ``environment.switches``.
ORGANISATION_SWITCHES = ("BOUNDCALC_CPU_KERNEL", "BOUNDCALC_KERNEL_VECTOR_BYTES",
                         "BOUNDCALC_CUDA_GRAPHS", "BOUNDCALC_TOKEN_MOMENTS", "BOUNDCALC_TRITON")


def environment(device: str | None = None) -> dict[str, Any]:
    """Versions and machine facts recorded in every ``config.json``; the organisation switches
    that are set (:data:`ORGANISATION_SWITCHES`); where the CPU kernel of the training step was
    tried in this process, ``cpu_kernel`` says per (d, dtype) which backend runs (``kernel`` or
    ``torch``) and why torch (:func:`boundcalc.validators.kernel.cpu_kernel.backend_report`)."""
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
    switches = {name: os.environ[name] for name in ORGANISATION_SWITCHES if name in os.environ}
    if switches:            # set switches of how the training step is organised (not its math)
        env["switches"] = switches
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


def cell_problem(text: str, required: Iterable[str] = (),
                 identity: Mapping[str, Any] | None = None,
                 finite: Iterable[str] = (), kind: str | None = None,
                 params: Mapping[str, Any] | None = None) -> str | None:
    """Why the text of a cell file is not a finished cell, or None when it is one.

    A cell is bounded, standard JSON (:func:`boundcalc.runs.records.parse_json`: size, nesting
    depth, no NaN literal): a non-empty JSON object, or a non-empty list of non-empty objects (a
    ``validate`` cell: one record per measurement), holding every key of ``required`` (each
    record does); every record names the cell its file name says (``identity``: key → value,
    e.g. the seed and width of ``m8-seed1``), the fields of ``finite`` it holds are finite
    numbers (a NaN there would pass into every mean and interval computed from the cell), and
    each record of an experiment ``kind`` holds what its schema says, equal to the run's
    ``params`` where a field names one (:func:`boundcalc.runs.records.record_problem`).

    Example:
        >>> cell_problem('{"m": 8}', ("m",)) is None, cell_problem("{}"), cell_problem("{}", ("m",))
        (True, 'an empty JSON object', 'an empty JSON object')
        >>> cell_problem('{"m": 8', ("m",))[:30], cell_problem('[{"x": 1}]', ("m",))
        ('not valid JSON (truncated?): E', 'lacks m')
        >>> cell_problem('{"m": 16}', identity={"m": 8}), cell_problem('{"e": "nan"}', finite=["e"])
        ('names m 16, its file name m 8', "holds e 'nan', not a finite number")
    """
    if not text.strip():
        return "an empty file"
    data, problem = parse_json(text)
    if problem is not None:
        return problem
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
    for record in records:
        for key, value in (identity or {}).items():
            if record.get(key, _UNSET) != value:
                return f"names {key} {record.get(key, _UNSET)}, its file name {key} {value}"
        for key in finite:
            value = record.get(key, 0.0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) \
                    or not math.isfinite(value):
                return f"holds {key} {value!r}, not a finite number"
        problem = record_problem(kind, record, params)
        if problem is not None:
            return problem
    return None


def cell_parameters(parameters: Mapping[str, Any]) -> dict[str, Any]:
    """What a cell of a run with ``parameters`` records as computed with: every parameter but
    those that only list the run's cells (:data:`CELL_LIST_PARAMETERS`, also inside a nested
    settings object), as stored in JSON.

    Example:
        >>> cell_parameters({"widths": (8, 16), "seeds": [1], "dtype": "float64", "rho": (3, 3)})
        {'dtype': 'float64', 'rho': [3, 3]}
    """
    out: dict[str, Any] = {}
    for key, value in jsonable(dict(parameters)).items():
        if key in CELL_LIST_PARAMETERS:
            continue
        if isinstance(value, dict):
            value = {k: v for k, v in value.items() if k not in CELL_LIST_PARAMETERS}
        out[key] = value
    return out


def with_parameters(record: Any, parameters: Mapping[str, Any]) -> Any:
    """``record`` (a cell: an object, or a list of them) with ``parameters`` under
    :data:`COMPUTED_WITH` in each object."""
    if isinstance(record, Mapping):
        return {**record, COMPUTED_WITH: dict(parameters)}
    if isinstance(record, list):
        return [with_parameters(r, parameters) for r in record]
    return record


def without_parameters(record: Any) -> Any:
    """``record`` as computed: :data:`COMPUTED_WITH` taken out of each object."""
    if isinstance(record, Mapping):
        return {k: v for k, v in record.items() if k != COMPUTED_WITH}
    if isinstance(record, list):
        return [without_parameters(r) for r in record]
    return record


def _recorded(data: Any) -> list[Any]:
    """The :data:`COMPUTED_WITH` of each object of a parsed cell (None where it has none)."""
    records = data if isinstance(data, list) else [data]
    return [r.get(COMPUTED_WITH) for r in records if isinstance(r, dict)]


def parameter_differences(there: Mapping[str, Any], here: Mapping[str, Any]
                          ) -> list[tuple[str, Any, Any]]:
    """``(name, value there, value here)`` for every parameter that differs, ``a.b`` for a
    field ``b`` of a nested settings object ``a``; a missing one is ``(unset)``.

    Example:
        >>> parameter_differences({"dtype": "float64", "g": {"lr": 1}}, {"dtype": "float32",
        ...                                                               "g": {"lr": 2}})
        [('dtype', 'float64', 'float32'), ('g.lr', 1, 2)]
    """
    out: list[tuple[str, Any, Any]] = []
    for key in dict.fromkeys([*there, *here]):
        a, b = there.get(key, _UNSET), here.get(key, _UNSET)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [(f"{key}.{k}", x, y) for k, x, y in parameter_differences(a, b)]
        else:
            out.append((key, a, b))
    return out


def parameters_problem(data: Any, parameters: Mapping[str, Any]) -> str | None:
    """Why a parsed cell does not belong to a run whose cells are computed with ``parameters``
    (:func:`cell_parameters`): it records other ones. None when it records these, or none."""
    for recorded in _recorded(data):
        if recorded is None:
            continue
        if not isinstance(recorded, dict):
            return f"records its parameters as {type(recorded).__name__}, not an object"
        differing = parameter_differences(recorded, parameters)
        if differing:
            shown = "; ".join(f"{k} {a!r} in the cell, {b!r} in the run"
                              for k, a, b in differing[:3])
            more = f"; and {len(differing) - 3} more" if len(differing) > 3 else ""
            return f"computed with other parameters than the run's ({shown}{more})"
    return None


def parameter_flag(name: str, parameters: Mapping[str, Any]) -> str:
    """The command-line flag that sets parameter ``name`` (``a.b``: field ``b`` of the nested
    settings ``a``) of a run with ``parameters``: for ``reproduce`` runs (they record their
    ``experiment``) ``--dtype``, ``--lin-align``, ``--device``, ``--data``, ``--preset`` or
    ``--set NAME`` for any other field of the experiment's config (which the preset sets unless
    overridden); for ``validate`` runs the flag of that name.

    Example:
        >>> parameter_flag("steps", {"experiment": "figure1"}), parameter_flag("rate_seeds", {})
        ('--set steps', '--rate-seeds')
    """
    if "experiment" in parameters:
        return _REPRODUCE_FLAGS.get(name, f"--set {name}")
    last = name.rsplit(".", 1)[-1]
    return "--dm" if last == "d_m" else "--" + last.replace("_", "-")


def _read_parameters(run_path: Path) -> dict[str, Any] | None:
    """The ``parameters`` of the run's config.json, or None when it is missing or damaged."""
    text, _ = read_stored(run_path / "config.json", MAX_CONFIG_BYTES)
    data, problem = parse_json(text or "", MAX_CONFIG_BYTES)
    if problem is not None:
        return None
    params = data.get("parameters") if isinstance(data, dict) else None
    return params if isinstance(params, dict) else None


def save_cell_file(run_path: str | os.PathLike, key: str, record: Any) -> None:
    """Store cell ``key`` of the run directory ``run_path`` atomically, recording the parameters
    of its ``config.json`` (:meth:`RunDirectory.save_cell` for a worker process, which has the
    folder but not the :class:`RunDirectory`; without a readable config.json the cell records
    none)."""
    folder = Path(run_path)
    if not _KEY.match(key):
        raise ValueError(f"`key` must match {_KEY.pattern}, got {key!r}")
    params = _read_parameters(folder)
    if params is not None:
        _refuse_unsound(key, record, params)
        record = with_parameters(record, cell_parameters(params))
    write_atomic(folder / "cells" / f"{key}.json", dumps(record))


def stored_cell(run_path: str | os.PathLike, key: str) -> Any | None:
    """The finished cell ``key`` of the run directory ``run_path`` as computed (without its
    parameter record), or None when it is missing, damaged (:func:`cell_problem`) or records
    other parameters than the run's ``config.json``: a worker's look before it computes the
    cell (nothing is moved; the driver heals)."""
    path = Path(run_path) / "cells" / f"{key}.json"
    text, _ = read_stored(path)
    params = _read_parameters(Path(run_path))
    kind = params.get("experiment") if params is not None else None
    if text is None or cell_problem(text, kind=kind if isinstance(kind, str) else None,
                                    params=params) is not None:
        return None
    data = json.loads(text)
    if params is not None and parameters_problem(data, cell_parameters(params)) is not None:
        return None
    return without_parameters(data)


def _refuse_unsound(key: str, record: Any, params: Mapping[str, Any]) -> None:
    """:class:`~boundcalc.runs.records.RecordError` when cell ``key`` of a run with ``params``
    holds what no sound cell holds (:func:`boundcalc.runs.records.writable_problem`): it is
    never stored."""
    kind = params.get("experiment")
    problem = writable_problem(kind if isinstance(kind, str) else None, record, params)
    if problem is not None:
        raise RecordError(f"cell {key} is not stored: it {problem}")


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
        params = jsonable(dict(config))
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
                self._adopt_cells(params)
                write_atomic(config_file, dumps({"parameters": params,
                                                      "environment": environment(device)}))
        except OSError as exc:
            raise RunDirectoryError(
                f"cannot write the run directory {self.path} "
                f"({exc.strerror or exc}); choose a writable --out") from None
        self.config = params
        #: What every cell of this run records as computed with (:func:`cell_parameters`).
        self.cell_parameters = cell_parameters(params)

    def _adopt_cells(self, params: dict[str, Any]) -> None:
        """Before a missing ``config.json`` is written: the cells already here are the run's
        only record. A cell that records other parameters refuses the command
        (:class:`RunDirectoryError` naming the flag that differs; nothing is written or moved);
        a cell that records none is moved to ``cells/corrupt/`` with a warning (nothing says
        what it was computed with), so the run computes it again. Damaged files are left to
        :meth:`has_cell`."""
        expected = cell_parameters(params)
        unrecorded = []
        for path in sorted(self.cells.glob("*.json")):
            text, _ = read_stored(path)
            if text is None or cell_problem(text) is not None:
                continue
            recorded = _recorded(json.loads(text))
            if any(not isinstance(r, dict) for r in recorded):
                unrecorded.append(path)
                continue
            for record in recorded:
                differing = parameter_differences(record, expected)
                if differing:
                    name, there, here = differing[0]
                    flag = parameter_flag(name, params)
                    raise RunDirectoryError(
                        f"does not match the run in {self.path}: its config.json is missing, and "
                        f"its cell {path} was computed with {name} = {there!r}, this command has "
                        f"{here!r}; run it with the run's parameters, choose another --out, or "
                        f"move {self.cells} aside to compute the cells again", flag=flag)
        for path in unrecorded:
            moved = _aside(path, self.cells / CORRUPT)
            sys.stderr.write(f"warning: cell {path} records no parameters and config.json is "
                             f"missing, so what it was computed with is unknown; moved to "
                             f"{moved}; computing it again\n")
            sys.stderr.flush()

    def _probe_writable(self) -> None:
        """Create and remove a temporary file in ``cells/`` (OSError when it cannot)."""
        fd, tmp = tempfile.mkstemp(prefix=".probe.", suffix=".tmp", dir=self.cells)
        os.close(fd)
        os.unlink(tmp)

    @staticmethod
    def _read_config(config_file: Path) -> dict[str, Any]:
        """The ``parameters`` of an existing config.json, or :class:`RunDirectoryError`."""
        text, unreadable = read_stored(config_file, MAX_CONFIG_BYTES)
        if text is None and unreadable is not None and unreadable.startswith("unreadable"):
            raise RunDirectoryError(f"cannot read {config_file} ({unreadable[12:]})")
        problem = unreadable
        data: Any = None
        if text is not None:
            data, problem = parse_json(text, MAX_CONFIG_BYTES)
            if problem is not None and not text.strip():
                problem = "empty"
        if problem is None and (not isinstance(data, dict)
                                or not isinstance(data.get("parameters"), dict)):
            problem = "no 'parameters' object"
        if problem is None:
            return data["parameters"]
        raise RunDirectoryError(
            f"{config_file} is damaged ({problem}); it says which run the cells in "
            f"{config_file.parent} belong to, so it is not rebuilt: move it aside to reuse the "
            f"cells that record this command's parameters (those recording none are computed "
            f"again), or choose another --out")

    def _cell_path(self, key: str) -> Path:
        if not _KEY.match(key):
            raise ValueError(f"`key` must match {_KEY.pattern}, got {key!r}")
        return self.cells / f"{key}.json"

    def has_cell(self, key: str, required: Iterable[str] = (),
                 identity: Mapping[str, Any] | None = None, finite: Iterable[str] = (),
                 kind: str | None = None) -> bool:
        """True when cell ``key`` was finished (by this run or an interrupted earlier one).

        A damaged cell file (:func:`cell_problem`, with the keys ``required`` of each record,
        the ``identity`` its file name stands for, the fields that must be ``finite`` and the
        schema of experiment ``kind`` against this run's parameters; ``kind`` None: the
        ``experiment`` of this run's parameters, if any), or one
        computed with other parameters than this run's (:func:`parameters_problem`), is moved
        to ``cells/corrupt/`` with a warning on stderr naming it, and counts as not finished,
        so the run computes it again.
        """
        path = self._cell_path(key)
        if not os.path.lexists(path):
            return False
        if kind is None and isinstance(self.config.get("experiment"), str):
            kind = self.config["experiment"]
        text, problem = read_stored(path)
        if text is not None:
            problem = cell_problem(text, tuple(required), identity, tuple(finite), kind,
                                   self.config)
            if problem is None:
                problem = parameters_problem(json.loads(text), self.cell_parameters)
        if problem is None:
            return True
        try:
            moved = f"moved to {_aside(path, self.cells / CORRUPT)}"
        except FileNotFoundError:  # moved by another process meanwhile
            return self.has_cell(key, required, identity, finite, kind) \
                if os.path.lexists(path) else False
        except OSError as exc:
            raise RunDirectoryError(f"damaged cell {path} ({problem}) cannot be moved aside "
                                    f"({exc.strerror or exc}); delete it") from None
        sys.stderr.write(f"warning: damaged cell {path} ({problem}); {moved}; "
                         f"computing it again\n")
        sys.stderr.flush()
        return False

    def save_cell(self, key: str, record: Any) -> None:
        """Store one finished cell atomically, with the parameters it was computed with
        (:data:`COMPUTED_WITH`).

        Raises:
            RecordError: the record holds what no sound cell of this run's experiment holds (a
                NaN where a finite number belongs, a value contradicting the run's parameters;
                :func:`boundcalc.runs.records.writable_problem`): it is never stored.
        """
        self._cell_path(key)
        _refuse_unsound(key, record, self.config)
        write_atomic(self._cell_path(key), dumps(with_parameters(record,
                                                                 self.cell_parameters)))

    def load_cell(self, key: str) -> Any:
        """Read back a finished cell as computed, without its parameter record (check it with
        :meth:`has_cell` first)."""
        return without_parameters(json.loads(self._cell_path(key).read_text(encoding="utf-8")))

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


__all__ = ["CELL_LIST_PARAMETERS", "COMPUTED_WITH", "CORRUPT", "ORGANISATION_SWITCHES",
           "RunDirectory", "RunDirectoryError",
           "cell_parameters", "cell_problem", "dumps", "environment", "git_commit",
           "package_versions", "parameter_differences", "parameter_flag", "parameters_problem",
           "records_to_csv", "save_cell_file", "stored_cell", "with_parameters",
           "without_parameters"]
