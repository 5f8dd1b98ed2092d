"""``validate theorem1|prop1 --decompose`` (old name ``--certify``): the run-measured decomposition
of the proof's slack on a small run (m 8, n 32, d 4, T 4, 50 steps) — monotone, every measured part
inside its a-posteriori bound, the drift identity to float64 rounding, the run itself ProjGD /
ProjSGD, the free yardstick beside the bounds, files and figure, refusals."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
from boundcalc.theory import symbols as S
from boundcalc.theory.aposteriori import theorem1_a_posteriori
from boundcalc.validators.checks import certify as C
from boundcalc.validators.checks.certify_chain import json_ready
from boundcalc.validators.data.inputs import derived_seed
from boundcalc.validators.model import Params, forward
from boundcalc.validators.train import proj_gd, proj_sgd

from boundcalc.calc.api import symbol_values
from boundcalc.calc.evaluator import evaluate_expressions
from boundcalc.cli import main
from boundcalc.inputs.params import validate

SMALL = {"m": 8, "n": 32, "d": 4, "T": 4}
RUN = {**SMALL, "rho": 2.0, "nu": 1.0, "steps": 50, "seed": 1, "teacher_width": 512,
       "anchors": 4, "record_every": 7, "keep_params": True}
CLI_SMALL = ["--m", "8", "--n", "32", "--d", "4", "--T", "4", "--steps", "50",
             "--teacher-width", "256", "--device", "cpu", "--quiet"]


@pytest.fixture(scope="module")
def runs():
    """ProjGD at η*, ProjGD and ProjSGD at a step that trains, and a run whose projection is
    active at every step (ρ = ν = 0.3, large η)."""
    return {
        "gd_star": C.certify("theorem1", **RUN),
        "gd": C.certify("theorem1", **RUN, eta=0.5),
        "sgd": C.certify("prop1", **RUN, eta=0.5, batch_size=4),
        "projected": C.certify("theorem1", **{**RUN, "rho": 0.3, "nu": 0.3}, eta=20.0),
    }


@pytest.mark.parametrize("name", ["gd_star", "gd", "sgd", "projected"])
@pytest.mark.slow
def test_every_level_is_at_most_the_level_above_it(runs, name):
    res = runs[name]
    assert res["summary"]["violations"] == 0
    for route in C.CHAIN_ROUTES:
        levels = [r for r in res["chain"] if r["route"] == route]
        assert [r["level"] for r in levels] == list(range(len(levels)))
        assert levels[0]["stage"] == "a-priori" and levels[-1]["key"] == "min"
        stages = [C.STAGES.index(r["stage"]) for r in levels]
        assert stages == sorted(stages)
        for above, row in zip(levels, levels[1:], strict=False):
            assert row["above"] == above["value"]
            if row["kind"] == "identity":        # the telescoped (a) equals the measured loss
                assert row["identity_residual"] < 1e-9, row
            elif row["kind"] != "expectation":   # (ProjSGD's zero-mean noise only)
                assert row["holds"] is True and row["value"] <= above["value"], row
        assert levels[-1]["value"] == pytest.approx(res["summary"]["min_loss"], rel=1e-12)
    assert all(r["holds"] is not False for r in res["parts"] if r["kind"] != "information")
    a_priori = evaluate_tight_a_priori(res)
    assert res["summary"]["a_priori_tight"] == pytest.approx(a_priori, rel=1e-12)


def evaluate_tight_a_priori(res) -> float:
    from boundcalc.calc.api import evaluate

    summ = res["summary"]
    inputs = validate(m=summ["m"], n=summ["n"], d=summ["d"], T=summ["T"],
                      delta=repr(summ["delta"]), rho=",".join(map(repr, summ["rho"])),
                      nu=",".join(map(repr, summ["nu"])), steps=summ["K"],
                      eta=repr(summ["eta"]), activation=summ["activation"],
                      misspecification=repr(summ["eps_mis_teacher"]))
    return float(evaluate("remark9", inputs).bound["min_iterate"])


def test_the_projection_slack_is_measured_when_the_projection_acts(runs):
    res = runs["projected"]
    slack = res["steps"]["slack"]
    assert (slack > 0).sum() > 0 and slack.min() >= 0
    by = {r["key"]: r for r in res["chain"] if r["route"] == "tight-linear"}
    assert by["projection"]["slack"] > 1.5         # (a) is loose when Π clips
    assert (runs["gd_star"]["steps"]["slack"] == 0).all()    # never clipped: exactly 0


@pytest.mark.parametrize("name", ["gd", "sgd", "projected"])
def test_each_step_taylor_and_change_of_feature_parts_are_inside_the_a_posteriori_bounds(
        runs, name):
    res = runs[name]
    summ = res["summary"]
    post = theorem1_a_posteriori("tight")
    inputs = validate(m=summ["m"], n=summ["n"], d=summ["d"], T=summ["T"],
                      delta=repr(summ["delta"]), rho=",".join(map(repr, summ["rho"])),
                      nu=",".join(map(repr, summ["nu"])), steps=summ["K"])
    values = {**{k: float(v) for k, v in symbol_values(inputs).items()},
              S.u0_rms: summ["u0_rms"], S.x_max: summ["x_max"],
              S.q_max: summ["q_max"], S.g_max: summ["x_max"] ** 2}
    eps = evaluate_expressions({"tay": post.constants["eps_taylor"],
                                "cf": post.constants["eps_cf"]}, values)
    steps = res["steps"]
    assert (steps["max_abs_T"] <= eps["tay"]).all() and (steps["max_abs_C"] <= eps["cf"]).all()
    assert steps["max_abs_T"].max() > 0 and steps["max_abs_C"].max() > 0
    assert np.abs(res["samples"]["T"]).max() <= eps["tay"]
    assert np.abs(res["samples"]["C"]).max() <= eps["cf"]
    parts = {r["name"]: r for r in res["parts"]}
    assert parts["tight.T"]["bound"] == pytest.approx(eps["tay"], rel=1e-12)
    assert parts["tight.C"]["bound"] == pytest.approx(eps["cf"], rel=1e-12)


@pytest.mark.parametrize("name", ["gd", "sgd", "projected"])
def test_drift_identity_and_its_parts_hold_to_float64_rounding(runs, name):
    """⟨∇f_j(θ_k), θ_k − θ̄⟩ = r_j + e_j with e_j = T_j − (A_j − M_j) − C_j, every part recomputed
    independently with torch.func.jvp of the forward pass at the recorded iterates."""
    res = runs[name]
    data = res["data"]
    p0, bar, X, q, y, act = (data[k] for k in ("params0", "theta_bar", "X", "q", "y", "act"))

    def f(*blocks):
        return forward(Params(*blocks), X, q, act)

    def jvp(at: Params, direction: Params) -> torch.Tensor:
        return torch.func.jvp(f, tuple(at), tuple(direction))[1]

    samples = res["samples"]
    am = f(*p0) + jvp(p0, bar - p0) - y
    assert np.abs(samples["A_minus_M"] - am.numpy()).max() < 1e-14
    for i, k in enumerate(res["recorded_steps"]):
        theta = res["params"][i]
        drift = jvp(theta, theta - bar)
        scale = float(drift.abs().max())
        r, T_, C_ = (samples[key][i] for key in ("r", "T", "C"))
        e = T_ - samples["A_minus_M"] - C_
        assert np.abs(r + e - drift.numpy()).max() <= 1e-13 * scale, k
        assert np.abs(samples["drift"][i] - drift.numpy()).max() <= 1e-13 * scale, k
        T_ref = jvp(theta, theta - p0) - f(*theta) + f(*p0)
        C_ref = jvp(theta, bar - p0) - jvp(p0, bar - p0)
        assert np.abs(T_ - T_ref.numpy()).max() <= 1e-13 * scale, k
        assert np.abs(C_ - C_ref.numpy()).max() <= 1e-13 * scale, k
        assert np.abs(r - (f(*theta) - y).numpy()).max() <= 1e-14
    recorded = res["steps"]["identity_residual"][res["recorded_steps"]]
    assert np.isfinite(recorded).all() and recorded.max() <= 1e-13 * res["steps"][
        "max_abs_drift"].max()
    # ⟨∇R̂, θ_k − θ̄⟩ from the gradient = (2/n) Σ r_j d_j from the samples
    s = res["steps"]
    assert np.abs(s["drift_inner"] - s["drift_inner_samples"]).max() <= 1e-13 * np.abs(
        s["drift_inner"]).max()


@pytest.mark.parametrize("name", ["gd", "sgd"])
def test_the_certified_run_is_the_trainers_projgd_or_projsgd(runs, name):
    res = runs[name]
    data = res["data"]
    args = (data["params0"], data["X"], data["q"], data["y"], data["act"])
    summ = res["summary"]
    if name == "gd":
        ref = proj_gd(*args, steps=summ["K"], eta=summ["eta"], rho=summ["rho"],
                      gradient="closed")
    else:
        ref = proj_sgd(*args, steps=summ["K"], eta=summ["eta"], rho=summ["rho"],
                       batch_size=summ["batch_size"], seed=derived_seed(1, "minibatch0"),
                       gradient="closed")
    assert np.abs(ref.loss.numpy() - res["steps"]["loss"]).max() <= 1e-15
    for a, b in zip(ref.params, data["params_final"], strict=True):
        assert float((a - b).abs().max()) <= 1e-14


@pytest.mark.slow
def test_cli_writes_the_chain_files_and_figure_and_resumes(tmp_path, capsys):
    out = tmp_path / "run"
    args = ["validate", "theorem1", "--decompose", *CLI_SMALL, "--out", str(out)]
    assert main([*args, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["violations"] == 0 and len(report["summary"]) == 1
    names = {"decompose.json", "decompose.csv", "decompose_steps.csv",
             "decompose_samples.npz", "decompose.pdf", "decompose.png", "config.json"}
    assert names <= {p.name for p in out.iterdir()}
    assert sorted(p.name for p in (out / "cells").iterdir()) == [
        "decompose-theorem1-seed0.json", "decompose-theorem1-seed0.npz"]
    stored = json.loads((out / "decompose.json").read_text())
    assert [r["summary"]["statement"] for r in stored] == ["theorem1"]
    assert len(stored[0]["steps"]["loss"]) == 50
    assert (out / "decompose.csv").read_text().startswith("table,statement,seed,route,level,")
    assert (out / "decompose.png").stat().st_size > 10_000
    assert (out / "decompose.pdf").read_bytes()[:4] == b"%PDF"
    with np.load(out / "decompose_samples.npz") as npz:
        assert npz["theorem1-seed0.r"].shape[1] == 32
        assert npz["theorem1-seed0.recorded_steps"][[0, -1]].tolist() == [0, 49]
    config = json.loads((out / "config.json").read_text())["parameters"]
    assert config["decompose"] is True and config["statements"] == ["theorem1"]
    # a second run with the same --out loads the cell and rewrites the same chain
    assert main([*args, "--format", "json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["chain"] == report["chain"]
    with np.load(out / "decompose_samples.npz") as npz:   # the loaded cell's vectors are kept
        assert npz["theorem1-seed0.r"].shape[1] == 32


def test_the_summary_names_the_free_yardstick_and_the_bounds_are_vacuous_against_it(runs):
    summ = runs["gd_star"]["summary"]
    free = min(summ["trivial_bound_B2"], summ["initial_loss_bound"], summ["initial_loss"])
    assert summ["free_bound"] == free == summ["initial_loss"]
    assert summ["free_bound_key"] == "initial_loss"
    assert summ["a_priori_tight"] > summ["a_posteriori_tight"] > free
    assert summ["a_priori_verdict"] == summ["a_posteriori_verdict"] == "vacuous"
    # the level with every constant measured on the run, under its new name and its old one
    assert summ["measured_constants_tight"] == summ["run_certified_tight"]
    assert "run-certified" not in C.STAGES and "measured-constants" in C.STAGES


def test_the_old_certify_flag_prints_the_yardstick_and_never_a_bare_holds(tmp_path, capsys):
    args = ["validate", "theorem1", "--certify", *CLI_SMALL, "--out", str(tmp_path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "run-measured decomposition of the proof's slack" in out
    assert "le_level_above" in out and " holds " not in out
    (line,) = [x for x in out.splitlines() if x.startswith("theorem1 seed 0: free yardstick")]
    assert "R̂(θ_0) binds" in line and "VACUOUS" in line and "run-certified" not in out


def test_decompose_is_refused_for_other_statements_with_exit_2(capsys):
    for flag in ("--decompose", "--certify"):
        assert main(["validate", "lemma2", flag]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --decompose") and "lemma2" in err and "\n" not in err
    assert main(["validate", "theorem1", "lemma2", "--decompose"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --decompose") and "lemma2" in err and "\n" not in err
    assert main(["validate", "theorem1", "--eta", "0.1"]) == 2
    assert capsys.readouterr().err.startswith("error: --eta")


def test_a_level_above_the_one_before_it_exits_1(tmp_path, monkeypatch, capsys):
    good = C.certify("theorem1", **{**RUN, "steps": 5, "keep_params": False})
    bad = json_ready(good)
    row = next(r for r in bad["chain"] if r["key"] == "first_part")
    row.update(value=2 * row["above"], holds=False)

    def fake(statements, settings, out, eta=None, progress=None):
        return [bad]

    monkeypatch.setattr(C, "run_certification", fake)
    assert main(["validate", "theorem1", "--decompose", *CLI_SMALL, "--out", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "VIOLATION" in captured.out and "first_part" in captured.err


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_gives_the_cpu_chain():
    kwargs = {**RUN, "keep_params": False, "eta": 0.5}
    cpu = C.certify("theorem1", **kwargs)
    gpu = C.certify("theorem1", **kwargs, device="cuda")
    assert gpu["summary"]["device"].startswith("cuda") and gpu["summary"]["violations"] == 0
    for a, b in zip(cpu["chain"], gpu["chain"], strict=True):
        assert b["value"] == pytest.approx(a["value"], rel=1e-9, abs=1e-15)


def test_float32_run_keeps_the_chain_monotone():
    res = C.certify("theorem1", **{**RUN, "keep_params": False}, eta=0.5, dtype="float32")
    assert res["summary"]["dtype"] == "float32" and res["summary"]["violations"] == 0
    assert math.isfinite(res["summary"]["run_certified_tight"])
