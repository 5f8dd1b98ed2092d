"""Files the package writes: the one atomic writer and the one per-user cache folder.

Every file boundcalc writes for a user (``--output`` files, run directories, generated code,
compiled kernels) goes through :func:`write_atomic`: a temporary file in the target's folder,
``fsync``, then ``os.replace``, so a reader or an interrupted run never sees half a file; the
result gets the permissions a plain ``open`` would give it (``0o666`` less the umask), not
``mkstemp``'s ``0o600``. A target that exists and is not a regular file (a device such as
``/dev/stdout`` or ``/dev/full``, a FIFO) is written in place instead: replacing it would swap the
device for a file and lose the output.

Caches (generated code, compiled kernels) live under :func:`cache_root`:
``$BOUNDCALC_CACHE_DIR``, else ``$XDG_CACHE_HOME/boundcalc``, else ``~/.cache/boundcalc``;
:func:`private_cache_folder` falls back to a folder of this user's own under the temporary
directory when that one cannot be used, and refuses any folder another user could write to
(code is executed from it).
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO

__all__ = ["cache_root", "current_umask", "honour_umask", "private_cache_folder",
           "private_folder", "user_id", "write_atomic"]

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process umask, read without changing it where the OS allows (``/proc/self/status``);
    elsewhere set and restored at once under a lock."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def honour_umask(fd: int, path: str | os.PathLike | None = None) -> None:
    """Give a file made by :func:`tempfile.mkstemp` (always 0600) the mode a plain ``open``
    would: 0o666 & ~umask."""
    mode = 0o666 & ~current_umask()
    if hasattr(os, "fchmod"):
        os.fchmod(fd, mode)
    elif path is not None:  # pragma: no cover - not POSIX
        os.chmod(path, mode)


def _write_text(handle: IO[str], content: str | Iterable[str], final_newline: bool) -> None:
    """Write text or its pieces to ``handle``, with a final newline if asked and missing."""
    last = ""
    for piece in [content] if isinstance(content, str) else content:
        if piece:
            handle.write(piece)
            last = piece
    if final_newline and not last.endswith("\n"):
        handle.write("\n")


def write_atomic(path: str | os.PathLike, content: str | bytes | Iterable[str], *,
                 final_newline: bool = False, make_parents: bool = True) -> None:
    """Write ``content`` to ``path`` atomically: a temporary file in the same folder, ``fsync``,
    ``os.replace``. ``content`` is text, bytes, or an iterable of text pieces (streamed, so a
    large table is never held twice). With ``final_newline`` a text that does not end in a
    newline gets one. The file gets the permissions of a plain ``open``. A ``path`` that exists
    and is not a regular file (a device, a FIFO) is written in place, not replaced. Raises
    ``OSError`` (``IsADirectoryError`` when ``path`` is a folder, ``ENOSPC`` when the device is
    full); on any error the temporary file is removed and ``path`` is left as it was.

    Example:
        >>> import tempfile, os
        >>> target = os.path.join(tempfile.mkdtemp(), "sub", "out.txt")
        >>> write_atomic(target, ["a", "b"], final_newline=True)
        >>> open(target).read()
        'ab\\n'
    """
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(target))
    if target.exists() and not target.is_file():
        if isinstance(content, bytes):
            with open(target, "wb") as handle:
                handle.write(content)
        else:
            with open(target, "w", encoding="utf-8", newline="") as handle:
                _write_text(handle, content, final_newline)
        return
    folder = target.parent if str(target.parent) else Path(".")
    if make_parents:
        folder.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{target.name}.", suffix=".tmp")
    try:
        honour_umask(fd, tmp)
        if isinstance(content, bytes):
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
        else:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                _write_text(handle, content, final_newline)
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def user_id() -> str:
    """This user's numeric id as text (``user`` where the OS has none)."""
    return str(os.getuid()) if hasattr(os, "getuid") else "user"


def cache_root() -> Path | None:
    """Folder of boundcalc's caches: ``$BOUNDCALC_CACHE_DIR``, else ``$XDG_CACHE_HOME/boundcalc``
    (an absolute path only), else ``~/.cache/boundcalc``; None when ``BOUNDCALC_NO_CACHE`` is set
    (to anything but ``0`` or empty) or ``BOUNDCALC_CACHE_DIR`` is empty.

    Example:
        >>> import os
        >>> os.environ["BOUNDCALC_CACHE_DIR"] = "/tmp/bc-cache"
        >>> str(cache_root())
        '/tmp/bc-cache'
        >>> del os.environ["BOUNDCALC_CACHE_DIR"]
    """
    if os.environ.get("BOUNDCALC_NO_CACHE", "0").strip() not in ("", "0"):
        return None
    override = os.environ.get("BOUNDCALC_CACHE_DIR")
    if override is not None:
        return Path(override).expanduser() if override.strip() else None
    base = os.environ.get("XDG_CACHE_HOME", "").strip()
    if base and os.path.isabs(base):
        return Path(base) / "boundcalc"
    try:
        return Path.home() / ".cache" / "boundcalc"
    except RuntimeError:  # no home folder: the temporary-folder fallback only
        return Path(tempfile.gettempdir()) / f"boundcalc-{user_id()}"


def private_folder(path: Path) -> bool:
    """True when ``path`` is a folder owned by this user that nobody else can write to (code
    from it is executed)."""
    try:
        st = path.stat()
    except OSError:
        return False
    if not hasattr(os, "getuid"):  # pragma: no cover - not POSIX
        return True
    return st.st_uid == os.getuid() and not st.st_mode & 0o022


def fallback_cache_root() -> Path:
    """This user's own cache folder under the temporary directory (never a shared one)."""
    return Path(tempfile.gettempdir()) / f"boundcalc-{user_id()}"


def private_cache_folder(*parts: str, primary: Path | None = None) -> Path | None:
    """The cache folder ``<root>/<parts...>``, created with mode 0700: under ``primary`` (default
    :func:`cache_root`), else (when that cannot be created or is not private to this user) under
    :func:`fallback_cache_root`; None when the cache is off or neither works."""
    first = cache_root() if primary is None else primary
    if first is None:
        return None
    for root in dict.fromkeys([first, fallback_cache_root()]):
        folder = root.joinpath(*parts)
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            continue
        if private_folder(folder):
            return folder
    return None
