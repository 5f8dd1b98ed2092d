"""The experiments from Python: :func:`reproduce` runs one, :func:`load_run` reads a run back as
tidy pandas DataFrames.

A run directory of ``boundcalc reproduce`` (:mod:`boundcalc.runs.directory`) holds the config and
one file per finished cell. :func:`load_run` reads them (:func:`boundcalc.runs.stored.load_run`:
never trains, never imports torch) into an :class:`ExperimentRun`, whose frames are computed from
the stored cells with the same functions as the run's own CSV files and ``boundcalc table``
(:mod:`boundcalc.runs.summaries`):

* ``cells`` — one row per finished cell (figure1: per (seed, m); figure2: per (model, L, seed);
  table1: per (d_m, N); tsweep: per (seed, T, m)), its stored fields as columns;
* ``summary`` — one row per (quantity, group): ``quantity`` (``lin_error``, ``max_jacobian``, …),
  the group's columns (figure1 ``m``; tsweep ``m``, ``T``; figure2 ``model``, ``L``), then
  ``mean``, ``ci95`` (the arithmetic mean and its 95 % Student-t half-width), ``gmean``,
  ``gci_low``, ``gci_high`` (the geometric mean and its 95 % interval on the log values, what the
  figures draw), ``theory`` (the calculator's bound beside it, where there is one) and the
  group's other columns; table1 has no seeds, so its summary is one row per (d_m, N) cell with
  its bound and verdict;
* ``slopes`` — one row per (quantity[, m]): the log–log slope with its 95 % CI (empty for figure2
  and table1).

Each frame's ``attrs`` name the ``experiment``, ``preset``, ``path`` and the boundcalc
``version``. ``to_xarray()`` turns the summary into an ``xarray.Dataset`` (xarray installed).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from boundcalc.experiments.experiment_registry import experiment, listed, load, names, with_option
from boundcalc.version import __version__

__all__ = ["ExperimentRun", "load_run", "reproduce", "tidy_summary"]

_STATISTICS = ("mean", "ci95", "gmean", "gci_low", "gci_high", "theory")


@dataclass
class ExperimentRun:
    """A stored run of ``boundcalc reproduce``, read back (nothing is recomputed).

    Attributes:
        path: the run directory.
        experiment: ``figure1``, ``figure2``, ``table1`` or ``tsweep``.
        preset: the preset the run started from (``quick``, ``paper``).
        config: every parameter of the run, as its ``config.json`` records them.
        missing: keys of the cells the config calls for that are not (soundly) stored yet.
    """

    path: Path
    experiment: str
    preset: str | None
    config: dict[str, Any]
    records: list[dict[str, Any]] = field(repr=False, default_factory=list)
    missing: list[str] = field(default_factory=list)
    _frames: dict[str, Any] = field(repr=False, default_factory=dict)

    def __repr__(self) -> str:
        done = len(self.records)
        return (f"ExperimentRun({self.experiment}, preset={self.preset!r}, "
                f"{done}/{done + len(self.missing)} cells, path={str(self.path)!r})")

    def _attrs(self) -> dict[str, Any]:
        return {"experiment": self.experiment, "preset": self.preset, "path": str(self.path),
                "version": __version__}

    def _frame(self, name: str, rows: Sequence[Mapping[str, Any]]) -> Any:
        import pandas as pd

        frame = pd.DataFrame(list(rows))
        frame.attrs.update(self._attrs())
        self._frames[name] = frame
        return frame

    @property
    def cells(self) -> Any:
        """One row per finished cell (:class:`pandas.DataFrame`)."""
        if "cells" not in self._frames:
            self._frame("cells", self.records)
        return self._frames["cells"]

    @property
    def summary(self) -> Any:
        """One row per (quantity, group) (module docstring; :class:`pandas.DataFrame`)."""
        if "summary" not in self._frames:
            self._summaries()
        return self._frames["summary"]

    @property
    def slopes(self) -> Any:
        """One row per fitted slope, ``quantity`` first (:class:`pandas.DataFrame`)."""
        if "slopes" not in self._frames:
            self._summaries()
        return self._frames["slopes"]

    def _summaries(self) -> None:
        from boundcalc.runs.stored import StoredRun

        stored = StoredRun(str(self.path), self.path, self.experiment, self.config,
                           self.records, self.missing)
        row = experiment(self.experiment)
        rows = load(row.summarize)(stored)
        fits = load(row.slopes)(stored, rows) if row.slopes is not None and rows else []
        tidy = tidy_summary(rows, row.group_columns) if row.tidy else rows
        self._frame("summary", tidy)
        self._frame("slopes", [{"quantity": f["panel"], **{k: v for k, v in f.items()
                                                          if k != "panel"}} for f in fits])

    def to_xarray(self) -> Any:
        """The summary as an ``xarray.Dataset`` indexed by quantity and group (table1: by
        (d_m, N)); needs xarray (``pip install xarray``)."""
        try:
            import xarray  # noqa: F401
        except ImportError:
            raise ModuleNotFoundError("ExperimentRun.to_xarray needs xarray, which is not "
                                      "installed: pip install xarray") from None
        row = experiment(self.experiment)
        groups = list(row.group_columns)
        index = ["quantity", *groups] if row.tidy else groups
        data = self.summary.set_index(index).to_xarray()
        data.attrs.update({k: v for k, v in self._attrs().items() if v is not None})
        return data


def tidy_summary(rows: Sequence[Mapping[str, Any]], groups: Sequence[str]
                 ) -> list[dict[str, Any]]:
    """Summary rows with one column per (quantity, statistic) (``lin_error_mean``, …, as the
    run's ``summary.csv``) as one row per (quantity, group): ``quantity``, the ``groups``
    columns, the statistics of :data:`_STATISTICS` and the other columns of that quantity
    (``min_train_loss_verdict`` → ``verdict``), then the group's columns no quantity owns.
    A quantity is a prefix with a ``_mean`` and a ``_ci95`` column (the longest one wins).

    Example:
        >>> rows = [{"m": 8, "seeds": 2, "x_mean": 1.0, "x_ci95": 0.5, "x_theory": 3.0,
        ...          "x_alt_mean": 2.0, "x_alt_ci95": 0.1}]
        >>> for row in tidy_summary(rows, ["m"]):
        ...     print(row)
        {'quantity': 'x', 'm': 8, 'mean': 1.0, 'ci95': 0.5, 'theory': 3.0, 'seeds': 2}
        {'quantity': 'x_alt', 'm': 8, 'mean': 2.0, 'ci95': 0.1, 'seeds': 2}
    """
    out: list[dict[str, Any]] = []
    for row in rows:
        quantities = [k[:-5] for k in row if k.endswith("_mean") and f"{k[:-5]}_ci95" in row]
        owned: dict[str, dict[str, Any]] = {q: {} for q in quantities}
        shared: dict[str, Any] = {}
        for key, value in row.items():
            if key in groups:
                continue
            owner = max((q for q in quantities if key.startswith(q + "_")), key=len,
                        default=None)
            if owner is None:
                shared[key] = value
            else:
                owned[owner][key[len(owner) + 1:]] = value
        for quantity in quantities:
            stats = owned[quantity]
            ordered = {s: stats[s] for s in _STATISTICS if s in stats}
            ordered.update({s: v for s, v in stats.items() if s not in ordered})
            out.append({"quantity": quantity, **{g: row[g] for g in groups if g in row},
                        **ordered, **shared})
    return out


def load_run(path: str | os.PathLike) -> ExperimentRun:
    """Read the run directory ``path`` of ``boundcalc reproduce`` (its config and finished
    cells; no computation, no torch) as an :class:`ExperimentRun`.

    Raises:
        InputError: (flag ``RUN_DIR``) ``path`` is not a run directory of an experiment.

    Example:
        >>> import json, tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> (folder / "cells").mkdir()
        >>> params = {"experiment": "figure1", "preset": "quick", "widths": [8], "seeds": [1]}
        >>> _ = (folder / "config.json").write_text(json.dumps({"parameters": params}))
        >>> run = load_run(folder)
        >>> run.experiment, run.missing, run.summary.empty
        ('figure1', ['m8-seed1'], True)
    """
    from boundcalc.runs.stored import load_run as stored_run

    stored = stored_run(path)
    return ExperimentRun(Path(path), stored.kind, stored.params.get("preset"),
                         dict(stored.params), list(stored.records), list(stored.missing))


def reproduce(name: str, preset: str = "quick", out: str | os.PathLike | None = None, *,
              device: str = "auto", jobs: int = 1, data: str | os.PathLike | None = None,
              figure_width: str | None = None, progress: bool = True,
              **overrides: Any) -> ExperimentRun:
    """Run (or resume) the experiment ``name`` as ``boundcalc reproduce`` does and read it back.

    Args:
        name: a registered experiment (:mod:`boundcalc.experiments.experiment_registry`):
        ``figure1``,
            ``figure2``, ``table1``, ``tsweep``.
        preset: one of the experiment's presets (``quick`` or ``paper``): the settings the
            overrides start from.
        out: the run directory (None: ``runs/<name>-<preset>``); one holding the same run is
            resumed, one holding another is refused.
        device: ``auto``, ``cpu`` or ``cuda[:k]``.
        jobs: worker processes of this machine.
        data: table1: the MNIST IDX folder or .npz (required by the paper preset).
        figure_width: figure1, figure2, tsweep: ``single`` or ``double``.
        progress: one line per finished cell on stderr.
        **overrides: fields of the experiment's config (the keys of ``--set``), as values
            (``widths=[8, 16, 32]``, ``steps=50``) or as the text ``--set`` takes
            (``widths="8,16,32"``); ``seeds=2`` is a count (the experiment's first two seeds),
            a list the seeds themselves.

    Raises:
        InputError: a bad name, preset, key or value, naming it (as the CLI's exit 2).

    Example (trains; not run here):
        run = boundcalc.reproduce("figure1", widths=[8, 16, 32], seeds=2, steps=50, out="R")
        run.summary.query("quantity == 'lin_error'")[["m", "gmean", "gci_low", "gci_high"]]
    """
    from boundcalc.inputs.experiment_fields import check_out
    from boundcalc.inputs.reproduce_options import (
        check_choice,
        check_jobs,
        check_kind,
        check_taken,
        require_data,
    )
    from boundcalc.validation.settings import check_device, require_torch

    check_choice("name", name, names(), one_of=True)
    row = experiment(name)
    check_choice("preset", preset, row.presets)
    if out is not None:
        check_kind("out", out, (str, os.PathLike), "a folder name")
    out_text = check_out(None if out is None else os.fspath(out), "out")
    check_jobs("jobs", jobs, integer_text=True)
    if figure_width is not None:
        takes = with_option("figure_width")
        check_taken("figure_width", name, takes, listed(takes))
        check_choice("figure_width", figure_width, ("single", "double"))
    if data is not None:
        takes = with_option("data")
        check_taken("data", name, takes, listed(takes), only=True)
    require_data("data", preset, data, row.data_required,
                 f"is required with preset {preset!r} (the MNIST IDX folder or an .npz)")
    if data is not None:
        check_kind("data", data, (str, os.PathLike), "a path")
    check_kind("device", device, str, "auto, cpu or cuda")
    check_device(device)
    data_text = None if data is None else os.fspath(data)
    origin = dict.fromkeys(overrides, "reproduce()")
    if row.inputs is not None:  # every override checked before torch is imported
        seeds, fields = load(row.inputs).check(preset, overrides, origin, data_text,
                                                     row.refused)
        row.check_data("data", data_text, preset, fields)  # the content of data, torch-free
    require_torch("name", f"{name} trains the model")
    from boundcalc.validation.settings import resolve_device
    from boundcalc.validators.experiments.configure import resolve_overrides, run_named

    if row.inputs is None:
        seeds, fields = resolve_overrides(name, preset, overrides, origin, data_text)
    folder = run_named(name, preset, seeds=seeds, fields=fields, device=resolve_device(device),
                       out=out_text, jobs=jobs, data=data_text, figure_width=figure_width,
                       progress=progress)
    return load_run(folder)
