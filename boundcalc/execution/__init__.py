"""Where the cells of a run are computed: this machine's processes, Dask or Slurm, with
progress lines and an ETA.
"""

__all__: list[str] = []
