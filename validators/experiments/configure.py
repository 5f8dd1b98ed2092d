"""The settings of each experiment, overridden, checked and run: ``reproduce --set/--config``
and :func:`boundcalc.reproduce`.

Every experiment keeps its settings in one frozen dataclass (its registry row's ``config``,
:func:`config_class`), a preset being one instance of it. :func:`resolve_overrides` turns
``key → text or value`` overrides into that dataclass's types
(:meth:`boundcalc.inputs.experiment_fields.ExperimentInputs.check`: the experiment's field rows,
torch-free; for an experiment without them, :func:`boundcalc.inputs.overrides.typed_overrides` and
its ``make_config``), so a bad key or value is an :class:`~boundcalc.errors.InputError` naming the
option and the key before anything runs. ``seeds`` keeps the meaning of ``--seeds``: a count k is
the experiment's first k seeds (figure1 and tsweep 1 … k, figure2 0 … k−1), a list or a range
the seeds themselves. :func:`run_named` runs an experiment with the checked overrides on this
machine's processes or on an executor; ``config.json`` records the config that results, so a resumed
run is compared with it as with a preset's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from boundcalc.errors import InputError
from boundcalc.execution.executors import ExecutorSettings
from boundcalc.experiments.experiment_registry import EXPERIMENTS, experiment, load
from boundcalc.inputs.overrides import parse_seeds, refuse_keys, typed_overrides

__all__ = ["config_class", "configs", "resolve_overrides", "run_named", "settings_help"]

#: Fields set by an option of their own, not by ``--set`` (the value is checked there).
OWN_OPTIONS = {"device": "is set by --device", "data": "is set by --data PATH"}

_NAMED = re.compile(r"`(\w+)`")


def config_class(name: str) -> type:
    """The config dataclass of the experiment ``name`` (its registry row's ``config``): every
    field can be overridden (except those of :data:`OWN_OPTIONS`).

    Example:
        >>> config_class("table1").__name__
        'Table1Config'
    """
    return load(experiment(name).config)


def configs() -> dict[str, type]:
    """Every registered experiment's config dataclass, by name."""
    return {name: config_class(name) for name in EXPERIMENTS}


def settings_help(name: str) -> str:
    """The fields ``--set`` takes for ``experiment``, comma-separated.

    Example:
        >>> settings_help("table1").split(", ")[:3]
        ['dms', 'Ns', 'steps']
    """
    import dataclasses

    return ", ".join(f.name for f in dataclasses.fields(config_class(name))
                     if f.name not in OWN_OPTIONS)


def resolve_overrides(name: str, preset: str, values: Mapping[str, Any],
                      origin: Mapping[str, str], data: str | None = None
                      ) -> tuple[int | list[int] | None, dict[str, Any]]:
    """``values`` (key → text or value, each from the option ``origin[key]``) checked against
    the config of the experiment ``name``: returns ``(seeds, fields)`` for its ``make_config`` /
    ``run_*`` (``seeds`` None when not given), after building the config from ``preset`` with
    them.

    Raises:
        InputError: an unknown key, a field of :data:`OWN_OPTIONS`, a value that is not of the
            field's type, or a config the experiment's own check refuses; the flag is the option
            and the key (``--set steps``), the message the rest.

    Example:
        >>> resolve_overrides("figure1", "quick", {"widths": "8,16", "seeds": "2"},
        ...                   {"widths": "--set", "seeds": "--set"})
        (2, {'widths': (8, 16)})
    """
    row = experiment(name)
    rest = dict(values)
    refuse_keys(row.refused, rest, origin)
    if row.inputs is not None:  # its field rows (what reproduce checks, torch-free)
        return load(row.inputs).check(preset, rest, origin, data, row.refused)
    seeds = None
    if "seeds" in rest and "seeds" in row.options:
        seeds = parse_seeds(rest.pop("seeds"), flag=f"{origin.get('seeds', '--set')} seeds")
    fields = typed_overrides(load(row.config), rest, origin, OWN_OPTIONS)
    make_args: tuple[Any, ...] = (data,) if "data" in row.options else (seeds,)
    try:
        load(row.make_config)(preset, *make_args, device="cpu", **dict(fields))
    except InputError:
        raise
    except ValueError as exc:
        raise _named_error(str(exc), origin) from None
    return seeds, fields


def _named_error(message: str, origin: Mapping[str, str]) -> InputError:
    """A config check's ``ValueError`` (```steps` must be >= 1, got 0``) as the error of the
    option that set the field it names first, else of ``--preset``."""
    names = _NAMED.findall(message)
    key = next((k for k in names if k in origin), None)
    text = message
    if key is None:
        return InputError("--preset", "with the overrides: " + _NAMED.sub(r"\1", message))
    if text.startswith(f"`{key}` "):
        text = text[len(key) + 3:]
    return InputError(f"{origin[key]} {key}", _NAMED.sub(r"\1", text))


def run_named(name: str, preset: str, *, seeds: int | list[int] | None = None,
              fields: Mapping[str, Any] | None = None, device: str = "cpu",
              out: str | Path | None = None, jobs: int = 1, data: str | None = None,
              figure_width: str | None = None, engine: ExecutorSettings | None = None,
              progress: bool = True) -> Path:
    """Run (or resume) the experiment ``name`` from ``preset`` with ``seeds`` and the config
    ``fields`` (as :func:`resolve_overrides` returns them) and write its outputs; returns the run
    directory. ``engine`` with an engine (dask, slurm) computes the cells there
    (:func:`.engine.run_on_executor`), else ``jobs`` processes of this machine do: the
    experiment's own ``run`` function, or, where its registry row names none, its ``task`` on
    the processes engine (:func:`.engine.run_on_executor` too; in this process for one job)."""
    row = experiment(name)
    extra = dict(fields or {})
    drawn = {"figure_width": figure_width} if figure_width is not None else {}
    takes_data = "data" in row.options
    if (engine is not None and engine.engine) or row.run is None:
        from .engine import run_on_executor

        config_args = (data,) if takes_data else (seeds,)
        return run_on_executor(name, preset, engine or ExecutorSettings(jobs=jobs),
                               config_args=config_args, out=out, device=device,
                               output_options=drawn, progress=progress, **extra)
    quiet = {} if progress else {"progress": False}
    given: dict[str, Any] = {"data": data} if takes_data else {"seeds": seeds}
    if row.parallel:
        given["jobs"] = jobs
    return load(row.run)(preset, device=device, out=out, **given, **quiet, **drawn, **extra)
