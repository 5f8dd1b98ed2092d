"""Paper 003's encoder (validators/encoder.py): the forward pass against the paper's formula
written per sample, the measurements at init, GD, and the confrontation with the bounds."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer import Typer
from typer.testing import CliRunner

torch = pytest.importorskip("torch")

from boundcalc.validators import encoder as E  # noqa: E402

from boundcalc.cli.generalization import generalization  # noqa: E402
from boundcalc.generalization.bound import evaluate_generalization  # noqa: E402
from boundcalc.inputs.params import InputError  # noqa: E402

pytestmark = pytest.mark.needs_torch


def test_forward_matches_the_papers_per_row_formula(token_samples):
    X, _ = token_samples(5, 4, 6)
    p = E.lecun_init(8, 6, seed=1)
    out = E.forward(p, X)
    for n in range(X.shape[0]):
        xn = X[n]
        total = torch.zeros(8, dtype=torch.float64)
        for i in range(xn.shape[0]):
            # L85: beta_i = softmax(X W_K^T W_Q x_i / sqrt(d_m)), k_i = ReLU(W_V X^T beta_i)
            beta = torch.softmax(xn @ p.W_K.T @ p.W_Q @ xn[i] / math.sqrt(8), dim=0)
            total += torch.relu(p.W_V @ xn.T @ beta)
        assert float(out[n]) == pytest.approx(float(p.w_O @ total / xn.shape[0]), rel=1e-12)


def test_lecun_init_is_seeded_and_has_the_lecun_variances():
    a, b = E.lecun_init(64, 32, seed=5), E.lecun_init(64, 32, seed=5)
    assert all(torch.equal(u, v) for u, v in zip(a, b, strict=True))
    big = E.lecun_init(256, 128, seed=0)
    assert float(big.W_Q.var()) == pytest.approx(1 / 128, rel=0.05)
    assert float(big.w_O.var()) == pytest.approx(1 / 256, rel=0.25)


def test_init_measurements_match_numpy(token_samples):
    X, y = token_samples(6, 3, 5)
    p = E.lecun_init(10, 5, seed=2)
    m = E.measure_init(p, X, y)
    feats = E.pre_features(p, X).numpy()
    assert m["alpha"] == pytest.approx(np.linalg.svd(feats, compute_uv=False).min(), rel=1e-10)
    f = feats @ p.w_O.numpy()
    assert m["Phi0"] == pytest.approx(0.5 * float(((f - y.numpy()) ** 2).sum()), rel=1e-12)
    assert m["R_X"] == pytest.approx(max(np.linalg.norm(x) for x in X.numpy()) / math.sqrt(3))
    for name, w in zip("QKV", p[:3], strict=True):
        assert m["norms"][f"W{name}0_F"] == pytest.approx(np.linalg.norm(w.numpy()), rel=1e-12)
        assert m["norms"][f"W{name}0_2"] == pytest.approx(np.linalg.norm(w.numpy(), 2), rel=1e-10)
    assert m["alpha_full_row_rank"]


def test_gd_on_phi_with_a_small_step_decreases_phi_and_records_the_radii(token_samples):
    X, y = token_samples(8, 3, 16)
    p = E.lecun_init(16, 16, seed=3)
    run = E.train_gd(p, X, y, steps=30, lr=0.05, X_test=X[:4], y_test=y[:4])
    assert run.phi.shape == (31,) and run.distance.shape == (31, 4)
    assert bool((run.phi[1:] <= run.phi[:-1]).all())
    assert float(run.distance[0].abs().max()) == 0.0
    assert all(r > 0 for r in run.radii)
    assert run.radii[3] == pytest.approx(float(torch.linalg.vector_norm(run.params.w_O - p.w_O)))


def test_check_run_feeds_the_calculator_with_the_measurements(token_samples):
    X, y = token_samples(8, 3, 16)
    rep = E.check_run(X, y, d_m=16, seed=3, steps=5, lr=0.05, X_test=X[:4], y_test=y[:4])
    again = evaluate_generalization(
        N=8, d_m=16, d_s=3, R_X=rep["init"]["R_X_used"], radii=tuple(rep["radii"].values()),
        delta=0.05, alpha=rep["init"]["alpha"], Phi0=rep["init"]["Phi0"],
        init_norms={k: rep["init"][k] for k in ("WQ0_F", "WK0_F", "WV0_F", "WQ0_2", "WK0_2",
                                                 "WV0_2", "WO0_2")})
    assert rep["bounds"]["derived"]["bound"] == again["bound"]
    assert {c["name"] for c in rep["conditions"]} == {"width", "alpha_square", "alpha_cube",
                                                       "probability_positive"}
    assert rep["empirical"]["lemma4_applies"]
    assert rep["empirical"]["phi_non_increasing"]


def test_check_run_flags_objectives_lemma4_does_not_cover(token_samples):
    X, y = token_samples(6, 3, 8)
    rep = E.check_run(X, y, d_m=8, seed=0, steps=2, lr=0.1, objective="cross_entropy",
                      eval_loss="logistic")
    assert not rep["empirical"]["lemma4_applies"]
    assert any("does not apply" in f for f in rep["findings"])


def test_a_cell_where_every_condition_holds_and_the_bounds_are_respected(token_samples):
    # N = 2, d_s = 2, d_m = 16 >= N^3; labels at the init outputs (Phi0 ~ 0) so both
    # alpha-conditions hold with unit radii (which contain the tiny trajectory); the probability
    # is 1 - 8e^-8 - 0.1 - e^-0.5 > 0
    X, _ = token_samples(2, 2, 16, seed=4)
    p = E.lecun_init(16, 16, seed=7)
    with torch.no_grad():
        y = E.forward(p, X) + 1e-9
    rep = E.check_run(X, y, d_m=16, seed=7, steps=3, lr=1e-3, X_test=X, y_test=y,
                      radii=(1.0, 1.0, 1.0, 1.0))
    assert rep["radii_contain_trajectory"]
    assert rep["all_conditions_hold"], rep["conditions"]
    assert rep["empirical"]["within_lemma4"]
    assert rep["true"]["within_theorem5"]
    assert not [f for f in rep["findings"] if f.startswith("VIOLATION")]
    # every condition holds, but the bound (about 2A + 3(A + Y) sqrt(log(2R/delta)/(2N))) is above
    # the loss range A + Y: vacuous, not guaranteed
    derived = rep["bounds"]["derived"]
    assert derived["statement"]["conditions_hold"] and not derived["statement"]["guaranteed"]
    assert derived["verdict"] == "vacuous"


def test_bad_arguments_name_the_argument(token_samples):
    X, y = token_samples(4, 2, 4)
    p = E.lecun_init(4, 4, seed=0)
    with pytest.raises(ValueError, match="`objective`"):
        E.train_gd(p, X, y, steps=1, lr=0.1, objective="hinge")
    with pytest.raises(ValueError, match="`lr`"):
        E.train_gd(p, X, y, steps=1, lr=0.0)
    with pytest.raises(ValueError, match="token dimension"):
        E.forward(p, torch.zeros(2, 2, 5, dtype=torch.float64))


def test_travelled_radii_put_1_over_R_into_M_and_can_break_the_alpha_condition(token_samples):
    # the same cell with the (tiny) travelled radii: M ~ 1/R explodes and alpha^2 >= 8 rho M ...
    # fails -- the conditions reward loose radii (documented)
    X, _ = token_samples(2, 2, 16, seed=4)
    p = E.lecun_init(16, 16, seed=7)
    with torch.no_grad():
        y = E.forward(p, X) + 1e-9
    rep = E.check_run(X, y, d_m=16, seed=7, steps=3, lr=1e-3)
    assert rep["radii_contain_trajectory"]
    assert not {c["name"]: c["holds"] for c in rep["conditions"]}["alpha_square"]


def test_radii_that_do_not_contain_the_trajectory_are_reported(token_samples):
    X, y = token_samples(6, 3, 8)
    rep = E.check_run(X, y, d_m=8, seed=0, steps=5, lr=0.2, radii=(1e-9, 1e-9, 1e-9, 1e-9))
    assert not rep["radii_contain_trajectory"]
    assert any("do not contain the trajectory" in f for f in rep["findings"])


def test_command_data_flag_measures_the_same_init_as_the_validators(token_samples, tmp_path):
    X, y = token_samples(12, 4, 8, seed=9)
    path = tmp_path / "cell.npz"
    np.savez(path, X=X.numpy(), y=y.numpy())
    app = Typer()
    app.command("generalization")(generalization)
    app.callback()(lambda: None)
    res = CliRunner().invoke(app, ["generalization", "--data", str(path), "--from-init", "5",
                                   "--dm", "16", "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    m = E.measure_init(E.lecun_init(16, 8, seed=5), X, y)
    assert out["inputs"]["N"] == 12 and out["inputs"]["d_s"] == 4
    assert out["quantities"]["alpha"] == m["alpha"] and out["quantities"]["Phi0"] == m["Phi0"]
    assert out["inputs"]["WV0_2"] == m["norms"]["WV0_2"]
    assert out["inputs"]["R_X"] == pytest.approx(m["R_X"])
    res = CliRunner().invoke(app, ["generalization", "--data", str(path), "--from-init", "5",
                                   "--alpha", "1"])
    assert isinstance(res.exception, InputError) and res.exception.flag == "--alpha"
    bad = tmp_path / "bad.npz"
    np.savez(bad, A=X.numpy())
    res = CliRunner().invoke(app, ["generalization", "--data", str(bad), "--from-init", "5"])
    assert isinstance(res.exception, InputError) and res.exception.flag == "--data"


def _run_where_every_lemma4_condition_holds(token_samples, path) -> tuple:
    """The cell of :func:`test_a_cell_where_every_condition_holds_and_the_bounds_are_respected`
    as a --data file: N = 2, d_s = 2, d = 16, labels at the outputs of the seed-7 init + 1e-9."""
    X, _ = token_samples(2, 2, 16, seed=4)
    with torch.no_grad():
        y = E.forward(E.lecun_init(16, 16, seed=7), X) + 1e-9
    np.savez(path, X=X.numpy(), y=y.numpy())
    return X, y


def test_command_with_every_condition_holding_is_vacuous_above_the_free_bounds(token_samples,
                                                                                tmp_path):
    path = tmp_path / "at_init.npz"
    _, y = _run_where_every_lemma4_condition_holds(token_samples, path)
    app = Typer()
    app.command("generalization")(generalization)
    app.callback()(lambda: None)
    args = ["generalization", "--data", str(path), "--from-init", "7", "--dm", "16",
            "--radii", "1,1,1,1"]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert all(c["holds"] for c in out["conditions"])
    assert out["verdict"] == "vacuous"
    assert not out["statement"]["guaranteed"] and out["statement"]["conditions_hold"]
    y_abs = np.abs(y.numpy())
    assert out["inputs"]["Y"] == float(y_abs.max())
    assert out["quantities"]["loss_range"] == pytest.approx(out["quantities"]["A"] + y_abs.max(),
                                                            rel=1e-12)
    assert out["measured"]["zero_predictor_loss"] == pytest.approx(float(y_abs.mean()), rel=1e-12)
    assert out["measured"]["initial_model_loss"] == pytest.approx(1e-9, rel=1e-5)
    assert out["bound"]["true_loss"] > out["quantities"]["loss_range"]
    assert res.stderr.startswith("VACUOUS: true_loss 83.44 ≥ 1e-09 = the initial model's "
                                 "measured loss on the data, ≥ 0.1317 = the zero predictor's "
                                 "measured loss on the data, ≥ 16.3 = A + Y, the loss range on "
                                 "the class (all 4 conditions hold)")
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0 and "VACUOUS: true_loss 83.44" in res.stdout
    assert "GUARANTEED" not in res.stdout
    assert CliRunner().invoke(app, [*args, "--strict"]).exit_code == 1
