"""``boundcalc validate``: its settings, the measurement of one cell and the run of all cells.
"""

__all__: list[str] = []
