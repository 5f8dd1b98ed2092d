"""Definition 1 (theory/event.py): the event radius u_∞ fails with probability δ, checked
symbolically and against sampled Gaussian maxima."""

from __future__ import annotations

import numpy as np
import sympy as sp
from boundcalc.theory import symbols as S
from boundcalc.theory.event import event_failure_probability, event_radius


def test_event_radius_failure_probability_is_delta():
    prob = sp.simplify(event_failure_probability(event_radius()))
    assert sp.simplify(prob - S.delta) == 0


def test_event_radius_covers_gaussian_maxima_at_the_stated_rate():
    rng = np.random.default_rng(0)
    m, d, delta, trials = 64, 8, 0.2, 4000
    radius = float(event_radius().subs({S.m: m, S.d: d, S.delta: sp.Rational(1, 5)}))
    norms = np.linalg.norm(rng.standard_normal((trials, m // 2, d)), axis=-1).max(axis=1)
    assert np.mean(norms > radius) <= delta
