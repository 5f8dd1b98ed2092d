"""The input layer: the parameter table (one row per input of a command) and the experiment
overrides, checked before any work.
"""

__all__: list[str] = []
