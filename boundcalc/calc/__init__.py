"""The calculator: the one evaluator of the theory's sympy statements, its code cache, point
evaluations (:mod:`.api`), sweeps, solvers, symbolic text, the verdict report and the
Transformer-versus-IndRNN comparison. Imports neither torch nor the validators.
"""

__all__: list[str] = []
