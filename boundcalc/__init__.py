"""boundcalc: bound calculator and verification toolkit for the finite-time theory of gradient
descent on shallow Transformers (Arda, Cayci & Eryilmaz, AISTATS 2026).

* :func:`evaluate` and :func:`sweep` — the notebook API (:mod:`boundcalc.notebook`): a statement
  at one point (an :class:`~boundcalc.calc.api.Evaluation`, floats) or over a grid (a DataFrame).
* :func:`check_run` and :func:`save_run` — check a run trained anywhere against the theory
  (:mod:`boundcalc.checking.runcheck`, ``boundcalc check``; imports torch when called) and write
  its run file (:mod:`boundcalc.checking.runfile`).
* :func:`reproduce` and :func:`load_run` — the experiments (:mod:`boundcalc.experiment_api`):
  run one at your own settings, read a run directory back as tidy DataFrames.

Beneath this face, one subpackage per responsibility (docs/architecture.md draws their floors):
:mod:`boundcalc.inputs` (the parameter table and the experiment overrides),
:mod:`boundcalc.calc` (the one evaluator, point evaluations, sweeps, solvers),
:mod:`boundcalc.render` (every output format), :mod:`boundcalc.runs` (run directories, summaries,
tables), :mod:`boundcalc.checking` (``boundcalc check``), :mod:`boundcalc.execution` (processes,
Dask, Slurm), :mod:`boundcalc.experiments` (the experiment table), :mod:`boundcalc.validation`
(``boundcalc validate``), :mod:`boundcalc.generalization` (the generalization bound) and
:mod:`boundcalc.cli` (the ``boundcalc`` command); :mod:`boundcalc.theory` holds the sympy
statements and :mod:`boundcalc.validators` the torch model, trainers and measurements.

``theory/`` and ``validators/`` sit at the top of the repository and are installed inside this
package (``package-dir`` in ``pyproject.toml``); imported from a source tree that is not
installed, this package cannot see them, and says so in one line instead of failing later.
Importing the package loads none of sympy, pandas or torch: :func:`evaluate`, :func:`sweep`,
:func:`check_run`, :func:`save_run`, :func:`reproduce` and :func:`load_run` are loaded on first use
(only :func:`check_run` and :func:`reproduce` import torch).

Example:
    >>> import boundcalc
    >>> boundcalc.evaluate("theorem1", m=512, n=1000, rho=2).verdict  # above Y² = 9
    'vacuous'
    >>> boundcalc.sweep("theorem1", m=[512, 4096, 8192], n=1000, rho=2)["verdict"].tolist()
    ['vacuous', 'guaranteed', 'guaranteed']
"""

import importlib as _importlib
import importlib.util as _importlib_util

#: Raised on import when ``boundcalc.theory`` is missing: a source tree that is not installed.
_SOURCE_TREE_MESSAGE = (
    "boundcalc is imported from a source tree that is not installed (boundcalc.theory is "
    "missing): run the README's editable install in the repository, "
    "pip install -e \".[validators,test]\", or run from outside the repository"
)

if _importlib_util.find_spec(f"{__name__}.theory") is None:  # pragma: no cover - a subprocess
    raise ImportError(_SOURCE_TREE_MESSAGE)

import typing as _typing  # noqa: E402

from boundcalc.version import __version__  # noqa: E402

if _typing.TYPE_CHECKING:  # pragma: no cover
    from boundcalc.checking.runcheck import check_run
    from boundcalc.checking.runfile import save_run
    from boundcalc.experiment_api import load_run, reproduce
    from boundcalc.notebook import evaluate, sweep

__all__ = ["__version__", "check_run", "evaluate", "load_run", "reproduce", "save_run", "sweep"]

#: Names loaded on first use, and their module (:mod:`boundcalc.notebook` imports numpy and
#: mpmath; :mod:`boundcalc.experiment_api` pandas; torch only when a check or an experiment runs).
_LAZY = {"evaluate": "notebook", "sweep": "notebook", "check_run": "checking.runcheck",
         "save_run": "checking.runfile", "reproduce": "experiment_api",
         "load_run": "experiment_api"}


def __getattr__(name: str) -> _typing.Any:
    if name in _LAZY:
        module = _importlib.import_module(f"{__name__}.{_LAZY[name]}")
        return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
