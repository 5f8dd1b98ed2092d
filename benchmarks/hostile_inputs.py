"""Hostile-input harness: thousands of ``boundcalc`` invocations over every surface, in-process.

Usage (from the repository root, after ``pip install -e .``)::

    python benchmarks/hostile_inputs.py                  # about 2,400 invocations
    python benchmarks/hostile_inputs.py --scale 2 --seed 7 --json report.json
    python benchmarks/hostile_inputs.py --surfaces check,table --show 5

Every invocation runs :func:`boundcalc.cli.main` in this process with stdout and stderr captured
(so the calculator's generated code and torch are imported once, and thousands of invocations
take minutes), in a temporary working folder, over these surfaces: the calculator's statement
commands, ``sweep``, ``width`` / ``steps``, ``explain``, ``compare-rnn``, ``generalization``
(with and without ``--symbolic``), ``validate`` and ``reproduce`` (refusal paths: every
invocation carries a value meant to be refused, on top of tiny sizes, so that one wrongly accepted
trains for seconds, not hours; each has a time limit), ``table`` on run directories damaged in
every way this harness knows (config.json and cell files: truncated, deeply nested, NaN where a
measurement belongs, contradicting the run, a FIFO or a folder in place of a file, oversized), and
``check`` on damaged run files (scalars, shapes, dtypes, truncation, flipped bits, headers that
lie, unknown members) and on paths that are not regular files.

It prints, per surface, the count of each exit code; every exit 3, every traceback and every
invocation that raised out of ``main``; and, for every exit 2 of a command that writes a run
directory (``validate``, ``reproduce``), whether a run directory was left behind (the ``--out``
given, or anything new in the working folder). The inputs are drawn from ``random.Random(seed)``,
so a run is repeatable; ``--scale`` multiplies every surface's count.

What an invocation is expected to do is not judged beyond that: exit 0, 1 and 2 are all
acceptable answers to hostile input; 3 (internal error), a traceback, or an exit 2 that leaves a
run directory behind are what this harness reports as findings.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import random
import shutil
import signal
import sys
import tempfile
import time
import traceback
import warnings
import zipfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# --------------------------------------------------------------------------- values

HOSTILE = ["-1", "-0.5", "0", "-0", "nan", "NaN", "inf", "-inf", "1e400", "-1e400", "1e-400",
           "1e300", "1e-300", "5e-324", "1e309", "abc", "", " ", "1,2", "0x10", "1e", "--", "½",
           "2" + "0" * 40, str(2**64), "1_000", "١", "1e-320", "-1e-400", "+inf", "0.0"]
PLAIN = ["0.1", "0.5", "1", "2", "3", "10", "1e-3", "8", "16", "64"]
VEC = ["1", "0", "2,1,0.5", "1,2", "1,2,3,4", "1,,1", ",", "1,-1,1", "nan,1,1", "inf,1,1",
       "1e400,1,1", "1e300,1e300,1e300", "0,0,0", "3,3,3", "1e-400,1,1"]
ACTIVATIONS = ["tanh", "erf", "relu", "", "TANH", "custom:", "custom:1,1", "custom:1,1,1,1",
               "custom:0,0,0", "custom:-1,1,1", "custom:nan,1,1", "custom:inf,1,1",
               "custom:1e400,1,1", "custom:a,b,c", "custom"]
GRIDS = ["2:64:x2", "2,8,1e30", "2:1e400:x2", "8:2:x2", "2:64:x1", "2:64:+0", "2:64:x0", "2:8",
         "a:b:c", "2,,4", ":", "2:64:x2:1", "2:1e9:x2", "1:10:+1", "2:1e300:x1.0000001"]
FORMATS = ["json", "table", "csv", "markdown", "latex", "xml", ""]
STATEMENTS = ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1", "prop1", "remark9",
              "prop2")


def value(rng: random.Random, extra: list[str] | None = None) -> str:
    """A hostile value about a third of the time, else a plain one (so that runs reach the code
    behind the checks)."""
    pool = HOSTILE if rng.random() < 0.3 else PLAIN
    return rng.choice(pool + (extra or []))


# --------------------------------------------------------------------------- running one

class _TimeoutError(Exception):
    pass


def _alarm(signum, frame):
    raise _TimeoutError()


@dataclass
class Outcome:
    surface: str
    argv: list[str]
    code: int | str
    out: str
    err: str
    seconds: float
    writes_run: bool = False
    run_left: list[str] = field(default_factory=list)

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.out + self.err


def invoke(surface: str, argv: list[str], limit: float, out_dir: Path | None,
           cwd: Path, writes_run: bool) -> Outcome:
    """Run ``boundcalc ARGV`` in this process; the exit code (or ``raised`` / ``timeout``), the
    captured streams, and, for a command that writes a run directory, what it left behind."""
    from boundcalc.cli import main

    before = set(os.listdir(cwd))
    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, limit)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code: int | str = main(argv)
    except _TimeoutError:
        code = "timeout"
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else f"exit {exc.code!r}"
    except BaseException:  # noqa: BLE001 - main must never raise: a finding, reported
        code = "raised"
        err.write(traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    seconds = time.perf_counter() - started
    left = []
    if writes_run:
        if out_dir is not None and out_dir.exists():
            left.append(str(out_dir))
        left += sorted(str(cwd / p) for p in set(os.listdir(cwd)) - before)
    return Outcome(surface, argv, code, out.getvalue(), err.getvalue(), seconds, writes_run,
                   left)


# --------------------------------------------------------------------------- files

def hostile_output(rng: random.Random, tmp: Path) -> str:
    """An ``--output`` path: writable, the root, a full device, empty, in a missing folder,
    under a plain file, with a component too long, or a folder."""
    plain = tmp / "plain-file"
    plain.write_text("x")
    return rng.choice(["/", "/dev/full", str(tmp / "out.txt"), "", str(tmp / "no" / "o.txt"),
                       str(plain / "o.txt"), str(tmp / ("x" * 300) / "o.txt"), str(tmp)])


def hostile_data(rng: random.Random, tmp: Path, i: int) -> str:
    """A ``--data`` path whose content is wrong: text as .npz, a truncated zip, arrays of the
    wrong names, shapes or values, an empty folder, an IDX folder with a bad file, a FIFO."""
    path = tmp / f"data-{i}"
    kind = rng.choice(["text", "truncated", "names", "shape", "nan", "folder", "idx", "fifo"])
    if kind == "text":
        path = path.with_suffix(".npz")
        path.write_text("not an archive")
    elif kind in ("truncated", "names", "shape", "nan"):
        path = path.with_suffix(".npz")
        arrays = {"names": {"a": np.zeros(3)},
                  "shape": {"X": np.zeros((4, 2)), "y": np.zeros(3),
                            "x_train": np.zeros((2, 5)), "y_train": np.zeros(2)},
                  "nan": {"X": np.full((4, 2, 2), np.nan), "y": np.zeros(4),
                          "x_train": np.full((4, 28, 28), np.nan), "y_train": np.zeros(4),
                          "x_test": np.zeros((1, 28, 28)), "y_test": np.zeros(1)},
                  "truncated": {"X": np.zeros((4, 2, 2)), "y": np.zeros(4)}}[kind]
        np.savez(path, **arrays)
        if kind == "truncated":
            path.write_bytes(path.read_bytes()[:40])
    elif kind == "folder":
        path.mkdir()
    elif kind == "idx":
        path.mkdir()
        for stem in ("train-images", "train-labels", "t10k-images", "t10k-labels"):
            rank = 3 if "images" in stem else 1
            (path / f"{stem}-idx{rank}-ubyte").write_bytes(b"\x00\x00\x08" + bytes([rank])
                                                            + b"\x00" * rng.randint(0, 9))
    elif hasattr(os, "mkfifo"):
        os.mkfifo(path)
    else:
        path.write_text("")
    return str(path)


# --------------------------------------------------------------------------- calculator

def calculator(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    options = {"--m": ["2", "8", "512", "3", "1", "7", "1e30", "4.0", "4.5"],
               "--n": ["1", "2", "1000", "1e12", "1.5"], "--d": ["1", "8"], "--T": ["1", "16"],
               "--delta": ["0", "1", "0.05", "0.5", "0.4999"], "--rho": VEC, "--nu": VEC,
               "--steps": ["1", "1000", "1e300"], "--eta": ["0.1", "1e-9"],
               "--activation": ACTIVATIONS, "--precision": ["1", "15", "100000", "abc"],
               "--format": FORMATS}
    for _ in range(count):
        statement = rng.choice(STATEMENTS)
        argv = [statement]
        for flag in rng.sample(sorted(options), rng.randint(1, 5)):
            argv += [flag, value(rng, options[flag])]
        if statement in ("theorem1", "prop1", "remark9") and rng.random() < 0.3:
            argv += ["--route", rng.choice(["tight", "paper", "gradnorm", "joint", "x"])]
        if statement == "prop1" and rng.random() < 0.5:
            argv += ["--batch-size", value(rng, ["1", "64"])]
        if statement == "remark9" and rng.random() < 0.5:
            argv += ["--misspecification", value(rng)]
        if statement == "prop2" and rng.random() < 0.5:
            argv += ["--alpha", value(rng, ["1.5", "0.9"])]
        if rng.random() < 0.05:
            argv += ["--output", hostile_output(rng, tmp)]
        yield argv, {}


def sweep(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for _ in range(count):
        argv = ["sweep", rng.choice(STATEMENTS + ("nope",))]
        for flag in rng.sample(["--m", "--n", "--d", "--T", "--steps", "--delta", "--eta",
                                "--rho-c", "--nu-w", "--rho", "--alpha"], rng.randint(1, 4)):
            argv += [flag, rng.choice(GRIDS) if rng.random() < 0.6 else value(rng)]
        argv += ["--format", rng.choice(["csv", "json", "table", "x"])]
        if rng.random() < 0.2:
            argv += ["--columns", rng.choice(["m,bound", "", "nope", ",,"])]
        yield argv, {}


def solvers(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for _ in range(count):
        command = rng.choice(["width", "steps"])
        argv = [command]
        if command == "width" and rng.random() < 0.3:
            argv.append("--nonvacuous")
        if rng.random() < 0.9:
            argv += ["--target", value(rng, ["0.1", "1e-9", "1e9"])]
        for flag in rng.sample(["--n", "--d", "--T", "--delta", "--rho", "--nu", "--steps",
                                "--eta", "--activation", "--route", "--precision"],
                               rng.randint(0, 4)):
            argv += [flag, value(rng, VEC if flag in ("--rho", "--nu") else ACTIVATIONS
                                 if flag == "--activation" else None)]
        argv += ["--format", rng.choice(FORMATS)]
        yield argv, {}


def explain(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for _ in range(count):
        argv = ["explain", rng.choice(STATEMENTS + ("", "nope", "THEOREM1", "generalization"))]
        if rng.random() < 0.5:
            argv += ["--route", rng.choice(["tight", "paper", "gradnorm", "joint", "", "x"])]
        argv += ["--format", rng.choice(["table", "json", "markdown", "latex", "csv", ""])]
        yield argv, {}


def compare_rnn(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for _ in range(count):
        argv = ["compare-rnn"]
        for flag in rng.sample(["--T", "--alpha", "--m", "--n", "--rho", "--nu", "--steps",
                                "--activation"], rng.randint(1, 4)):
            extra = ["1,4,16", "1e309", "1,1e309", "4,2", "1"] if flag == "--T" else None
            argv += [flag, value(rng, extra)]
        argv += ["--format", rng.choice(FORMATS)]
        yield argv, {}


def generalization(rng: random.Random, count: int, tmp: Path
                   ) -> Iterator[tuple[list[str], dict]]:
    flags = ["--N", "--dm", "--ds", "--rx", "--radii", "--delta", "--alpha", "--phi0",
             "--label-bound", "--from-init", "--d", "--wq-fro", "--wk-spec", "--wo-norm",
             "--hidden-constants", "--precision"]
    for i in range(count):
        argv = ["generalization"]
        for flag in rng.sample(flags, rng.randint(1, 5)):
            extra = {"--hidden-constants": ["C_D=1", "C_D=-1", "X=1", "C_D", ""],
                     "--radii": ["1,1,1,1", "1,1", "0,1,1,1"], "--N": ["-5", "10", "1000"]}
            argv += [flag, value(rng, extra.get(flag))]
        if rng.random() < 0.5:
            argv.append("--symbolic")
        if rng.random() < 0.2:
            argv.append("--as-printed")
        if rng.random() < 0.15:
            argv += ["--data", hostile_data(rng, tmp, i), "--dm", "4", "--from-init", "0"]
        if rng.random() < 0.05:
            argv += ["--output", hostile_output(rng, tmp)]
        argv += ["--format", rng.choice(FORMATS)]
        yield argv, {}


# --------------------------------------------------------------------------- runs

def validate(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    """Tiny sizes and, always, one value meant to be refused (the rows of the issue's table
    included: ρ < ν, δ ≥ ½)."""
    bad = [("--m", ["-2", "3", "0", "nan", "1e400", "abc"]), ("--n", ["0", "-1", "nan", "1.5"]),
           ("--delta", ["0", "1", "0.5", "0.7", "nan"]), ("--rho", ["-1", "nan", "1,2", "0"]),
           ("--nu", ["-1", "nan", "inf"]), ("--steps", ["0", "-5", "1e400", "abc"]),
           ("--seeds", ["0", "-1", "abc", "1e400"]), ("--effort", ["fast", ""]),
           ("--dtype", ["float16", ""]), ("--device", ["tpu", ""]),
           ("--activation", ["relu", "custom:1,1,1"]), ("--batch-size", ["0", "-1"]),
           ("--teacher-width", ["0", "-3"]), ("--alpha", ["nan", "-1", "0"]),
           ("--dm", ["0", "-1"]), ("--N", ["1", "-5"]), ("--lr", ["0", "-1", "nan"]),
           ("--radii", ["0,1,1,1", "1,1"]), ("--rate-seeds", ["0", "-1"]),
           ("--eta", ["0", "-1", "nan"]), ("--jobs", ["0", "-1"]),
           ("--executor", ["nope"]), ("--format", ["xml"])]
    statements = ["theorem1", "lemma2", "lemma3", "event", "prop2", "generalization", "tight",
                  "nope", "all"]
    for i in range(count):
        out = tmp / f"validate-{i}"
        argv = ["validate", rng.choice(statements), "--m", "8", "--n", "16", "--d", "2",
                "--T", "2", "--steps", "2", "--seeds", "1", "--effort", "quick", "--quiet",
                "--device", "cpu", "--out", str(out)]
        if rng.random() < 0.15:           # the row 2: rho below nu
            argv += ["--rho", "1", "--nu", "2"]
        elif rng.random() < 0.1:          # a data file of the wrong content
            argv[1] = "generalization"
            argv += ["--data", hostile_data(rng, tmp, i)]
        elif rng.random() < 0.05:         # a Dask address nothing can use
            argv += ["--executor", "dask", "--dask-address", rng.choice(["nonsense", "::", ""])]
        else:
            flag, values = rng.choice(bad)
            argv += [flag, rng.choice(values)]
        yield argv, {"out": out, "writes_run": True, "limit": 60.0}


_TINY = {"figure1": {"widths": "8", "n": "16", "d": "2", "T": "2", "teacher_width": "8",
                     "anchors": "2", "steps": "2"},
         "tsweep": {"widths": "8", "Ts": "2", "n": "16", "d": "2", "teacher_width": "8",
                    "anchors": "2", "steps": "2"},
         "figure2": {"lags": "1", "n": "20", "m": "2", "steps": "2"},
         "table1": {"dms": "2", "Ns": "4", "steps": "2"}}

_BAD_SET = {"figure1": [("nu", "-1"), ("step_constant", "0"), ("rho", "0"), ("steps", "0"),
                        ("steps", "99999999999999999999"), ("val_fraction", "1"),
                        ("val_fraction", "-0.1"), ("widths", "3"), ("widths", ""),
                        ("n", "0"), ("delta", "0"), ("delta", "2"), ("activation", "relu"),
                        ("lin_align", "x"), ("dtype", "float16"), ("d", "-1"),
                        ("eta", "0.1"), ("nope", "1"), ("widths", "8,nan"),
                        ("seeds", "-1"), ("rho", "1,2"), ("nu", "nan")],
            "figure2": [("burn_in", "-5"), ("base_period", "0"), ("noise_variance", "-1"),
                        ("lags", "0"), ("m", "3"), ("lr", "0"), ("alpha", "nan"),
                        ("val_fraction", "0"), ("seed_batch", "0"), ("steps", "-1"),
                        ("ar_coefficient", "inf"), ("nope", "1")],
            "table1": [("dms", "0"), ("Ns", "1"), ("lr", "-1"), ("delta", "1"),
                       ("patch", "0"), ("digits", "0,0"), ("scale", "x"), ("n_test", "0"),
                       ("steps", "nan"), ("nope", "1")],
            "tsweep": [("Ts", "0"), ("Ts", ""), ("nu", "-1"), ("widths", "5"),
                       ("val_fraction", "2"), ("nope", "1")]}

_TOML = ["steps = 99999999999999999999\n", "steps = -1\n", "widths = [3]\n", "nope = 1\n",
         "steps = \"abc\"\n", "[[[\n", "nu = nan\n", "delta = inf\n", "widths = []\n", "",
         "val_fraction = 0\n", "steps = 1e400\n"]


def reproduce(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for i in range(count):
        name = rng.choice(sorted(_TINY))
        out = tmp / f"reproduce-{i}"
        fields = dict(_TINY[name])
        argv = ["reproduce", name, "--preset", "quick", "--device", "cpu", "--jobs", "1"]
        roll = rng.random()
        if roll < 0.6:
            key, bad = rng.choice(_BAD_SET[name])
            fields[key] = bad
        elif roll < 0.8:
            config = tmp / f"config-{i}.toml"
            config.write_text(rng.choice(_TOML))
            argv += ["--config", str(config)]
        elif roll < 0.9:
            argv += rng.choice([["--seeds", "-1"], ["--seeds", "0"], ["--seeds", "abc"],
                                ["--dtype", "float16"], ["--lin-align", "x"],
                                ["--jobs", "0"], ["--figure-width", "huge"],
                                ["--data", str(tmp / "missing")], ["--preset", "nope"],
                                ["--data", hostile_data(rng, tmp, i)]])
        else:
            argv += ["--set", rng.choice(["=", "steps", "steps=", "=1", "a=b=c", ""])]
        for key, val in fields.items():
            argv += ["--set", f"{key}={val}"]
        if rng.random() < 0.08:
            argv += ["--out", ""]
            out = None
        else:
            argv += ["--out", str(out)]
        yield argv, {"out": out, "writes_run": True, "limit": 90.0}


# --------------------------------------------------------------------------- table

def _run_dir(folder: Path, kind: str, rng: random.Random) -> Path:
    """A run directory of ``kind`` with sound cells, then damaged in one or two ways."""
    from boundcalc.runs.directory import cell_parameters, dumps, with_parameters

    params = {"figure1": {"experiment": "figure1", "preset": "quick", "widths": [8, 16],
                          "seeds": [1, 2], "n": 64, "val_fraction": 0.25, "d": 4, "T": 4,
                          "delta": "0.05", "steps": 10, "rho": [3.0, 3.0, 3.0],
                          "nu": [3.0, 3.0, 3.0], "activation": "tanh", "lin_align": "feature",
                          "dtype": "float64"},
              "figure2": {"experiment": "figure2", "preset": "quick", "lags": [4],
                          "seeds": [0, 1]},
              "table1": {"experiment": "table1", "preset": "quick", "dms": [16], "Ns": [64],
                         "steps": 10, "lr": 0.1}}[kind]
    (folder / "cells").mkdir(parents=True)        # as RunDirectory writes it, less the slow
    (folder / "config.json").write_text(dumps({"parameters": params}))   # environment record
    computed_with = cell_parameters(params)
    cells: dict[str, dict] = {}
    if kind == "figure1":
        for seed in (1, 2):
            for m in (8, 16):
                cells[f"m{m}-seed{seed}"] = {
                    "seed": seed, "m": m, "n": 64, "n_train": 48, "lin_error": 0.1 / m,
                    "lin_align": "feature", "lin_error_alt": 0.2 / m, "lin_align_alt": "output",
                    "app_error": 1.0 / m, "min_train_loss": 0.01 * seed,
                    "initial_train_loss": 0.5, "final_val_loss": 0.3, "label_rms": 0.7}
    elif kind == "figure2":
        for model in ("transformer", "indrnn"):
            for seed in (0, 1):
                cells[f"{model}-L4-seed{seed}"] = {
                    "model": model, "L": 4, "T": 5, "seed": seed, "diverged": False,
                    "max_jacobian": 1.0 + seed, "min_val_loss": 0.5, "max_loss_gradient": 1.0,
                    "memory_floats_per_sample": 8}
    else:
        cells["dm16-N64"] = {"d_m": 16, "N": 64, "lowest_test_loss": 0.3,
                             "lowest_test_epoch": 3, "paper_lowest_test_loss": "nan",
                             "paper_epoch": -1, "theorem5_bound": 600.0,
                             "theorem5_bound_printed": -9000.0,
                             "lowest_test_under_bound": True, "conditions_hold_count": "0/4",
                             "all_conditions_hold": False, "conditions_holding": "none",
                             "conditions_failing": "width", "alpha": 1e-3, "Phi0": 3.0,
                             "steps": 10, "lr": 0.1}
    for key, cell in cells.items():
        _cell_text(folder, key).write_text(dumps(with_parameters(cell, computed_with)))
    keys = sorted(cells)
    for _ in range(rng.randint(1, 2)):
        rng.choice(_DAMAGE)(folder, rng.choice(keys), rng)
    return folder


def _cell_text(folder: Path, key: str) -> Path:
    return folder / "cells" / f"{key}.json"


def _set_field(value):
    def damage(folder, key, rng):
        path = _cell_text(folder, key)
        if not path.is_file():          # a FIFO put there by another damage: never opened
            return
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError, RecursionError):     # damaged already
            return
        records = data if isinstance(data, list) else [data]
        for record in records:
            if not isinstance(record, dict):
                continue
            field_name = rng.choice([k for k in record if k != "computed_with"] or ["x"])
            record[field_name] = value(rng) if callable(value) else value
        path.write_text(json.dumps(data))
    return damage


def _replace_text(text_of: Callable[[random.Random], str], config: bool = False):
    def damage(folder, key, rng):
        target = folder / "config.json" if config else _cell_text(folder, key)
        if target.exists() and not target.is_file():      # a folder or FIFO already
            return
        target.write_text(text_of(rng))
    return damage


def _fifo(config: bool = False):
    def damage(folder, key, rng):
        target = folder / "config.json" if config else _cell_text(folder, key)
        if target.is_dir():
            return
        target.unlink(missing_ok=True)
        if hasattr(os, "mkfifo"):
            os.mkfifo(target)
    return damage


def _folder_in_place(folder, key, rng):
    target = _cell_text(folder, key)
    if target.is_dir():
        return
    target.unlink(missing_ok=True)
    target.mkdir()


def _truncate(config: bool = False):
    def damage(folder, key, rng):
        target = folder / "config.json" if config else _cell_text(folder, key)
        if not target.is_file():
            return
        data = target.read_bytes()
        target.write_bytes(data[:rng.randint(0, max(0, len(data) - 1))])
    return damage


def _binary(folder, key, rng):
    if not _cell_text(folder, key).is_file():
        return
    _cell_text(folder, key).write_bytes(bytes(rng.randrange(256) for _ in range(200)))


def _oversize(folder, key, rng):
    if not _cell_text(folder, key).is_file():
        return
    _cell_text(folder, key).write_text('{"x": "' + "a" * (5 << 20) + '"}')


def _config_params(value_of: Callable[[random.Random], object]):
    def damage(folder, key, rng):
        path = folder / "config.json"
        try:
            data = json.loads(path.read_text()) if path.is_file() else None
            params = data["parameters"]
            name = rng.choice(sorted(params))
        except (ValueError, TypeError, KeyError, IndexError, RecursionError):
            return                          # damaged already by another damage

        params[name] = value_of(rng)
        path.write_text(json.dumps(data))
    return damage


_DEEP = ["[" * 100_000, "{\"a\":" * 50_000, "[" * 500 + "]" * 500, "[" * 3000 + "]" * 3000]
_DAMAGE: list[Callable] = [
    _set_field(math.nan), _set_field("nan"), _set_field("inf"), _set_field(None),
    _set_field(-1.0), _set_field("text"), _set_field(True), _set_field([1, 2]),
    _set_field({"a": 1}), _set_field(2**70), _set_field(1e308),
    _set_field(lambda rng: rng.choice([128, 7, "output", "feature", 0])),
    _replace_text(lambda rng: rng.choice(_DEEP)),
    _replace_text(lambda rng: rng.choice(["", "{}", "[]", "null", "1", '"x"', "[{}]", "[1]",
                                          '{"a": NaN}', "{", "\ufeff{}", "\x00"])),
    _replace_text(lambda rng: rng.choice(_DEEP), config=True),
    _replace_text(lambda rng: rng.choice(["", "{}", "[]", '{"parameters": 1}',
                                          '{"parameters": {}}', "{",
                                          '{"parameters": {"experiment": "nope"}}',
                                          '{"parameters": {"experiment": 1}}']), config=True),
    _config_params(lambda rng: rng.choice([None, -1, "x", [], {}, [3, "a"], 2**70, 1e308,
                                           [[1]], "nan"])),
    _fifo(), _fifo(config=True), _folder_in_place, _truncate(), _truncate(config=True),
    _binary, _oversize,
]


def table(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for i in range(count):
        folder = _run_dir(tmp / f"table-run-{i}", rng.choice(["figure1", "figure2", "table1"]),
                          rng)
        argv = ["table", str(folder)]
        if rng.random() < 0.2:
            argv.append(str(tmp / "missing-run"))
        argv += ["--format", rng.choice(["csv", "markdown", "latex", "json"])]
        if rng.random() < 0.3:
            argv += ["--digits", value(rng, ["3", "1", "20"])]
        if rng.random() < 0.2:
            argv += ["--statistic", rng.choice(["geometric", "arithmetic", "x"])]
        if rng.random() < 0.05:
            argv += ["--output", hostile_output(rng, tmp)]
        if rng.random() < 0.03:  # figures into a place that cannot hold them (drawn: slow)
            argv += ["--figures-dir", hostile_output(rng, tmp)]
        yield argv, {}


# --------------------------------------------------------------------------- check

def _run_arrays(rng: random.Random) -> dict:
    d, n, T = 2, 6, 3
    gen = np.random.default_rng(rng.randrange(2**32))
    c0 = np.array([1.0, -1.0, -1.0, 1.0])
    U0 = np.tile(gen.normal(size=(2, d)), (2, 1))
    W0 = np.tile(gen.normal(size=(2, d, d)), (2, 1, 1))
    steps = rng.choice([(5,), (1, 2, 3, 4), (0, 5)])
    k = len(steps)
    return dict(c0=c0, U0=U0, W0=W0, c=np.repeat(c0[None] + 0.01, k, 0),
                U=np.repeat(U0[None], k, 0), W=np.repeat(W0[None], k, 0), steps=np.array(steps),
                X=gen.uniform(-0.4, 0.4, (n, T, d)), y=np.zeros(n), eta=np.array(0.1),
                K=np.array(rng.choice([5, 6, 2**62, 2**63 - 1])), activation=np.array("tanh"))


_NAMES = ("c0", "U0", "W0", "c", "U", "W", "steps", "X", "q", "y", "eta", "K", "activation")
_SCALARS = [math.nan, math.inf, -math.inf, 0, -1, 1e308, 2**63 - 1, 2**64 - 1, "tanh", "erf",
            "relu", "", True, 1.5, 5e-324, b"x"]


def _run_file(path: Path, rng: random.Random) -> None:
    arrays = _run_arrays(rng)
    for _ in range(rng.randint(0, 3)):
        name = rng.choice(_NAMES + ("extra", "notes"))
        how = rng.choice(["drop", "scalar", "shape", "dtype", "nonfinite", "huge"])
        try:
            if how == "drop":
                arrays.pop(name, None)
            elif how == "scalar":
                arrays[name] = np.array(rng.choice(_SCALARS))
            elif how == "shape":
                arrays[name] = np.zeros(tuple(rng.randint(0, 5) for _ in range(rng.randint(0,
                                                                                        4))))
            elif how == "dtype" and name in arrays:
                with np.errstate(all="ignore"), contextlib.suppress(Exception), \
                        warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    arrays[name] = np.asarray(arrays[name]).astype(rng.choice(
                            ["float16", "int8", "uint64", "complex128", "bool", "U3", ">f8",
                             "float32", "longdouble", "datetime64[s]"]))
            elif how == "nonfinite" and name in arrays:
                value_ = np.array(arrays[name], dtype=np.float64)
                if value_.size:
                    value_.reshape(-1)[rng.randrange(value_.size)] = rng.choice(
                        [math.nan, math.inf, 1e308, -1e308])
                arrays[name] = value_
            elif how == "huge" and name in arrays:
                arrays[name] = np.full(np.shape(arrays[name]), rng.choice([1e300, -1e300,
                                                                          1e-300]))
        except (ValueError, TypeError, OverflowError):
            pass
    corruption = rng.choice(["none", "none", "truncate", "flip", "flip", "garbage", "lying",
                             "duplicate"])
    lying = rng.choice(["X", "W", "c0"])
    if corruption == "lying":          # the member is replaced by one whose header lies
        arrays.pop(lying, None)
    buffer = io.BytesIO()
    saver = np.savez_compressed if rng.random() < 0.15 else np.savez
    saver(buffer, **arrays)
    if corruption in ("lying", "duplicate"):
        header = io.BytesIO()
        np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                      "shape": (10**11, 2, 2)})
        with zipfile.ZipFile(buffer, "a") as zf, warnings.catch_warnings():
            warnings.simplefilter("ignore")                 # a duplicate name: wanted
            zf.writestr(f"{lying}.npy", header.getvalue() + bytes(64))
    data = bytearray(buffer.getvalue())
    if corruption == "truncate":
        data = data[:rng.randint(0, len(data))]
    elif corruption == "flip":
        data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
    elif corruption == "garbage":
        data = bytearray(rng.randrange(256) for _ in range(rng.randint(0, 300)))
    path.write_bytes(bytes(data))


def check(rng: random.Random, count: int, tmp: Path) -> Iterator[tuple[list[str], dict]]:
    for i in range(count):
        roll = rng.random()
        if roll < 0.04:
            target = rng.choice(["/dev/zero", "/dev/null", str(tmp), str(tmp / "nope.npz"),
                                 ""])
        elif roll < 0.06 and hasattr(os, "mkfifo"):
            target = str(tmp / f"fifo-{i}.npz")
            os.mkfifo(target)
        else:
            path = tmp / f"run-{i}.npz"
            _run_file(path, rng)
            target = str(path)
        argv = ["check", target, "--quiet", "--format", rng.choice(["table", "json", "csv",
                                                                    "xml"])]
        for flag in rng.sample(["--rho", "--nu", "--delta", "--misspecification"],
                               rng.randint(0, 2)):
            argv += [flag, value(rng, ["0", "1e-400", "3", "3,3,3"])]
        if rng.random() < 0.05:
            argv += ["--device", rng.choice(["cpu", "tpu", "cuda:99"])]
        if rng.random() < 0.05:
            argv += ["--output", hostile_output(rng, tmp)]
        yield argv, {"limit": 60.0}


SURFACES: dict[str, tuple[Callable, int]] = {
    "calculator": (calculator, 650), "sweep": (sweep, 200), "width/steps": (solvers, 200),
    "explain": (explain, 60), "compare-rnn": (compare_rnn, 120),
    "generalization": (generalization, 200), "validate": (validate, 140),
    "reproduce": (reproduce, 160), "table": (table, 300), "check": (check, 400),
}


# --------------------------------------------------------------------------- report

def _short(argv: list[str], width: int = 600) -> str:
    text = " ".join(repr(a) if (not a or " " in a) else a for a in argv)
    return text if len(text) <= width else text[:width - 3] + "..."


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--scale", type=float, default=1.0,
                        help="multiply every surface's count")
    parser.add_argument("--counts", default="",
                        help="per-surface counts, e.g. validate=40,table=120 (before --scale)")
    parser.add_argument("--surfaces", default=",".join(SURFACES),
                        help="comma list of: " + ", ".join(SURFACES))
    parser.add_argument("--show", type=int, default=1000,
                        help="at most this many findings shown per kind")
    parser.add_argument("--json", metavar="FILE", help="also write every outcome here")
    args = parser.parse_args(argv)
    chosen = [s.strip() for s in args.surfaces.split(",") if s.strip()]
    unknown = sorted(set(chosen) - set(SURFACES))
    if unknown:
        parser.error(f"unknown surfaces {unknown}")
    os.environ.pop("BOUNDCALC_DEBUG", None)
    counts = {name: count for name, (_, count) in SURFACES.items()}
    for item in filter(None, args.counts.split(",")):
        name, _, count = item.partition("=")
        if name not in SURFACES or not count.isdigit():
            parser.error(f"--counts: {item!r} is not SURFACE=N")
        counts[name] = int(count)
    rng = random.Random(args.seed)
    started = time.perf_counter()
    outcomes: list[Outcome] = []
    home = Path.cwd()
    tmp_root = Path(tempfile.mkdtemp(prefix="boundcalc-hostile-"))
    try:
        for name in chosen:
            make = SURFACES[name][0]
            count = max(1, round(counts[name] * args.scale))
            work = tmp_root / name.replace("/", "-")
            files = work / "files"
            cwd = work / "cwd"
            files.mkdir(parents=True)
            cwd.mkdir()
            os.chdir(cwd)
            began = time.perf_counter()
            for case_argv, extra in make(rng, count, files):
                outcomes.append(invoke(name, case_argv, extra.get("limit", 30.0),
                                       extra.get("out"), cwd, extra.get("writes_run", False)))
            print(f"[{name}] {count} invocations in {time.perf_counter() - began:.1f} s",
                  file=sys.stderr, flush=True)
            os.chdir(home)
    finally:
        os.chdir(home)
        shutil.rmtree(tmp_root, ignore_errors=True)
    return report(outcomes, time.perf_counter() - started, args)


def report(outcomes: list[Outcome], seconds: float, args: argparse.Namespace) -> int:
    by_surface: dict[str, Counter] = defaultdict(Counter)
    for o in outcomes:
        by_surface[o.surface][str(o.code)] += 1
    codes = sorted({str(o.code) for o in outcomes}, key=lambda c: (not c.isdigit(), c))
    print(f"{len(outcomes)} invocations in {seconds:.0f} s (seed {args.seed}, scale "
          f"{args.scale})\n")
    header = ["surface", "total", *[f"exit {c}" if c.isdigit() else c for c in codes],
              "tracebacks", "exit 2 left a run dir"]
    rows = []
    for surface, counts in by_surface.items():
        mine = [o for o in outcomes if o.surface == surface]
        rows.append([surface, str(sum(counts.values())), *[str(counts.get(c, 0)) for c in codes],
                     str(sum(o.traceback for o in mine)),
                     str(sum(bool(o.run_left) for o in mine if o.code == 2)) if any(
                         o.writes_run for o in mine) else "-"])
    total = Counter(str(o.code) for o in outcomes)
    rows.append(["all", str(len(outcomes)), *[str(total.get(c, 0)) for c in codes],
                 str(sum(o.traceback for o in outcomes)),
                 str(sum(bool(o.run_left) for o in outcomes if o.code == 2))])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)))

    findings = {
        "exit 3 (internal error)": [o for o in outcomes if o.code == 3],
        "raised out of main / exited oddly / timed out": [
            o for o in outcomes if not isinstance(o.code, int)],
        "traceback printed": [o for o in outcomes if o.traceback and o.code != "raised"],
        "exit 2 that left a run directory": [o for o in outcomes if o.code == 2 and o.run_left],
    }
    for title, found in findings.items():
        print(f"\n{title}: {len(found)}")
        for o in found[:args.show]:
            extra = f" [left {', '.join(o.run_left)}]" if o.run_left and o.code == 2 else ""
            print(f"  [{o.surface}] boundcalc {_short(o.argv)}\n      -> {o.code}: "
                  f"{_last_line(o.err) or _last_line(o.out)}{extra}")
    runs = [o for o in outcomes if o.writes_run and o.code == 2]
    print(f"\nexit 2 of validate / reproduce: {len(runs)}, of which "
          f"{sum(bool(o.run_left) for o in runs)} left a run directory behind")
    if args.json:
        Path(args.json).write_text(json.dumps([
            {"surface": o.surface, "argv": o.argv, "code": o.code, "seconds": round(o.seconds, 3),
             "stderr_tail": o.err[-500:], "run_left": o.run_left} for o in outcomes],
            indent=1))
    bad = sum(len(v) for v in findings.values())
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
