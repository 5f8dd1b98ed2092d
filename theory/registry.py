"""Name → statement builder, the single lookup used by the CLI, the docs and the validators."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from .lemmas import definition1, lemma2, lemma3, lemma5, lemma6
from .proposition1 import proposition1
from .proposition2 import proposition2
from .remark9 import remark9
from .statement import Statement
from .theorem1 import theorem1

BUILDERS: dict[str, Callable[[], Statement]] = {
    "event": definition1,
    "lemma2": lemma2,
    "lemma3": lemma3,
    "lemma5": lemma5,
    "lemma6": lemma6,
    "theorem1": theorem1,
    "prop1": proposition1,
    "prop2": proposition2,
    "remark9": remark9,
}


@cache
def get_statement(name: str) -> Statement:
    """The :class:`Statement` called ``name`` (built once, then cached).

    Example:
        >>> get_statement("theorem1").title
        'Theorem 1 (ProjGD convergence)'
    """
    try:
        return BUILDERS[name]()
    except KeyError:
        raise ValueError(f"unknown statement {name!r}; choose one of {sorted(BUILDERS)}") from None
