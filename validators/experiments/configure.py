"""The settings of each experiment, overridden, checked and run: ``reproduce --set/--config``
and :func:`boundcalc.reproduce`.

Every experiment keeps its settings in one frozen dataclass (:data:`CONFIGS`), a preset being one
instance of it. :func:`resolve_overrides` turns ``key → text or value`` overrides into that
dataclass's types (:func:`boundcalc.overrides.typed_overrides`) and builds the config from the
preset with them, so a bad key or value is an :class:`~boundcalc.errors.InputError` naming the
option and the key before anything runs. ``seeds`` keeps the meaning of ``--seeds``: a count k
is the experiment's first k seeds (figure1 and tsweep 1 … k, figure2 0 … k−1), a list or a range
the seeds themselves. :func:`run_named` runs an experiment with the checked overrides on this
machine's processes or on an executor; ``config.json`` records the config that results, so a
resumed run is compared with it as with a preset's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from boundcalc.errors import InputError
from boundcalc.executors import ExecutorSettings
from boundcalc.overrides import parse_seeds, typed_overrides

from . import figure1, figure2, table1, tsweep

__all__ = ["CONFIGS", "resolve_overrides", "run_named", "settings_help"]

#: The config dataclass of each experiment: every field can be overridden (except those of
#: :data:`OWN_OPTIONS`).
CONFIGS: dict[str, type] = {"figure1": figure1.Figure1Config, "figure2": figure2.Figure2Config,
                            "table1": table1.Table1Config, "tsweep": tsweep.TSweepConfig}

#: Fields set by an option of their own, not by ``--set`` (the value is checked there).
OWN_OPTIONS = {"device": "is set by --device", "data": "is set by --data PATH"}

_MAKE = {"figure1": figure1.make_config, "figure2": figure2.make_config,
         "table1": table1.make_config, "tsweep": tsweep.make_config}
_NAMED = re.compile(r"`(\w+)`")


def settings_help(experiment: str) -> str:
    """The fields ``--set`` takes for ``experiment``, comma-separated.

    Example:
        >>> settings_help("table1").split(", ")[:3]
        ['dms', 'Ns', 'steps']
    """
    import dataclasses

    return ", ".join(f.name for f in dataclasses.fields(CONFIGS[experiment])
                     if f.name not in OWN_OPTIONS)


def resolve_overrides(experiment: str, preset: str, values: Mapping[str, Any],
                      origin: Mapping[str, str], data: str | None = None
                      ) -> tuple[int | list[int] | None, dict[str, Any]]:
    """``values`` (key → text or value, each from the option ``origin[key]``) checked against
    ``experiment``'s config: returns ``(seeds, fields)`` for its ``make_config`` / ``run_*``
    (``seeds`` None when not given), after building the config from ``preset`` with them.

    Raises:
        InputError: an unknown key, a field of :data:`OWN_OPTIONS`, a value that is not of the
            field's type, or a config the experiment's own check refuses; the flag is the option
            and the key (``--set steps``), the message the rest.

    Example:
        >>> resolve_overrides("figure1", "quick", {"widths": "8,16", "seeds": "2"},
        ...                   {"widths": "--set", "seeds": "--set"})
        (2, {'widths': (8, 16)})
    """
    if experiment not in CONFIGS:
        raise InputError("EXPERIMENT", f"must be one of {', '.join(CONFIGS)}, got "
                                       f"{experiment!r}")
    rest = dict(values)
    if "eta" in rest and experiment in ("figure1", "tsweep"):
        raise InputError(f"{origin.get('eta', '--set')} eta", "is not a setting: the step size is "
                         "step_constant/sqrt(steps) (1.75/sqrt(K)); set step_constant or steps")
    seeds = None
    if "seeds" in rest and experiment != "table1":
        seeds = parse_seeds(rest.pop("seeds"), flag=f"{origin.get('seeds', '--set')} seeds")
    fields = typed_overrides(CONFIGS[experiment], rest, origin, OWN_OPTIONS)
    make_args: tuple[Any, ...] = (data,) if experiment == "table1" else (seeds,)
    try:
        _MAKE[experiment](preset, *make_args, device="cpu", **dict(fields))
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


def run_named(experiment: str, preset: str, *, seeds: int | list[int] | None = None,
              fields: Mapping[str, Any] | None = None, device: str = "cpu",
              out: str | Path | None = None, jobs: int = 1, data: str | None = None,
              figure_width: str | None = None, engine: ExecutorSettings | None = None,
              progress: bool = True) -> Path:
    """Run (or resume) ``experiment`` from ``preset`` with ``seeds`` and the config ``fields``
    (as :func:`resolve_overrides` returns them) and write its outputs; returns the run directory.
    ``engine`` with an engine (dask, slurm) computes the cells there
    (:func:`.tasks.run_on_executor`), else ``jobs`` processes of this machine do."""
    extra = dict(fields or {})
    drawn = {"figure_width": figure_width} if figure_width is not None else {}
    if engine is not None and engine.engine:
        from .tasks import run_on_executor

        config_args = (data,) if experiment == "table1" else (seeds,)
        return run_on_executor(experiment, preset, engine, config_args=config_args, out=out,
                               device=device, output_options=drawn, progress=progress,
                               **extra)
    quiet = {} if progress else {"progress": False}
    if experiment == "table1":
        return table1.run_table1(preset, data=data, device=device, out=out, **quiet, **extra)
    run = {"figure1": figure1.run_figure1, "figure2": figure2.run_figure2,
           "tsweep": tsweep.run_tsweep}[experiment]
    return run(preset, seeds=seeds, device=device, out=out, jobs=jobs, **quiet, **drawn,
               **extra)
