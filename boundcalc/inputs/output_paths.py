"""Where an output goes, checked before any work: ``--output FILE`` and ``--figures-dir DIR``.

A command computes first and writes last, so a path it cannot write would otherwise be found
only after the work (seconds for a sweep, hours for a run's figures). The checks here take the
path as the command will use it and refuse, naming the flag, what can be known in advance:

* ``--output FILE`` — not empty, not a folder, in a folder that exists and that this user may
  write in (the file is written atomically: a temporary file beside it, then a rename), each
  component of the path usable (not too long, no loop). An existing device or FIFO
  (``/dev/null``, ``/dev/stdout``) is written in place and is accepted when writable.
* ``--figures-dir DIR`` — not a file; the folder is created with its parents, so the nearest
  existing ancestor must be a folder this user may write in.

What cannot be known in advance (the disk filling up, an I/O error, the folder removed during
the run) is an :class:`~boundcalc.errors.OutputError` of the writer (exit 1), never a silent loss.

Example:
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> check_output_file("--output", os.path.join(folder, "table.md")) is not None
    True
    >>> check_output_file("--output", folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    boundcalc.errors.InputError: --output ... is a folder; give a file name
    >>> check_output_folder("--figures-dir", os.path.join(folder, "new", "figures")) is not None
    True
"""

from __future__ import annotations

import errno
import os
from pathlib import Path

from boundcalc.errors import InputError
from boundcalc.inputs.flags import text_flag

__all__ = ["FIGURES_DIR", "OUTPUT", "check_output_file", "check_output_folder"]


def _stat_problem(path: Path) -> str | None:
    """Why ``path`` cannot even be looked up (a component too long, a loop, no permission to
    search a folder on the way); None when it exists or simply does not exist yet."""
    try:
        path.stat()
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return "a component of the path is a file, not a folder"
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return None
        return exc.strerror or type(exc).__name__
    except ValueError as exc:  # an embedded NUL byte
        return str(exc)
    return None


def _usable_path(flag: str, path: object, kind: str, doing: str) -> tuple[str, Path]:
    """``path`` as text and as a Path, refused when empty (``must name`` ``kind``) or when it
    cannot even be looked up (``doing`` '…': why)."""
    text = os.fspath(path) if isinstance(path, os.PathLike) else str(path)
    if not text.strip():
        raise InputError(flag, f"must name {kind}, got {text!r}")
    target = Path(text)
    problem = _stat_problem(target)
    if problem:
        raise InputError(flag, f"{doing} {text!r}: {problem}")
    return text, target


def _writable_folder(folder: Path) -> bool:
    return os.access(folder, os.W_OK | os.X_OK)


def check_output_file(flag: str, path: object) -> str | None:
    """``path`` (None: standard output) if a file can be written there, else an
    :class:`InputError` naming ``flag``.

    Example:
        >>> check_output_file("--output", None) is None
        True
        >>> check_output_file("--output", "")
        Traceback (most recent call last):
        ...
        boundcalc.errors.InputError: --output must name a file, got ''
    """
    if path is None:
        return None
    text, target = _usable_path(flag, path, "a file", "cannot write")
    if target.is_dir():
        raise InputError(flag, f"{text!r} is a folder; give a file name")
    if target.exists() and not target.is_file():  # a device or FIFO: written in place
        if not os.access(target, os.W_OK):
            raise InputError(flag, f"cannot write {text!r}: permission denied")
        return text
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        raise InputError(flag, f"cannot write {text!r}: its folder {str(folder)!r} does not "
                               f"exist")
    if not folder.is_dir():
        raise InputError(flag, f"cannot write {text!r}: {str(folder)!r} is not a folder")
    if not _writable_folder(folder):
        raise InputError(flag, f"cannot write {text!r}: no permission to write in "
                               f"{str(folder)!r}")
    return text


def check_output_folder(flag: str, path: object) -> str | None:
    """``path`` (None: not given) if figures can be written into it (it is created with its
    parents when missing), else an :class:`InputError` naming ``flag``.

    Example:
        >>> check_output_folder("--figures-dir", None) is None
        True
    """
    if path is None:
        return None
    text, target = _usable_path(flag, path, "a folder", "cannot write figures to")
    if target.exists() and not target.is_dir():
        raise InputError(flag, f"{text!r} is not a directory")
    existing = target
    while not existing.exists():
        if existing.parent == existing:
            break
        existing = existing.parent
    if not existing.is_dir():
        raise InputError(flag, f"cannot write figures to {text!r}: {str(existing)!r} is not a "
                               f"folder")
    if not _writable_folder(existing):
        raise InputError(flag, f"cannot write figures to {text!r}: no permission to write in "
                               f"{str(existing)!r}")
    return text


#: ``--output FILE`` of every command that prints a result (standard output when not given).
OUTPUT = text_flag("output", "--output", check_output_file, type="path",
                   range="a file in a writable folder", unit="",
                   meaning="where the output goes instead of standard output")
#: ``--figures-dir DIR`` of ``table --figures``.
FIGURES_DIR = text_flag("figures_dir", "--figures-dir", check_output_folder, type="path",
                        range="a writable directory", unit="",
                        meaning="where the redrawn figures go")
