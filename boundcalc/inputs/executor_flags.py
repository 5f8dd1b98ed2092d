"""The executor flags' values: ``--slurm-time`` (the other executor flags are integers typer
checks, and which of them go together is :mod:`boundcalc.inputs.combinations`).

Example:
    >>> SLURM_TIME.check("2:00:00"), SLURM_TIME.range
    (120, '>= 1 minute')
"""

from __future__ import annotations

from boundcalc.errors import InputError
from boundcalc.inputs.flags import text_flag

__all__ = ["EXECUTORS", "SLURM_TIME", "parse_slurm_time"]

#: The executors of ``--executor``, the default first.
EXECUTORS: tuple[str, ...] = ("processes", "dask", "slurm")


def parse_slurm_time(text: str, flag: str = "--slurm-time") -> int:
    """``--slurm-time`` in minutes: ``90``, ``1:30:00`` (H:MM:SS) or ``2-00:00:00`` (D-HH:MM:SS).

    Example:
        >>> parse_slurm_time("90"), parse_slurm_time("1:30:00"), parse_slurm_time("1-00:00:00")
        (90, 90, 1440)
    """
    raw = text.strip()
    try:
        days, _, rest = raw.rpartition("-") if "-" in raw else ("0", "", raw)
        parts = [int(p) for p in rest.split(":")]
        if len(parts) == 1:
            minutes = parts[0]
        elif len(parts) in (2, 3):
            h, m, s = (parts + [0])[:3] if len(parts) == 3 else (parts[0], parts[1], 0)
            minutes = h * 60 + m + (1 if s > 0 else 0)
        else:
            raise ValueError
        minutes += int(days) * 24 * 60
    except ValueError:
        raise InputError(flag, f"must be minutes or H:MM:SS, got {text!r}") from None
    if minutes < 1:
        raise InputError(flag, f"must be at least one minute, got {text!r}")
    return minutes


#: ``--slurm-time``: the wall-clock limit of each Slurm task, in minutes.
SLURM_TIME = text_flag("slurm_time", "--slurm-time", lambda flag, v: parse_slurm_time(str(v), flag),
                       type="duration", range=">= 1 minute", unit="minutes",
                       meaning="time limit of each Slurm task (minutes, H:MM:SS or D-HH:MM:SS)")
