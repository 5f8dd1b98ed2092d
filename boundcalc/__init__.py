"""boundcalc: bound calculator and verification toolkit for the finite-time theory of gradient
descent on shallow Transformers (Arda, Cayci & Eryilmaz, AISTATS 2026).

* :mod:`boundcalc.theory` — sympy statements (one module per result, named like its command).
* :mod:`boundcalc.params` — the parameter table; :mod:`boundcalc.evaluator` — the one evaluator.
* :mod:`boundcalc.api` — evaluate a statement for concrete sizes (no torch).
* :mod:`boundcalc.cli` — the ``boundcalc`` command.
* :mod:`boundcalc.validators` — torch model, trainers and measurements (imports torch).

``theory/`` and ``validators/`` sit at the top of the repository and are installed inside this
package (``package-dir`` in ``pyproject.toml``); imported from a source tree that is not
installed, this package cannot see them, and says so in one line instead of failing later.
"""

import importlib.util as _importlib_util

__version__ = "0.1.0"

#: Raised on import when ``boundcalc.theory`` is missing: a source tree that is not installed.
SOURCE_TREE_MESSAGE = (
    "boundcalc is imported from a source tree that is not installed (boundcalc.theory is "
    "missing): run the README's editable install in the repository, "
    "pip install -e \".[validators,test]\", or run from outside the repository"
)

if _importlib_util.find_spec(f"{__name__}.theory") is None:  # pragma: no cover - a subprocess
    raise ImportError(SOURCE_TREE_MESSAGE)
