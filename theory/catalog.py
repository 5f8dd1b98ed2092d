"""The statement table: one row per calculator statement, in the order the CLI lists them.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers*
(AISTATS 2026) gives the calculator its Transformer statements (Definition 1, Lemmas 2, 3, 5, 6,
Theorem 1, Proposition 1, Remark 9) and the IndRNN's Proposition 2. Each row says where the sympy
builder of a statement lives and what the CLI shows for it, so that the CLI (which reads this
table on its cold path, before and without importing sympy) and
:mod:`boundcalc.theory.registry` (which imports the builders) list the same statements, and
which measurement could falsify it (:attr:`StatementInfo.check`, a row of :data:`FALSIFIERS`:
the module of :mod:`boundcalc.validators` and its function that ``boundcalc validate`` runs).
The proof routes live here too: their type (:data:`Route`), the default (:data:`DEFAULT_ROUTE`,
the one default of every function that takes a ``route``), the named subsets of the routes
(:data:`BLOCKWISE_ROUTES`, :data:`HEAD_AVERAGE_ROUTES`, :data:`MEASURED_ROUTES`) and the one
function that turns a (statement, route) pair into a registry key (:func:`route_key`; its inverse
:func:`base_name`); each falsifier row lists the routes it measures (:attr:`Falsifier.routes`).

Pure data: this module imports neither sympy nor any other theory module. A test checks every row
against the statement its builder returns.

Example:
    >>> [row.name for row in STATEMENTS if row.routed]
    ['theorem1', 'prop1', 'remark9']
    >>> BY_NAME["lemma3"].module, BY_NAME["lemma3"].help
    ('lemma3', 'Lemma 3 (linearization error ε_lin).')
    >>> row = FALSIFIER[BY_NAME["remark9"].check]
    >>> row.name, row.module, row.function
    ('theorem1', 'checks.training', 'theorem1_cell')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

#: A proof route of the routed statements (Theorem 1, Proposition 1, Remark 9; ``--route``):
#: ``tight`` (head-average event E_avg, Cauchy–Schwarz drift, per-head block bounds with the
#: attention third-moment constant 4/(3√3); derivations.md §7.7 with §7.10 and §2.2), ``paper``
#: (the paper's route on the max event E_U, §7.1–7.5), ``gradnorm`` (tight plus
#: ‖∇R̂‖² ≤ 4L²R̂, §7.9), ``joint`` (tight with joint (U, W) norms, §7.7 before §7.10) or
#: ``blocks`` (tight with the block bounds' earlier constant 32/27 in H, §2.1: the default
#: route before §2.2). The text is the route's name in the CLI, the JSON and the registry keys.
Route = Literal["tight", "paper", "gradnorm", "joint", "blocks"]

#: Every proof route (``--route``'s choices), the default first.
ROUTES: tuple[Route, ...] = get_args(Route)

#: The default proof route: the route of ``--route`` not given, of a statement's registry key
#: without a route suffix, and the default of every function that takes a ``route``.
DEFAULT_ROUTE: Route = ROUTES[0]

#: The routes whose per-head bounds are the block bounds of derivations.md §7.10 (``joint`` and
#: ``paper`` use joint (U, W) norms).
BLOCKWISE_ROUTES: tuple[Route, ...] = ("tight", "gradnorm", "blocks")

#: The block routes whose H uses the attention third-moment constant 4/(3√3) of derivations.md
#: §2.2 (``blocks`` keeps §2.1's 32/27).
THIRD_MOMENT_ROUTES: tuple[Route, ...] = ("tight", "gradnorm")

#: The routes on the head-average event E_avg (every route but the paper's, which is on the max
#: event E_U).
HEAD_AVERAGE_ROUTES: tuple[Route, ...] = tuple(r for r in ROUTES if r != "paper")

#: The routes measured against a run, each a priori and a posteriori (measured U(0) and input
#: geometry): ``boundcalc check`` reports them, and the training falsifiers (``theorem1``,
#: ``prop1``) and the run decomposition measure them.
MEASURED_ROUTES: tuple[Route, ...] = ("tight", "paper")


@dataclass(frozen=True)
class StatementInfo:
    """One calculator statement.

    Attributes:
        name: the CLI command and registry key (``theorem1``, ``lemma2`` ...).
        module: the module of :mod:`boundcalc.theory` whose function ``name`` builds the
            :class:`~boundcalc.theory.statement.Statement` (``boundcalc.theory.<module>.<name>``).
        routed: True when the statement has a proof route (``--route``, one of :data:`ROUTES`);
            its builder then takes ``route`` (default :data:`DEFAULT_ROUTE`) and the registry
            holds it once per route, under :func:`route_key` ``(name, route)``.
        what: the result as the command's ``--help`` names it ("Evaluate {what} at one parameter
            point: ...").
        help: the one-line help of the command (its line in ``boundcalc --help``).
        uses_step_size: True when the statement's constants contain ``theorem_step_size`` (η*),
            i.e. the statement has a step size and an optimization term.
        check: the :data:`FALSIFIERS` row whose measurement could falsify the statement's bound
            (``boundcalc validate <check>``); None when none measures it.
    """

    name: str
    module: str
    routed: bool
    what: str
    help: str
    uses_step_size: bool
    check: str | None = None


#: Every calculator statement, in the order the CLI lists them.
STATEMENTS: tuple[StatementInfo, ...] = (
    StatementInfo(
        name="event", module="event", routed=False,
        what="Definition 1 (event radius u_∞ of max_i ‖U_i(0)‖)",
        help="Definition 1 (event radius u_∞ of max_i ‖U_i(0)‖).",
        uses_step_size=False, check="event"),
    StatementInfo(
        name="lemma2", module="lemma2", routed=False,
        what="Lemma 2 (Lipschitz constant L and smoothness β)",
        help="Lemma 2 (Lipschitz constant L and smoothness β).",
        uses_step_size=False, check="lemma2"),
    StatementInfo(
        name="lemma3", module="lemma3", routed=False,
        what="Lemma 3 (linearization error ε_lin)",
        help="Lemma 3 (linearization error ε_lin).",
        uses_step_size=False, check="lemma3"),
    StatementInfo(
        name="lemma5", module="lemma5", routed=False,
        what="Lemma 5 (approximation error ε_app)",
        help="Lemma 5 (approximation error ε_app).",
        uses_step_size=False, check="lemma5"),
    StatementInfo(
        name="lemma6", module="lemma6", routed=False,
        what="Lemma 6 (uniform envelopes)",
        help="Lemma 6 (uniform envelopes).",
        uses_step_size=False, check="lemma6"),
    StatementInfo(
        name="theorem1", module="theorem1", routed=True,
        what="Theorem 1 (ProjGD)",
        help="Theorem 1 (ProjGD): bounds on min_k R(theta_k) and the average iterate.",
        uses_step_size=True, check="theorem1"),
    StatementInfo(
        name="prop1", module="prop1", routed=True,
        what="Proposition 1 (ProjSGD, in expectation)",
        help="Proposition 1 (ProjSGD, minibatch b): the bounds in expectation.",
        uses_step_size=True, check="prop1"),
    StatementInfo(
        name="remark9", module="remark9", routed=True,
        what="Remark 9 (Theorem 1 with misspecified labels)",
        help="Remark 9: Theorem 1 plus the misspecification term B·eps_mis.",
        uses_step_size=True, check="theorem1"),
    StatementInfo(
        name="prop2", module="prop2", routed=False,
        what="Proposition 2 (IndRNN ProjGD; grows with T past the cutoff σ₁α ≥ 1)",
        help="Proposition 2 (IndRNN ProjGD, α = 3/2 or --alpha; grows with T past the cutoff "
             "σ₁α ≥ 1).",
        uses_step_size=True, check="prop2"),
)

#: Statement names, in CLI order.
NAMES: tuple[str, ...] = tuple(row.name for row in STATEMENTS)

#: Statements with a proof route (``--route``), in CLI order.
ROUTED: tuple[str, ...] = tuple(row.name for row in STATEMENTS if row.routed)

#: Names of the activation presets of :mod:`boundcalc.theory.activations` (``--activation``),
#: kept here as data so that checking the flag needs no sympy (a test checks they agree).
ACTIVATIONS: tuple[str, ...] = ("tanh", "erf")


def route_key(name: str, route: object = None) -> str:
    """Registry key of catalog statement ``name`` on proof ``route``: ``name`` on
    :data:`DEFAULT_ROUTE` (and for None, no route given), ``<name>_<route>`` on another route;
    the one place a key is built from a route. A route that is not one of :data:`ROUTES`
    (case and surrounding spaces aside), or any route given for a statement with one proof
    route, is a ``ValueError`` whose message reads after the flag's name
    (``--route must be ...``).

    Example:
        >>> route_key("prop1", "paper"), route_key("theorem1", " Tight "), route_key("lemma2")
        ('prop1_paper', 'theorem1', 'lemma2')
        >>> route_key("lemma2", "paper")
        Traceback (most recent call last):
        ...
        ValueError: is for theorem1, prop1, remark9 only, not lemma2 (it has one proof route)
    """
    if route is None:
        return name
    key = str(route).strip().lower()
    if key not in ROUTES:
        raise ValueError(f"must be one of {', '.join(ROUTES)}, got {route!r}")
    if name not in ROUTED:
        raise ValueError(f"is for {', '.join(ROUTED)} only, not {name} (it has one proof route)")
    return name if key == DEFAULT_ROUTE else f"{name}_{key}"


def base_name(key: str) -> str:
    """The catalog statement of registry key ``key`` (``theorem1_paper`` → ``theorem1``), the
    inverse of :func:`route_key`.

    Example:
        >>> base_name("prop1_gradnorm"), base_name("lemma2")
        ('prop1', 'lemma2')
    """
    for route in ROUTES:
        stem = key.removesuffix(f"_{route}")
        if route != DEFAULT_ROUTE and stem != key and stem in ROUTED:
            return stem
    return key


@dataclass(frozen=True)
class Falsifier:
    """One measurement of ``boundcalc validate``: what could falsify a statement's bound.

    Attributes:
        name: the ``validate`` argument (``STATEMENT``) and the cell name in a run directory.
        module: the module of :mod:`boundcalc.validators` that measures it
            (``boundcalc.validators.<module>``).
        function: its function ``function(settings, seed)`` → the cell's measured-vs-bound
            records (``settings``: :class:`boundcalc.validation.settings.ValidationSettings`).
        in_all: True when ``validate all`` runs it.
        measures: what it measures, one line.
        routes: the proof routes whose bounds it measures, in the order of its records (each
            such record names its ``route``; the cell passes them to its measurement); empty
            when it measures only statements with one proof route.
    """

    name: str
    module: str
    function: str
    in_all: bool
    measures: str
    routes: tuple[Route, ...] = ()


#: Every measurement of ``boundcalc validate``, in the order ``validate all`` runs them (cheap
#: first); the statements of :data:`STATEMENTS` name theirs in :attr:`StatementInfo.check`.
FALSIFIERS: tuple[Falsifier, ...] = (
    Falsifier("event", "checks.event", "cell", True,
              "max_i ‖U_i(0)‖ against u_∞ and the head-average radius ū, over many inits",
              routes=("tight",)),
    Falsifier("lemma2", "checks.lemma2", "cell", True,
              "adversarial and on-data sup ‖∇f‖ and |eigenvalue| of ∇²f against L and β"),
    Falsifier("lemma3", "checks.lemma3", "cell", True,
              "ascent on |f − f_lin| from the gradient-aligned boundary point against ε_lin"),
    Falsifier("lemma5", "checks.lemma5", "cell", True,
              "max_j |f_lin(X_j; θ̄) − f*(X_j)| against ε_app (both routes), over many inits",
              routes=("paper", "tight")),
    Falsifier("lemma6", "checks.lemma6", "cell", True,
              "sup |f| and ‖∇R̂‖ on Ω_ρ against the envelopes F and 2LB"),
    Falsifier("remark3", "checks.remark3", "cell", True,
              "‖X J Xᵀ‖ and sup ‖∇f‖ as T grows: one T-free bound at every T"),
    Falsifier("tight", "checks.tight", "cell", True,
              "the tight route's L, ε_lin, ε_tay, ε_cf, F, Y and per-head block bounds Φ, H on "
              "the head-average event", routes=("tight",)),
    Falsifier("theorem1", "checks.training", "theorem1_cell", True,
              "a ProjGD run against Theorem 1's (and Remark 9's) bounds on both routes",
              routes=MEASURED_ROUTES),
    Falsifier("prop1", "checks.training", "prop1_cell", True,
              "ProjSGD runs against Proposition 1's bounds (in expectation)",
              routes=MEASURED_ROUTES),
    Falsifier("prop2", "indrnn", "prop2_cell", False,
              "the IndRNN's G_T, H_T, L and ε_lin at a boundary point of Ω_ρ"),
    Falsifier("generalization", "encoder", "generalization_cell", False,
              "GD on the GD generalization bound's encoder against Lemma 4 and Theorem 5"),
)

#: ``validate`` name → its :class:`Falsifier`.
FALSIFIER: dict[str, Falsifier] = {row.name: row for row in FALSIFIERS}


#: Name → row.
BY_NAME: dict[str, StatementInfo] = {row.name: row for row in STATEMENTS}

__all__ = ["ACTIVATIONS", "BLOCKWISE_ROUTES", "BY_NAME", "DEFAULT_ROUTE", "FALSIFIER",
           "FALSIFIERS", "HEAD_AVERAGE_ROUTES", "MEASURED_ROUTES", "NAMES", "ROUTED", "ROUTES",
           "STATEMENTS", "THIRD_MOMENT_ROUTES", "Falsifier", "Route", "StatementInfo", "base_name",
           "route_key"]
