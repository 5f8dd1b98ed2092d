"""Stored experiment runs, read back: which run a directory holds and its finished cells.

``boundcalc reproduce figure1|figure2|table1|tsweep`` leaves a run directory
(:mod:`boundcalc.runs.directory`): ``config.json`` (the parameters, ``experiment`` naming the
kind) and one JSON file per finished cell under ``cells/``. :func:`load_run` reads them back as a
:class:`StoredRun` — it never trains, never recomputes a cell and never imports torch — so that
the tables of a run (:mod:`boundcalc.runs.tables`) can be made from an unfinished run, or from
cells gathered from several machines. A damaged cell file is left in place, counted as missing and
named with why: as :meth:`boundcalc.runs.directory.RunDirectory.has_cell` judges it (a field
missing, NaN where a finite number belongs, another cell named inside than its file name says,
other parameters recorded than the run's, anything else the record schema of
:mod:`boundcalc.runs.records` refuses: a field of another type, a value contradicting the run's
parameters, a file too large or nested too deep). This module also names the fields every
cell of a kind must hold (:data:`CELL_FIELDS`), which the experiments write and the summaries
(:mod:`boundcalc.runs.summaries`) read, and what a cell's file name says it holds
(:func:`cell_checks`).

Example:
    >>> import json, tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> (folder / "cells").mkdir()
    >>> params = {"experiment": "table1", "dms": [16], "Ns": [64, 128]}
    >>> _ = (folder / "config.json").write_text(json.dumps({"parameters": params}))
    >>> run = load_run(folder)
    >>> run.kind, run.missing
    ('table1', ['dm16-N64', 'dm16-N128'])
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.experiments.experiment_registry import (
    EXPERIMENTS,
    FIGURE1_EXTRA,
    FIGURE1_METRICS,
    FIGURE2_MODELS,
    TABLE1_KEYS,
    experiment,
    names,
)
from boundcalc.inputs.params import InputError
from boundcalc.runs.records import MAX_CONFIG_BYTES, parse_json, read_stored

__all__ = ["CELL_FIELDS", "FIGURE1_EXTRA", "FIGURE1_METRICS", "FIGURE2_MODELS", "FINITE_FIELDS",
           "TABLE1_KEYS", "StoredRun", "cell_checks", "cell_identity", "detect_kind",
           "expected_cells", "load_run", "revive", "tsweep_cell_key"]


class _RowField(Mapping[str, tuple[str, ...]]):
    """One field of every registered experiment's row, by name (read when looked up)."""

    def __init__(self, attribute: str):
        self._attribute = attribute

    def __getitem__(self, kind: str) -> tuple[str, ...]:
        return getattr(EXPERIMENTS[kind], self._attribute)

    def __iter__(self) -> Iterator[str]:
        return iter(EXPERIMENTS)

    def __len__(self) -> int:
        return len(EXPERIMENTS)


#: Keys every stored cell of a kind holds (a cell file without them is damaged), per registered
#: experiment (:attr:`~boundcalc.experiments.experiment_registry.Experiment.cell_fields`).
CELL_FIELDS: Mapping[str, tuple[str, ...]] = _RowField("cell_fields")

#: Fields that are finite numbers in every sound cell of a kind (a NaN there is damage: it would
#: pass into every mean and interval of the figure); others may be NaN by design (a diverged
#: run's validation loss, a bound not evaluated).
FINITE_FIELDS: Mapping[str, tuple[str, ...]] = _RowField("finite_fields")

_ARG = "RUN_DIR"


@dataclass
class StoredRun:
    """What a run directory holds: its kind, parameters and finished cells (never recomputed).

    Attributes:
        label: the run directory as the user named it (shown in tables and messages).
        path: the folder.
        kind: ``figure1``, ``figure2``, ``table1`` or ``tsweep``.
        params: the ``parameters`` of ``config.json``.
        records: the finished cells, in the order the experiment lists them.
        missing: keys of the expected cells with no usable file yet (damaged ones included).
        damaged: key → why its file is not a finished cell (empty, truncated, ``{}``, a field
            missing or NaN, another cell named inside, other parameters recorded); left in
            place (``reproduce`` moves such files aside and recomputes them).
    """

    label: str
    path: Path
    kind: str
    params: dict[str, Any]
    records: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    damaged: dict[str, str] = field(default_factory=dict)

    @property
    def expected(self) -> int:
        """Number of cells the run's parameters call for."""
        return len(self.records) + len(self.missing)


def cell_identity(kind: str, key: str) -> dict[str, Any]:
    """What the file name ``key`` of a cell of ``kind`` says the cell holds: the fields that
    name it and their values (a cell whose content names others is damaged).

    Example:
        >>> cell_identity("figure1", "m8-seed1"), cell_identity("figure2", "indrnn-L4-seed0")
        ({'m': 8, 'seed': 1}, {'model': 'indrnn', 'L': 4, 'seed': 0})
    """
    return EXPERIMENTS[kind].identity(key)


def cell_checks(kind: str, key: str) -> dict[str, Any]:
    """What a sound cell ``key`` of ``kind`` holds, as the keyword arguments of
    :meth:`boundcalc.runs.directory.RunDirectory.has_cell` (and
    :func:`boundcalc.runs.directory.cell_problem`): ``required`` fields, the ``identity`` its
    file name says, the fields that must be ``finite``, and the ``kind`` whose record schema
    (:mod:`boundcalc.runs.records`) every record meets."""
    row = EXPERIMENTS[kind]
    return {"required": row.cell_fields, "identity": row.identity(key),
            "finite": row.finite_fields, "kind": kind}


def tsweep_cell_key(seed: int, T: int, m: int) -> str:
    """File stem of a tsweep cell: ``m<m>-T<T>-seed<seed>``.

    Example:
        >>> tsweep_cell_key(3, 16, 64)
        'm64-T16-seed3'
    """
    return f"m{int(m)}-T{int(T)}-seed{int(seed)}"


def detect_kind(params: Mapping[str, Any], path: str | os.PathLike | None = None) -> str | None:
    """The experiment kind of a run: ``params["experiment"]`` (every run records it), else
    recognised from the parameter names, else from the output and cell files in ``path``;
    None when nothing matches (a ``validate`` run, say).

    Example:
        >>> detect_kind({"experiment": "figure2"}), detect_kind({"widths": [8, 16]})
        ('figure2', 'figure1')
        >>> detect_kind({"statements": ["lemma2"]}) is None
        True
    """
    stated = params.get("experiment")
    if stated is not None:      # text naming a registered experiment; anything else: none
        return stated if isinstance(stated, str) and stated in EXPERIMENTS else None
    # the most specific row first (the T sweep's parameters include figure 1's)
    rows = sorted(EXPERIMENTS.values(), key=lambda row: -len(row.detect_params))
    for row in rows:
        if row.detect_params and all(p in params for p in row.detect_params):
            return row.name
    if path is None:
        return None
    folder = Path(path)
    for row in rows:
        if any((folder / marker).exists() for marker in row.detect_files):
            return row.name
    stems = [p.stem for p in (folder / "cells").glob("*.json")]
    for row in EXPERIMENTS.values():
        if stems and all(row.is_cell_key(s) for s in stems):
            return row.name
    return None


def expected_cells(kind: str, params: Mapping[str, Any]) -> list[str]:
    """Cell keys (file stems under ``cells/``) a run of ``kind`` with ``params`` finishes, in the
    experiment's order: figure1 ``m<m>-seed<s>`` (seed-major), figure2
    ``<model>-L<L>-seed<s>``, table1 ``dm<d_m>-N<N>``, tsweep ``m<m>-T<T>-seed<s>`` (seed, then
    T, then m: one teacher per (seed, T)).

    Example:
        >>> expected_cells("figure1", {"widths": [8, 16], "seeds": [1]})
        ['m8-seed1', 'm16-seed1']
    """
    if kind not in EXPERIMENTS:
        raise ValueError(f"`kind` must be one of {names()}, got {kind!r}")
    return experiment(kind).cell_keys(params)


def load_run(path: str | os.PathLike, label: str | None = None) -> StoredRun:
    """Read the config and every finished cell of one run directory (no computation).

    A cell file that is not a finished cell (empty, truncated, ``{}``, lacking a field of
    :data:`CELL_FIELDS`, NaN in a field of :data:`FINITE_FIELDS`, naming another cell than its
    file name, recording other parameters than the run's config.json) is counted as missing and
    named in :attr:`StoredRun.damaged`; the other cells are tabled (without their parameter
    record).

    Raises:
        InputError: (flag ``RUN_DIR``) ``path`` is not a directory, has no readable
            ``config.json`` or holds an unknown kind of run.

    Example:
        >>> load_run("/nonexistent")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: RUN_DIR '/nonexistent' is not a directory
    """
    label = str(path) if label is None else label
    folder = Path(path)
    if not folder.is_dir():
        raise InputError(_ARG, f"{label!r} is not a directory")
    config_file = folder / "config.json"
    if not config_file.is_file():
        raise InputError(_ARG, f"{label!r} has no config.json (not a boundcalc run directory)")
    text, problem = read_stored(config_file, MAX_CONFIG_BYTES)
    config, problem = parse_json(text or "", MAX_CONFIG_BYTES) if problem is None \
        else (None, problem)
    if problem is not None:
        raise InputError(_ARG, f"{label!r}: cannot read config.json: {problem}")
    params = config.get("parameters") if isinstance(config, dict) else None
    if not isinstance(params, dict):
        raise InputError(_ARG, f"{label!r}: config.json has no 'parameters' object")
    kind = detect_kind(params, folder)
    if kind is None:
        stated = params.get("experiment")
        what = f"experiment {stated!r}" if stated is not None else "no experiment"
        raise InputError(_ARG, f"{label!r} holds {what}; boundcalc table reads "
                               f"{', '.join(names())} runs")
    try:
        keys = expected_cells(kind, params)
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        raise InputError(_ARG, f"{label!r}: config.json of a {kind} run lacks {exc}") from None
    from boundcalc.runs.directory import (
        cell_parameters,
        cell_problem,
        parameters_problem,
        without_parameters,
    )

    computed_with = cell_parameters(params)
    records, missing, damaged = [], [], {}
    for key in keys:
        cell = folder / "cells" / f"{key}.json"
        if not os.path.lexists(cell):
            missing.append(key)
            continue
        text, problem = read_stored(cell)
        if text is not None:
            problem = cell_problem(text, **cell_checks(kind, key), params=params)
            if problem is None and not isinstance(json.loads(text), dict):
                problem = "not a JSON object"
            if problem is None:
                problem = parameters_problem(json.loads(text), computed_with)
        if problem is not None:
            missing.append(key)
            damaged[key] = problem
            continue
        records.append({k: revive(v) for k, v in without_parameters(json.loads(text)).items()})
    return StoredRun(label, folder, kind, params, records, missing, damaged)


_NON_FINITE = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def revive(value: Any) -> Any:
    """A non-finite float back from the text the run directory stores it as (``"nan"``,
    ``"inf"``, ``"-inf"``; see :func:`boundcalc.runs.directory.dumps`)."""
    return _NON_FINITE.get(value, value) if isinstance(value, str) else value
