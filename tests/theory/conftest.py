"""Shared helpers of the theory tests."""
from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np
import pytest
from boundcalc.theory.catalog import route_key

from boundcalc.calc.evaluator import evaluate_grid

#: The Fig. 1 setting (ρ = ν = 3, d = 8, n = 1000, K = 4000, δ = 0.05), m = 512, as evaluator
#: columns.
FIG1_COLUMNS = dict(m=512.0, n=1000.0, d=8.0, T=16.0, delta=0.05, rho_c=3.0, rho_u=3.0,
                    rho_w=3.0, nu_c=3.0, nu_u=3.0, nu_w=3.0, sigma0=1.0, sigma1=1.0,
                    sigma2=0.7698, K=4000.0, eta=None, b=1.0, epsilon_mis=0.0)


@pytest.fixture
def fig1_grid() -> Callable[..., dict]:
    """``fig1_grid(statement, **columns)``: the statement evaluated on a grid at the Fig. 1
    setting, ``columns`` overriding its values (arrays broadcast)."""
    def grid(name: str, **overrides):
        return evaluate_grid(name, {**FIG1_COLUMNS, **overrides})
    return grid


@pytest.fixture
def route_pairs(fig1_grid) -> Callable[..., Iterator[tuple[tuple, dict, dict]]]:
    """``route_pairs(statement, first, second)``: for every (d, ρ = ν-pair) of a grid over m (2 to
    2^40), K (10, 4000, 1e8) and ε_mis = 0.1, the label and ``statement``'s evaluation on routes
    ``first`` and ``second`` — the grid on which one route is compared with another."""
    def pairs(statement: str, first: str, second: str):
        m = 2.0 ** np.arange(1, 41)
        for d in (1.0, 8.0, 64.0):
            for rho, nu in ((3.0, 3.0), (2.0, 1.0), (0.5, 0.5), (10.0, 1.0)):
                cols = dict(m=m[:, None], d=d, rho_c=rho, rho_u=rho, rho_w=rho, nu_c=nu,
                            nu_u=nu, nu_w=nu, K=np.array([[10.0, 4000.0, 1e8]]),
                            epsilon_mis=0.1)
                yield ((statement, d, rho, nu), fig1_grid(route_key(statement, first), **cols),
                       fig1_grid(route_key(statement, second), **cols))
    return pairs
