"""boundcalc: bound calculator and verification toolkit for the finite-time theory of gradient
descent on shallow Transformers (Arda, Cayci & Eryilmaz, AISTATS 2026).

* :mod:`boundcalc.theory` — sympy statements (one module per lemma / theorem).
* :mod:`boundcalc.validators` — torch model, trainers and measurements (imports torch).
* :mod:`boundcalc.api` — evaluate a statement for concrete sizes (no torch).
* :mod:`boundcalc.cli` — the ``boundcalc`` command.
"""

__version__ = "0.1.0"
