"""What a flag needs of this machine, checked before any work: an installed package, a GPU, a
command on ``PATH``, a usable environment variable, a Dask scheduler that answers.

A value can be valid and still not runnable here: ``validate`` needs torch, ``--device cuda`` a
GPU, ``--executor slurm`` the Slurm commands, ``--figures`` matplotlib. Each such need is one
function here raising :class:`~boundcalc.errors.InputError` naming the flag that asked for it
(exit 2, one line saying what to install or change), called before any run directory is made.
No torch is imported to check for torch.

Example:
    >>> require_module("--format", "json", "writes JSON", "it is in the standard library")
    >>> require_module("--figures", "no_such_module_here", "draws", "pip install it")
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --figures draws with no_such_module_here, which is not \
installed: pip install it
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence

from boundcalc.errors import InputError

__all__ = ["CONNECT_S", "require_commands", "require_dask_scheduler", "require_gpu",
           "require_module", "require_modules", "require_setting"]

#: Seconds a Dask scheduler named by address has to answer.
CONNECT_S = 5.0


def _installed(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked install counts as none
        return False


def require_module(flag: str, module: str, what: str, install: str, *,
                   import_it: bool = False) -> None:
    """Refuse ``flag`` when ``module`` cannot be found (``import_it``: imported, so that a broken
    install counts as none; torch is only looked for, importing it takes seconds): "``flag``
    ``what`` with ``module``, which is not installed: ``install``"."""
    if import_it:
        try:
            importlib.import_module(module)
            found = True
        except ImportError:
            found = False
    else:
        found = _installed(module)
    if not found:
        raise InputError(flag, f"{what} with {module}, which is not installed: {install}")


def require_modules(flag: str, missing: Sequence[str], what: str, install: str) -> None:
    """Refuse ``flag`` when the modules ``missing`` (the caller looked for them) are needed:
    "``flag`` ``what`` needs ``missing``, which is not installed: ``install``".

    Example:
        >>> require_modules("--executor", ["distributed"], "dask",
        ...                 "pip install 'boundcalc[dask]'")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --executor dask needs distributed, which is not \
installed: pip install 'boundcalc[dask]'
    """
    if missing:
        who = f"{what} " if what else ""
        raise InputError(flag, f"{who}needs {', '.join(missing)}, which is not installed: "
                               f"{install}")


def require_gpu(device: str, available: bool) -> None:
    """Refuse ``--device cuda`` (or ``cuda:k``) when no CUDA GPU is ``available``.

    Example:
        >>> require_gpu("cpu", False)
    """
    if device != "cpu" and not available:
        raise InputError("--device", f"{device!r} requested but no CUDA GPU is available")


def require_commands(flag: str, missing: Sequence[str], what: str, whose: str,
                     instead: str) -> None:
    """Refuse ``flag`` when the commands ``missing`` (``whose``, not found on ``PATH``) are
    needed.

    Example:
        >>> require_commands("--executor", ["sbatch"], "slurm", "Slurm's", "log in elsewhere")
        ... # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --executor slurm needs Slurm's sbatch, which is not found ...
    """
    if missing:
        raise InputError(flag, f"{what} needs {whose} {' and '.join(missing)}, which "
                               f"{'is' if len(missing) == 1 else 'are'} not found on PATH: "
                               f"{instead}")


def require_setting(flag: str, name: str, value: str, allowed: Sequence[str], what: str) -> str:
    """``value`` of the environment variable ``name`` when it is one of ``allowed``, else an
    input error of ``flag`` (``what`` says who reads it).

    Example:
        >>> require_setting("--executor", "BOUNDCALC_SLURM_CLUSTER", "local",
        ...                 ("slurm", "local", "debug"), "slurm")
        'local'
    """
    if value not in allowed:
        raise InputError(flag, f"{what}: {name} must be {', '.join(allowed[:-1])} or "
                               f"{allowed[-1]}, got {value!r}")
    return value


def _flat(exc: BaseException) -> str:
    """An exception's message on one line (its type when it has none)."""
    return " ".join(str(exc).split()) or type(exc).__name__


def require_dask_scheduler(flag: str, address: str, timeout: float | None = None) -> None:
    """Refuse ``flag`` when no Dask scheduler answers at ``address`` within ``timeout`` seconds
    (default :data:`CONNECT_S`; nothing listening, an unknown host) or the address is not one
    distributed can use, instead of distributed's own 30 s wait and traceback. Connects a client
    and closes it; needs ``distributed`` (the ``dask`` extra, checked before).
    """
    import asyncio

    from distributed import Client

    timeout = CONNECT_S if timeout is None else timeout
    try:
        client = Client(address, timeout=timeout)
    except (ValueError, TypeError) as exc:
        raise InputError(flag, f"{address}: not a usable scheduler address ({_flat(exc)}); "
                               f"give it as HOST:PORT or tcp://HOST:PORT") from None
    except (OSError, asyncio.TimeoutError) as exc:
        raise InputError(flag, f"{address}: no Dask scheduler answered within {timeout:g} s "
                               f"({_flat(exc)}); start the scheduler or fix the address") from None
    client.close()
