"""The statement table: one row per calculator statement, in the order the CLI lists them.

Arda, Cayci & Eryilmaz, *Finite-Time Analysis of Gradient Descent for Shallow Transformers*
(AISTATS 2026) gives the calculator its Transformer statements (Definition 1, Lemmas 2, 3, 5, 6,
Theorem 1, Proposition 1, Remark 9) and the IndRNN's Proposition 2. Each row says where the sympy
builder of a statement lives and what the CLI shows for it, so that the CLI (which reads this
table on its cold path, before and without importing sympy) and
:mod:`boundcalc.theory.registry` (which imports the builders) list the same statements.

Pure data: this module imports neither sympy nor any other theory module. A test checks every row
against the statement its builder returns.

Example:
    >>> [row.name for row in STATEMENTS if row.routed]
    ['theorem1', 'prop1', 'remark9']
    >>> BY_NAME["lemma3"].module, BY_NAME["lemma3"].help
    ('lemma3', 'Lemma 3 (linearization error ε_lin).')
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class StatementInfo:
    """One calculator statement.

    Attributes:
        name: the CLI command and registry key (``theorem1``, ``lemma2`` ...).
        module: the module of :mod:`boundcalc.theory` whose function ``name`` builds the
            :class:`~boundcalc.theory.statement.Statement` (``boundcalc.theory.<module>.<name>``).
        routed: True when the statement has a proof route (``--route tight|paper|gradnorm``);
            its builder then takes ``route`` and the registry also holds ``<name>_paper`` and
            ``<name>_gradnorm``.
        what: the result as the command's ``--help`` names it ("Evaluate {what} at one parameter
            point: ...").
        help: the one-line help of the command (its line in ``boundcalc --help``).
        uses_step_size: True when the statement's constants contain ``theorem_step_size`` (η*),
            i.e. the statement has a step size and an optimization term.
    """

    name: str
    module: str
    routed: bool
    what: str
    help: str
    uses_step_size: bool


#: Every calculator statement, in the order the CLI lists them.
STATEMENTS: tuple[StatementInfo, ...] = (
    StatementInfo(
        name="event", module="event", routed=False,
        what="Definition 1 (event radius u_∞ of max_i ‖U_i(0)‖)",
        help="Definition 1 (event radius u_∞ of max_i ‖U_i(0)‖).",
        uses_step_size=False),
    StatementInfo(
        name="lemma2", module="lemma2", routed=False,
        what="Lemma 2 (Lipschitz constant L and smoothness β)",
        help="Lemma 2 (Lipschitz constant L and smoothness β).",
        uses_step_size=False),
    StatementInfo(
        name="lemma3", module="lemma3", routed=False,
        what="Lemma 3 (linearization error ε_lin)",
        help="Lemma 3 (linearization error ε_lin).",
        uses_step_size=False),
    StatementInfo(
        name="lemma5", module="lemma5", routed=False,
        what="Lemma 5 (approximation error ε_app)",
        help="Lemma 5 (approximation error ε_app).",
        uses_step_size=False),
    StatementInfo(
        name="lemma6", module="lemma6", routed=False,
        what="Lemma 6 (uniform envelopes)",
        help="Lemma 6 (uniform envelopes).",
        uses_step_size=False),
    StatementInfo(
        name="theorem1", module="theorem1", routed=True,
        what="Theorem 1 (ProjGD)",
        help="Theorem 1 (ProjGD): bounds on min_k R(theta_k) and the average iterate.",
        uses_step_size=True),
    StatementInfo(
        name="prop1", module="prop1", routed=True,
        what="Proposition 1 (ProjSGD, in expectation)",
        help="Proposition 1 (ProjSGD, minibatch b): the bounds in expectation.",
        uses_step_size=True),
    StatementInfo(
        name="remark9", module="remark9", routed=True,
        what="Remark 9 (Theorem 1 with misspecified labels)",
        help="Remark 9: Theorem 1 plus the misspecification term B·eps_mis.",
        uses_step_size=True),
    StatementInfo(
        name="prop2", module="prop2", routed=False,
        what="Proposition 2 (IndRNN ProjGD; grows with T past the cutoff σ₁α ≥ 1)",
        help="Proposition 2 (IndRNN ProjGD, α = 3/2 or --alpha; grows with T past the cutoff "
             "σ₁α ≥ 1).",
        uses_step_size=True),
)

#: Statement names, in CLI order.
NAMES: tuple[str, ...] = tuple(row.name for row in STATEMENTS)

#: Statements with a proof route (``--route``), in CLI order.
ROUTED: tuple[str, ...] = tuple(row.name for row in STATEMENTS if row.routed)

#: Names of the activation presets of :mod:`boundcalc.theory.activations` (``--activation``),
#: kept here as data so that checking the flag needs no sympy (a test checks they agree).
ACTIVATIONS: tuple[str, ...] = ("tanh", "erf")

#: Proof routes of the routed statements (``--route``), the default first. A routed statement
#: on route ``r`` other than the default has the registry key ``<name>_<r>``.
ROUTE_NAMES: tuple[str, ...] = ("tight", "paper", "gradnorm")


def base_name(key: str) -> str:
    """The catalog statement of registry key ``key`` (``theorem1_paper`` → ``theorem1``).

    Example:
        >>> base_name("prop1_gradnorm"), base_name("lemma2")
        ('prop1', 'lemma2')
    """
    for route in ROUTE_NAMES[1:]:
        stem = key.removesuffix(f"_{route}")
        if stem != key and stem in ROUTED:
            return stem
    return key


#: Name → row.
BY_NAME: dict[str, StatementInfo] = {row.name: row for row in STATEMENTS}

__all__ = ["ACTIVATIONS", "BY_NAME", "NAMES", "ROUTED", "ROUTE_NAMES", "STATEMENTS",
           "StatementInfo", "base_name"]
