"""Remark 3: the constants do not grow with the sequence length T.

:func:`remark3_table` measures, for T = 1 … 1024 (:data:`REMARK3_T`), the largest ‖X J Xᵀ‖_op
(the attention covariance; its maximiser re-evaluated exactly in mpmath by :func:`xjx_op_exact`)
and sup ‖∇_θ f‖ by adversarial search, against the T-free bound 1 and the calculator's L.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from boundcalc.validation.settings import ValidationSettings

from ..model import Activation
from .adversary import head_covariance, search_lipschitz
from .ascent import ascend
from .lemma2 import lipschitz_supremum, lipschitz_worst_case
from .records import (
    DEFAULT_STARTS,
    DEFAULT_STEPS,
    check_args,
    cpu_threads,
    record,
    record_settings,
    setup,
)
from .space import (
    INPUT_VARS,
    Config,
    SearchSpace,
    concat_configs,
    queries_of,
    random_configuration,
    theta_of,
)

__all__ = ["REMARK3_T", "remark3_table", "xjx_op_exact", "cell"]


#: The sequence lengths of Remark 3's table.
REMARK3_T = (1, 4, 16, 64, 256, 1024)


def xjx_op_exact(X: Tensor, W: Tensor, q: Tensor, *, dps: int = 40) -> tuple[float, float]:
    """λ_max(X J(z) Xᵀ) of one head and one sample, in mpmath at ``dps`` digits.

    The floating-point inputs are taken as exact numbers: z_t = x_tᵀ W q, s = softmax(z),
    X J Xᵀ = Σ_t s_t x_t x_tᵀ − (Σ_t s_t x_t)(Σ_t s_t x_t)ᵀ, and its largest eigenvalue
    (``mpmath.eigsy``) are evaluated with ``dps`` significant digits, so the result is the value
    of this configuration, free of the float64 summation error over T tokens (≈ T·eps, enough to
    read 1 + 5e-15 at T = 1024 where Remark 3's bound 1 is attained with equality). Also returns
    max_t ‖x_t‖², evaluated the same way: Remark 3's bound is max_t ‖x_t‖² (the variance of
    x_tᵀv under s is at most its second moment), i.e. 1 on the lemmas' domain.

    Shapes: X (T, d), W (d, d), q (d,).

    Example:
        >>> X = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)
        >>> xjx_op_exact(X, torch.zeros(2, 2, dtype=torch.float64), torch.ones(2))
        (1.0, 1.0)
    """
    import mpmath

    rows = X.detach().cpu().double().tolist()
    Wl = W.detach().cpu().double().tolist()
    ql = q.detach().cpu().double().tolist()
    d = len(ql)
    with mpmath.workdps(dps):
        x = [[mpmath.mpf(v) for v in row] for row in rows]
        Wq = [mpmath.fsum(mpmath.mpf(Wl[a][b]) * mpmath.mpf(ql[b]) for b in range(d))
              for a in range(d)]
        z = [mpmath.fsum(xt[a] * Wq[a] for a in range(d)) for xt in x]
        top = max(z)
        e = [mpmath.exp(zt - top) for zt in z]
        total = mpmath.fsum(e)
        s = [et / total for et in e]
        mean = [mpmath.fsum(st * xt[a] for st, xt in zip(s, x, strict=True)) for a in range(d)]
        cov = mpmath.matrix(d, d)
        for a in range(d):
            for b in range(a, d):
                v = mpmath.fsum(st * xt[a] * xt[b] for st, xt in zip(s, x, strict=True))
                cov[a, b] = cov[b, a] = v - mean[a] * mean[b]
        eig = mpmath.eigsy(cov, eigvals_only=True)
        top_eig = max(eig[i] for i in range(d))
        norm_sq = max(mpmath.fsum(v * v for v in xt) for xt in x)
        return float(top_eig), float(norm_sq)


def _xjx_argmax_exact(space: SearchSpace, cfg: Config,
                      act: Activation) -> tuple[float, float, float]:
    """(exact λ_max at the float argmax, float max, exact max‖x_t‖² there) over all starts,
    samples and heads of ``cfg``."""
    with torch.no_grad():
        eig = torch.linalg.eigvalsh(head_covariance(space, cfg, act)).amax(-1)   # (S, n, m)
        flat = int(eig.argmax())
        s_i, n_i, m_i = (int(v) for v in torch.unravel_index(torch.tensor(flat), eig.shape))
        W = theta_of(space, cfg).W[s_i, m_i]
        q = queries_of(space, cfg)[s_i, n_i]
        exact, norm_sq = xjx_op_exact(cfg["X"][s_i, n_i], W, q)
    return exact, float(eig.max()), norm_sq


def remark3_table(m: int, d: int, rho: object, *, Ts: Sequence[int] = REMARK3_T,
                  delta: object = "0.05", activation: str = "tanh",
                  starts: int = DEFAULT_STARTS, steps: int = DEFAULT_STEPS, seed: int = 0,
                  query: str = "free", device: str | torch.device = "cpu",
                  dtype: torch.dtype | str = torch.float64, threads: int | None = 1) -> list[dict]:
    """Remark 3: the same T-free bounds at every T.

    For every T in ``Ts``: ``remark3.xjx_op`` — max ‖X J Xᵀ‖_op (ascent on ‖X J Xᵀ‖_F over
    tokens, W and q; the maximiser found with float eigvalsh, its value then evaluated exactly by
    :func:`xjx_op_exact`, also reported as ``float64_eigvalsh``) against 1;
    ``remark3.lipschitz_L`` — the adversarial max ‖∇_θ f‖ of :func:`search_lipschitz`
    (random starts and the hand-built case) against the T-free L, with the hand-built value
    and the true supremum. Two records per T.
    """
    if not Ts:
        raise ValueError("`Ts` must list at least one sequence length")
    for T in Ts:
        check_args(m=m, d=d, T=T, starts=starts, steps=steps, seed=seed, activation=activation)
    dev, dt, act, ev, rho_t, rho_f = setup("lemma2", m=m, d=d, rho=rho, delta=delta,
                                           activation=activation, device=device,
                                           dtype=dtype)
    L, u_inf = ev["bound"]["lipschitz_L"], ev["constants"]["u_inf"]
    records = []
    with cpu_threads(dev, threads):
        for T in Ts:
            settings = record_settings(m, d, T, rho_t, delta, act.name, starts, steps, seed,
                                       dev, dt)
            space = SearchSpace(m=m, d=d, T=T, rho=rho_f, u_inf=u_inf, query=query)
            cfg = random_configuration(space, starts, seed=seed, dtype=dt, device=dev)
            hand = lipschitz_worst_case(space, dtype=dt, device=dev)

            def cov_obj(c: Config, space=space) -> Tensor:
                return torch.linalg.matrix_norm(head_covariance(space, c, act)).flatten(1)

            res = ascend(space, concat_configs([hand, cfg]), cov_obj,
                         free=("W0", "dW") + INPUT_VARS, steps=steps)
            op, op_float, norm_sq = _xjx_argmax_exact(space, res.config, act)
            hand_op, _, _ = _xjx_argmax_exact(space, hand, act)
            records.append(record("remark3.xjx_op", "adversarial", op, 1.0, settings,
                                  hand_built=hand_op, float64_eigvalsh=op_float,
                                  max_token_norm_sq=norm_sq, query=query))
            sup = lipschitz_supremum(m=m, d=d, T=T, rho=rho, delta=delta, activation=activation)
            hand = lipschitz_worst_case(space, pre=sup["pre"], dtype=dt, device=dev)
            lres = search_lipschitz(space, act, starts=starts, steps=steps, seed=seed, dtype=dt,
                                    device=dev, extra=hand)
            records.append(record("remark3.lipschitz_L", "adversarial", lres.value, L, settings,
                                  hand_built=sup["attained"], true_max=sup["upper"],
                                  query=query))
    return records


def cell(settings: ValidationSettings, seed: int) -> list[dict]:
    """The ``validate remark3`` cell of ``seed``: :func:`remark3_table` (one T-free bound at every
    T of :data:`REMARK3_T`) at the run's width and search effort."""
    rho, _ = settings.radii_text()
    kwargs = settings.search_kwargs(seed)
    kwargs.pop("samples")
    return remark3_table(settings.m, settings.d, rho, **kwargs)
