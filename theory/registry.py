"""Name → statement builder, the single lookup used by the CLI, the docs and the validators."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from .event import event
from .lemma2 import lemma2
from .lemma3 import lemma3
from .lemma5 import lemma5
from .lemma6 import lemma6
from .prop1 import prop1
from .prop2 import prop2
from .remark9 import remark9
from .statement import Statement
from .theorem1 import theorem1

#: Statements with a selectable proof route; ``<name>_paper`` is the paper's route.
ROUTED = ("theorem1", "prop1", "remark9")

BUILDERS: dict[str, Callable[[], Statement]] = {
    "event": event,
    "lemma2": lemma2,
    "lemma3": lemma3,
    "lemma5": lemma5,
    "lemma6": lemma6,
    "theorem1": theorem1,
    "prop1": prop1,
    "prop2": prop2,
    "remark9": remark9,
    "theorem1_paper": lambda: theorem1(route="paper"),
    "prop1_paper": lambda: prop1(route="paper"),
    "remark9_paper": lambda: remark9(route="paper"),
}


def routed_name(name: str, route: str) -> str:
    """Registry key of statement ``name`` on proof ``route`` (``tight`` keeps the name).

    Example:
        >>> routed_name("theorem1", "paper"), routed_name("lemma2", "paper")
        ('theorem1_paper', 'lemma2')
    """
    if route not in ("tight", "paper"):
        raise ValueError(f"`route` must be 'tight' or 'paper', got {route!r}")
    return f"{name}_paper" if route == "paper" and name in ROUTED else name


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
