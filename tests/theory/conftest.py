"""Shared helpers of the theory tests."""
from __future__ import annotations

from collections.abc import Callable

import pytest

from boundcalc.evaluator import evaluate_grid

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
