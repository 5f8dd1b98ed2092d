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
directory when that one cannot be used, and refuses any folder another user could change (code
is executed from it): :func:`untrusted_reason` checks the folder (or file) *and every folder
above it*, since whoever may rename an entry of a folder above can swap the whole cache for one
of their own. Missing folders are created with mode 0700, whatever the umask.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import IO

__all__ = ["cache_root", "current_umask", "fallback_cache_root", "honour_umask",
           "make_private_folder", "private_cache_folder", "private_folder", "untrusted_reason",
           "user_id", "write_atomic"]

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


def untrusted_reason(path: str | os.PathLike) -> str | None:
    """Why code kept at ``path`` (a cache folder or a file in one) must not be trusted, or None
    when it may be.

    ``path`` itself must belong to this user and be writable by nobody else (group or others);
    every folder above it, on the path as written and on the path with symbolic links resolved,
    must belong to this user or to root and, when others may write to it, be sticky (as ``/tmp``
    is: there nobody can rename another user's entries). A folder above that another user owns,
    or that others may write to without the sticky bit, lets them move the cache aside and put
    their own in its place, so a check of the leaf alone proves nothing.

    Example:
        >>> import tempfile
        >>> untrusted_reason(tempfile.mkdtemp()) is None
        True
    """
    if not hasattr(os, "getuid"):  # pragma: no cover - not POSIX: no owners to check
        return None
    me = os.getuid()
    target = Path(os.path.abspath(path))
    try:
        st = target.stat()
    except OSError as exc:
        return f"{target} cannot be read ({exc.strerror or exc})"
    if st.st_uid != me:
        return f"{target} belongs to uid {st.st_uid}, not to this user (uid {me})"
    if st.st_mode & 0o022:
        return f"{target} is writable by others (mode {stat.S_IMODE(st.st_mode):o})"
    above = dict.fromkeys([*target.parents, *Path(os.path.realpath(target)).parents])
    for folder in above:
        try:
            st = folder.stat()
        except OSError as exc:
            return f"{folder} above {target} cannot be read ({exc.strerror or exc})"
        if st.st_uid not in (me, 0):
            return (f"{folder} above {target} belongs to uid {st.st_uid}, not to this user or "
                    f"root")
        if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
            return (f"{folder} above {target} is writable by others without the sticky bit "
                    f"(mode {stat.S_IMODE(st.st_mode):o})")
    return None


def private_folder(path: Path) -> bool:
    """True when ``path`` (a folder, or a file in one) belongs to this user and nobody else can
    change it or any folder above it (:func:`untrusted_reason`; code from it is executed)."""
    return untrusted_reason(path) is None


def make_private_folder(folder: Path) -> str | None:
    """Create ``folder`` and its missing parents, each with mode 0700 (``mkdir -p`` would give
    the parents the umask's mode, 0777 under umask 0, which no cache may sit below); None when
    it can then hold code (:func:`untrusted_reason`), else why not."""
    missing = []
    for candidate in [folder, *folder.parents]:
        if candidate.exists():
            break
        missing.append(candidate)
    try:
        for candidate in reversed(missing):
            with contextlib.suppress(FileExistsError):     # made meanwhile: checked below
                candidate.mkdir(mode=0o700)                # the umask can only take bits away
    except OSError as exc:
        return f"{folder} cannot be created ({exc.strerror or exc})"
    return untrusted_reason(folder)


def fallback_cache_root() -> Path:
    """This user's own cache folder under the temporary directory (never a shared one)."""
    return Path(tempfile.gettempdir()) / f"boundcalc-{user_id()}"


def private_cache_folder(*parts: str, primary: Path | None = None) -> Path | None:
    """The cache folder ``<root>/<parts...>``, created with mode 0700: under ``primary`` (default
    :func:`cache_root`), else (when that cannot be created or is not private to this user, it
    or a folder above it: :func:`untrusted_reason`) under :func:`fallback_cache_root`; None when
    the cache is off or neither works."""
    first = cache_root() if primary is None else primary
    if first is None:
        return None
    for root in dict.fromkeys([first, fallback_cache_root()]):
        folder = root.joinpath(*parts)
        if make_private_folder(folder) is None:
            return folder
    return None
