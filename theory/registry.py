"""Name → statement builder, the single lookup used by the CLI, the docs and the validators.

The statements and their modules come from the statement table :mod:`boundcalc.theory.catalog`:
the builder of statement ``name`` is the function ``name`` of module
``boundcalc.theory.<module>``. The registry is keyed by (statement, route): a routed statement (a
proof route, ``--route``) is registered once per route of
:data:`~boundcalc.theory.catalog.ROUTES`, under the key
:func:`boundcalc.theory.catalog.route_key` gives the pair: ``name`` on the default route
(:data:`~boundcalc.theory.catalog.DEFAULT_ROUTE`, ``tight``), ``<name>_paper`` on the paper's
route, ``<name>_gradnorm`` on the gradient-norm route, ``<name>_joint`` on the tight route
without its block bounds and ``<name>_blocks`` on the tight route with the block bounds' earlier
constant 32/27 in H (the default route before derivations.md §2.2).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache, partial
from importlib import import_module

from .catalog import DEFAULT_ROUTE, ROUTED, ROUTES, STATEMENTS, route_key
from .statement import Statement


def _builders() -> dict[str, Callable[[], Statement]]:
    """Every statement of the catalog (a routed one on the default route), in catalog order,
    then the routed statements on each other route of :data:`ROUTES` in turn (``paper``,
    ``gradnorm``, ``joint``, ``blocks``)."""
    builders: dict[str, Callable[[], Statement]] = {}
    for row in STATEMENTS:
        builders[row.name] = getattr(import_module(f"{__package__}.{row.module}"), row.name)
    for route in ROUTES:
        if route == DEFAULT_ROUTE:
            continue
        for name in ROUTED:
            builders[route_key(name, route)] = partial(builders[name], route=route)
    return builders


#: Registry key → builder (no argument) of the :class:`Statement`.
BUILDERS: dict[str, Callable[[], Statement]] = _builders()


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


__all__ = ["BUILDERS", "ROUTED", "get_statement"]
