"""Stored runs: run directories (resumable, atomic, self-healing), reading them back, summaries
with their intervals, slopes and tables.
"""

__all__: list[str] = []
