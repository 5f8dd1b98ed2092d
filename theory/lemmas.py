"""Statement objects for Definition 1 and Lemmas 2, 3, 5 and 6, for the calculator.

Each builder packages the expressions of its module (``event``, ``lemma2``, ``lemma3``,
``lemma5``, ``lemma6``) into a :class:`Statement` with the probability and conditions of the lemma.
"""

from __future__ import annotations

from .conditions import m_even_condition
from .event import event_radius, head_average_radius
from .labels import LATEX_NAMES, LEMMA_DESCRIPTIONS
from .lemma2 import (
    feedforward_max,
    head_gradient_bound,
    head_hessian_bound,
    lipschitz_constant,
    readout_max,
    smoothness_constant,
)
from .lemma3 import attention_ffn_radius, linearization_error_bound
from .lemma5 import approximation_error_bound, approximation_log_factor
from .lemma6 import (
    label_envelope,
    loss_gradient_envelope,
    output_envelope,
    residual_envelope,
)
from .statement import Statement
from .symbols import delta

_M_EVEN = m_even_condition()


def definition1() -> Statement:
    """Definition 1: the event radius u_∞ for max_i ‖U_i(0)‖, and the head-average radius ū of the
    tight route (derivations.md §1.1); each event holds with probability ≥ 1 − δ."""
    return Statement(
        name="event",
        title="Definition 1 (event on U(0)) and Fact 4",
        summary="P(max_i ||U_i(0)|| <= u_inf) >= 1 - delta (max event E_U) and "
                "P((1/m) sum_i ||U_i(0)||^2 <= u_bar^2) >= 1 - delta (head-average event E_avg), "
                "each under the symmetric init.",
        constants={"u_inf": event_radius(), "u_bar": head_average_radius()},
        terms={},
        bound={"u_inf": event_radius(), "u_bar": head_average_radius()},
        probability=1 - delta,
        conditions=(_M_EVEN,),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


def lemma2() -> Statement:
    """Lemma 2: L and β on Ω_ρ, on the event E_U."""
    u_max = feedforward_max()
    lip, beta = lipschitz_constant(), smoothness_constant()
    return Statement(
        name="lemma2",
        title="Lemma 2 (local Lipschitz continuity and smoothness)",
        summary=("On E_U (probability >= 1 - delta), for every W(0) and every input with token "
                 "norms <= 1, theta -> f(X; theta) is L-Lipschitz and beta-smooth on Omega_rho."),
        constants={
            "u_inf": event_radius(),
            "u_max": u_max,
            "c_max": readout_max(),
            "head_gradient_G": head_gradient_bound(u_max),
            "head_hessian_H": head_hessian_bound(u_max),
        },
        terms={},
        bound={"lipschitz_L": lip, "smoothness_beta": beta},
        probability=1 - delta,
        conditions=(_M_EVEN,),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


def lemma3() -> Statement:
    """Lemma 3: uniform linearization error on Ω_ρ, on the event E_U."""
    return Statement(
        name="lemma3",
        title="Lemma 3 (linearization error)",
        summary=("On E_U (probability >= 1 - delta), sup over Omega_rho and over inputs with token "
                 "norms <= 1 of |f(X; theta) - f_lin(X; theta)| <= eps_lin."),
        constants={
            "u_inf": event_radius(),
            "u_max": feedforward_max(),
            "r_uw": attention_ffn_radius(),
        },
        terms={},
        bound={"eps_lin": linearization_error_bound()},
        probability=1 - delta,
        conditions=(_M_EVEN,),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


def lemma5() -> Statement:
    """Lemma 5: approximation error of the transported parameters."""
    return Statement(
        name="lemma5",
        title="Lemma 5 (approximation error)",
        summary=("With probability >= 1 - delta over the init, "
                 "max_j |f_lin(X_j; theta_bar) - f*(X_j)| <= eps_app."),
        constants={"log_factor": approximation_log_factor()},
        terms={},
        bound={"eps_app": approximation_error_bound()},
        probability=1 - delta,
        conditions=(_M_EVEN,),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )


def lemma6() -> Statement:
    """Lemma 6: uniform envelopes of f, y, f − y and ∇R̂ on Ω_ρ, on the event E_U."""
    return Statement(
        name="lemma6",
        title="Lemma 6 (uniform envelopes)",
        summary="On E_U (probability >= 1 - delta): envelopes of |f|, |y|, |f - y|, ||grad f||, "
                "||grad R||.",
        constants={"u_inf": event_radius(), "u_max": feedforward_max()},
        terms={},
        bound={
            "output_envelope_F": output_envelope(),
            "label_envelope_Y": label_envelope(),
            "residual_envelope_B": residual_envelope(),
            "lipschitz_L": lipschitz_constant(),
            "loss_gradient_envelope": loss_gradient_envelope(),
        },
        probability=1 - delta,
        conditions=(_M_EVEN,),
        descriptions=LEMMA_DESCRIPTIONS,
        latex_names=LATEX_NAMES,
    )
