"""The cache of code generated from the sympy statements, so a point evaluation needs no sympy.

:mod:`boundcalc.calc.evaluator` prints every statement's expressions as Python source (mpmath and
numpy) and its metadata as JSON; this module keeps those texts under
``<cache_root>/<code key>/`` (:func:`boundcalc.files.cache_root`: ``$BOUNDCALC_CACHE_DIR``, else
``$XDG_CACHE_HOME/boundcalc``, else ``~/.cache/boundcalc``; ``BOUNDCALC_NO_CACHE=1`` turns the
cache off). The key (:func:`code_key`) hashes every ``theory`` source file, the generator
(:mod:`boundcalc.calc.evaluator` and this module), sympy's version, the Python version and
:data:`CODE_FORMAT`, so a changed theory file is never served stale code. Each file is sealed with
the key and the hash of its body and read back only when both match; code is executed only from a
folder private to this user, below folders that only this user or root can change
(:func:`boundcalc.files.untrusted_reason`). Folders of other keys untouched for a week are pruned.
"""

from __future__ import annotations

import contextlib
import hashlib
import shutil
import sys
import time
from collections.abc import Callable
from functools import cache
from pathlib import Path

from boundcalc.files import cache_root, fallback_cache_root, make_private_folder, write_atomic
from boundcalc.version import __version__

__all__ = ["CODE_FORMAT", "code_key", "generated", "read_cached", "seal", "unseal",
           "write_cached"]

#: Version of the cache layout and of the generated code; part of the cache key.
CODE_FORMAT = "3"

#: Modules whose source the generated code depends on, besides ``theory/*.py``.
_GENERATORS = ("evaluator.py", "codecache.py")


@cache
def code_key() -> str:
    """Hash of what the generated code depends on: every ``theory/*.py`` file, the generator
    modules, sympy's version, the Python version and :data:`CODE_FORMAT` (32 hex digits).

    Example:
        >>> len(code_key()), set(code_key()) <= set("0123456789abcdef")
        (32, True)
    """
    import importlib.util

    digest = hashlib.sha256()
    digest.update(f"{CODE_FORMAT}|{__version__}|{sys.version_info[:2]}".encode())
    here = Path(__file__).parent
    for name in _GENERATORS:
        digest.update((here / name).read_bytes())
    spec = importlib.util.find_spec("boundcalc.theory")
    folders = list(spec.submodule_search_locations or []) if spec else []
    for folder in folders[:1]:
        for path in sorted(Path(folder).glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    sympy_spec = importlib.util.find_spec("sympy")
    if sympy_spec is not None and sympy_spec.origin:
        release = Path(sympy_spec.origin).with_name("release.py")
        digest.update(release.read_bytes() if release.exists() else sympy_spec.origin.encode())
    return digest.hexdigest()[:32]


def _folder() -> Path | None:
    """The folder of this key's code: under :func:`boundcalc.files.cache_root`, else (when that
    cannot be created or is not private to this user) under this user's folder of the temporary
    directory; None when the cache is off or neither works."""
    primary = cache_root()
    if primary is None:
        return None
    for root in dict.fromkeys([primary, fallback_cache_root()]):
        folder = root / code_key()
        fresh = not folder.exists()
        if make_private_folder(folder) is not None:   # not creatable, or others could change it
            continue
        if fresh:
            _prune(root, keep=folder.name)
        return folder
    return None


def _prune(root: Path, keep: str, days: float = 7.0) -> None:
    """Remove the code of other keys (older theory versions) untouched for ``days``."""
    cutoff = time.time() - days * 86400
    try:
        for entry in root.iterdir():
            if (entry.name != keep and len(entry.name) == 32 and entry.is_dir()
                    and all(c in "0123456789abcdef" for c in entry.name)
                    and entry.stat().st_mtime < cutoff):
                shutil.rmtree(entry, ignore_errors=True)
    except OSError:
        pass


def seal(text: str) -> str:
    """``text`` behind a first line naming the code key and the hash of ``text``."""
    body_hash = hashlib.sha256(text.encode()).hexdigest()
    return f"# boundcalc generated code {code_key()} {body_hash}\n{text}"


def unseal(sealed: str) -> str | None:
    """The body of a :func:`seal` ed text, or None when its key or hash does not match.

    Example:
        >>> unseal(seal("x = 1\\n")), unseal(seal("x = 1\\n").replace("1", "2"))
        ('x = 1\\n', None)
    """
    head, _, body = sealed.partition("\n")
    parts = head.split()
    if (len(parts) != 6 or parts[:4] != ["#", "boundcalc", "generated", "code"]
            or parts[4] != code_key()
            or parts[5] != hashlib.sha256(body.encode()).hexdigest()):
        return None
    return body


def read_cached(name: str) -> str | None:
    """The cached text called ``name`` of this key, None when absent, unreadable or not sealed
    by this key."""
    folder = _folder()
    if folder is None:
        return None
    try:
        sealed = (folder / name).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return unseal(sealed)


def write_cached(name: str, text: str) -> None:
    """Keep ``text`` as ``name`` (atomically); without a usable folder it is simply not kept."""
    folder = _folder()
    if folder is None:
        return
    with contextlib.suppress(OSError):
        write_atomic(folder / name, seal(text), make_parents=False)


def generated(name: str, make: Callable[[], str]) -> str:
    """The generated text called ``name``: from the cache, else made (with sympy) and cached."""
    text = read_cached(name)
    if text is None:
        text = make()
        write_cached(name, text)
    return text
