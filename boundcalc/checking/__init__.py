"""``boundcalc check``: the run file of a run trained anywhere, and its check against the theory.
"""

__all__: list[str] = []
