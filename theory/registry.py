"""Name → statement builder, the single lookup used by the CLI, the docs and the validators.

The statements and their modules come from the statement table :mod:`boundcalc.theory.catalog`:
the builder of statement ``name`` is the function ``name`` of module
``boundcalc.theory.<module>``. A routed statement (a proof route, ``--route``) is registered twice:
``name`` on its default route (``tight``), ``<name>_paper`` on the paper's route and
``<name>_gradnorm`` on the gradient-norm route.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from importlib import import_module

from .catalog import ROUTE_NAMES, ROUTED, STATEMENTS
from .statement import Statement


def _builders() -> dict[str, Callable[[], Statement]]:
    """Every statement of the catalog, in catalog order, then the ``<name>_paper`` routes, then
    the ``<name>_gradnorm`` routes."""
    builders: dict[str, Callable[[], Statement]] = {}
    for row in STATEMENTS:
        builders[row.name] = getattr(import_module(f"{__package__}.{row.module}"), row.name)
    for route in ROUTE_NAMES[1:]:
        for name in ROUTED:
            builders[f"{name}_{route}"] = partial(builders[name], route=route)
    return builders


#: Registry key → builder (no argument) of the :class:`Statement`.
BUILDERS: dict[str, Callable[[], Statement]] = _builders()


def routed_name(name: str, route: str) -> str:
    """Registry key of statement ``name`` on proof ``route`` (``tight`` keeps the name).

    Example:
        >>> routed_name("theorem1", "paper"), routed_name("lemma2", "paper")
        ('theorem1_paper', 'lemma2')
    """
    if route not in ROUTE_NAMES:
        raise ValueError(f"`route` must be one of {ROUTE_NAMES}, got {route!r}")
    return f"{name}_{route}" if route != ROUTE_NAMES[0] and name in ROUTED else name


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


__all__ = ["BUILDERS", "ROUTED", "get_statement", "routed_name"]
