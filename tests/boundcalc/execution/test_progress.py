"""``validate`` reports progress with an ETA on stderr (silenced by
``--quiet``) and records the training backend in config.json."""

from __future__ import annotations

import re
import threading

import pytest

from boundcalc.cli import main
from boundcalc.execution import progress as validation_progress
from boundcalc.validation import runner as validation_runner
from boundcalc.validation import settings as validation_settings

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

TINY = ["--m", "4", "--d", "2", "--T", "2", "--n", "16", "--effort", "quick", "--seeds", "2",
        "--device", "cpu"]


@pytest.mark.slow
def test_validate_progress_lines_carry_an_eta(tmp_path, capsys):
    code = main(["validate", "lemma2", "lemma3", *TINY, "--out", str(tmp_path / "run")])
    assert code == 0
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.startswith("[validate ")]
    assert len(lines) >= 4, err                    # a start and an end line per cell (4 cells)
    assert lines[0].startswith("[validate 1/4] lemma2-seed0")
    # an ETA in any unit: its figure is the cells' wall time, which is the machine's speed
    assert any(re.search(r"ETA \d+(\.\d+)? (s|min|h)\b", ln) for ln in lines), err
    assert re.search(r"\[validate 4/4\] .*done", err), err


def test_validate_quiet_prints_no_progress(tmp_path, capsys):
    code = main(["validate", "lemma3", *TINY, "--quiet", "--out", str(tmp_path / "run")])
    assert code == 0
    err = capsys.readouterr().err
    assert "[validate" not in err and "ETA" not in err


def test_heartbeat_reports_a_running_cell_with_its_eta(tmp_path, monkeypatch):
    # each cell computes until the heartbeat has reported it (a wait bounded by 60 s, not a
    # duration), so that the lines do not depend on how fast the machine is
    monkeypatch.setattr(validation_progress, "PROGRESS_HEARTBEAT_S", 0.01)
    reported = {0: threading.Event(), 1: threading.Event()}
    lines: list[str] = []

    def progress(line: str) -> None:
        lines.append(line)
        for seed, event in reported.items():
            if f"lemma3-seed{seed}: running for" in line:
                event.set()

    monkeypatch.setattr(validation_runner, "cell_runner",
                        lambda statement, s, seed: lambda: (reported[seed].wait(60), [])[1])
    settings = validation_settings.make_settings(
        m="4", n="16", d="2", T="2", rho="2", nu="1", delta="0.05", activation="tanh",
        steps="10", seeds="2", rate_seeds="20", batch_size="4", effort="quick", device="cpu",
        dtype="float64", teacher_width="256")
    validation_runner.run_validation(["lemma3"], settings, tmp_path, progress)
    running = [ln for ln in lines if "running for" in ln]
    assert any("lemma3-seed0" in ln and "no ETA before a cell has finished" in ln
               for ln in running), lines
    assert any("lemma3-seed1" in ln and "ETA" in ln and "no ETA" not in ln
               for ln in running), lines


def test_heartbeat_lines_count_the_time_on_the_clock_given():
    timing, lines = validation_progress.CellTiming(), []
    timing.add("lemma3", 30.0)
    timing.add("lemma2", 300.0)
    said = threading.Event()

    def progress(line: str) -> None:
        lines.append(line)
        said.set()

    with validation_progress.heartbeat(progress, "lemma3-seed1", 100.0, timing, "lemma3",
                                       ["lemma2"], clock=lambda: 125.0, every=0.01):
        assert said.wait(60)
    # 25 s run of a 30 s estimate: 5 s left, then 300 s of lemma2
    assert lines[0] == "lemma3-seed1: running for 25 s, ETA 5 min"


def _validate_in_a_fresh_process(tmp_path, **env):
    import json
    import os
    import subprocess
    import sys

    out = tmp_path / "run"
    args = [sys.executable, "-m", "boundcalc", "validate", "theorem1", "--m", "4", "--d", "2",
            "--T", "2", "--n", "16", "--steps", "5", "--teacher-width", "64", "--device", "cpu",
            "--quiet", "--out", str(out)]
    run = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True,
                         env={**os.environ, "BOUNDCALC_KERNEL_CACHE": str(tmp_path / "k"), **env})
    assert run.returncode in (0, 1), run.stderr
    return json.loads((out / "config.json").read_text()), run.stderr


@pytest.mark.slow
def test_validate_config_records_the_training_backend(tmp_path):
    config, _ = _validate_in_a_fresh_process(tmp_path)
    backend = config["environment"]["cpu_kernel"]["d2-float64"]
    assert backend["backend"] in ("kernel", "torch")
    assert (backend["reason"] is None) == (backend["backend"] == "kernel")


@pytest.mark.slow
def test_validate_config_records_the_torch_fallback_and_why(tmp_path):
    config, err = _validate_in_a_fresh_process(tmp_path, BOUNDCALC_CPU_KERNEL="0")
    backend = config["environment"]["cpu_kernel"]["d2-float64"]
    assert backend["backend"] == "torch" and backend["reason"]
