"""The experiment table: one row per experiment of ``reproduce`` (config, presets, cells,
summary, tables, figure), read by every surface that tells experiments apart.
"""

__all__: list[str] = []
