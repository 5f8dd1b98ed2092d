"""Rendering: one number, one result, one frame as a table, JSON, CSV, Markdown or LaTeX, and
the rounding of a mean to its interval. Imports nothing of the rest of boundcalc but errors.
"""

__all__: list[str] = []
