"""``boundcalc table``: tables (and figures) from stored runs, never recomputed, never torch.

One real quick figure-1 run (≈ 11 s on 2 cores) and figure-2 / table-1 runs made of fake cells in
the exact stored format (config.json through :class:`RunDirectory`, cells through ``save_cell``),
summarised by the experiments' own functions, are the references.
"""

from __future__ import annotations

import io
import math
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from boundcalc.validators.experiments import figure1, figure2, table1

from boundcalc.cli import main
from boundcalc.render.rounding import column_exponent, column_mean_ci_text, interval_text
from boundcalc.runs.directory import RunDirectory
from boundcalc.runs.stored import detect_kind, load_run

#: drives the torch validators (validate, reproduce, figures): skipped where torch is absent
pytestmark = pytest.mark.needs_torch

torch.set_num_threads(1)


# --------------------------------------------------------------------------- runs


@pytest.fixture(scope="module")
def f1_run(tmp_path_factory) -> Path:
    """A real quick-preset figure-1 run (its summary.csv and slopes.csv are the reference)."""
    return figure1.run_figure1("quick", out=tmp_path_factory.mktemp("f1") / "figure1-quick",
                               device="cpu", progress=False)


@pytest.fixture(scope="module")
def f2_run(tmp_path_factory) -> Path:
    """Fake figure-2 cells (3 seeds, 2 lags) and the summary.csv figure 2 writes from them."""
    cfg = figure2.make_config("quick", seeds=3, device="cpu", lags=(4, 16))
    run = RunDirectory(tmp_path_factory.mktemp("f2") / "figure2-quick",
                       config={"experiment": "figure2", "preset": "quick", **asdict(cfg)})
    rng = np.random.default_rng(2)
    for model, L, seed in figure2.all_cells(cfg):
        run.save_cell(figure2.cell_key(model, L, seed), {
            "model": model, "L": L, "T": L + 1, "seed": seed, "diverged": False,
            "max_jacobian": float(rng.lognormal()), "min_val_loss": float(rng.uniform(0.5, 1)),
            "max_loss_gradient": float(rng.lognormal()),
            "memory_floats_per_sample": (L + 1) * 17 if model == "transformer" else cfg.m})
    run.write_results(figure2.summarize(figure2.collect(run, cfg), cfg), stem="summary")
    return run.path


def _table1_cell(d_m: int, N: int, rng: np.random.Generator) -> dict:
    return {"d_m": d_m, "N": N, "lowest_test_loss": float(rng.uniform(0.1, 0.7)),
            "lowest_test_epoch": int(rng.integers(300)), "paper_lowest_test_loss": math.nan,
            "paper_epoch": -1, "theorem5_bound": float(rng.uniform(500, 1500)),
            "theorem5_bound_printed": float(-rng.uniform(1e3, 1e4)),
            "lowest_test_under_bound": True, "conditions_hold_count": "0/4",
            "all_conditions_hold": False, "conditions_holding": "none",
            "conditions_failing": "width;alpha_square", "alpha": 4e-18,
            "Phi0": float(rng.uniform(10, 30)), "wall_s": 1.0}


@pytest.fixture(scope="module")
def t1_run(tmp_path_factory) -> Path:
    """Fake table-1 cells and the table1.csv table 1 writes from them."""
    cfg = table1.make_config("quick")
    run = RunDirectory(tmp_path_factory.mktemp("t1") / "table1-quick",
                       config={"experiment": "table1", "preset": "quick", **asdict(cfg)})
    rng = np.random.default_rng(1)
    for d_m, N in table1.all_cells(cfg):
        run.save_cell(table1.cell_key(d_m, N), _table1_cell(d_m, N, rng))
    table1.write_outputs(run, cfg)
    return run.path


@pytest.fixture
def cli(capsys):
    """``cli("table", DIR)`` → (exit code, stdout, stderr) of ``boundcalc`` run in-process."""

    def run(*args: str) -> tuple[int, str, str]:
        capsys.readouterr()
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        return code, captured.out, captured.err

    return run


def _columns(line: str) -> int:
    """Columns of a LaTeX table row, counting each ``\\multicolumn{n}`` as n."""
    spans = [int(n) for n in re.findall(r"\\multicolumn\{(\d+)\}", line)]
    return line.count(" & ") + 1 + sum(n - 1 for n in spans)


def _csv_blocks(text: str) -> list[pd.DataFrame]:
    return [pd.read_csv(io.StringIO(block)) for block in text.strip().split("\n\n")]


def _assert_same_numbers(ours: pd.DataFrame, reference: pd.DataFrame) -> None:
    assert len(ours) == len(reference) > 0
    for column in reference.columns:
        assert column in ours.columns, column
        a, b = ours[column].tolist(), reference[column].tolist()
        for x, y in zip(a, b, strict=True):
            if isinstance(y, float) and math.isnan(y):
                assert isinstance(x, float) and math.isnan(x), (column, x, y)
            else:
                assert x == y, (column, x, y)  # exact: the same statistics of the same cells


# --------------------------------------------------------------------------- numbers


@pytest.mark.slow
def test_csv_numbers_equal_the_runs_summary_and_slopes(cli, f1_run):
    code, out, _ = cli("table", f1_run, "--format", "csv")
    assert code == 0
    cells, fits = _csv_blocks(out)
    _assert_same_numbers(cells, pd.read_csv(f1_run / "summary.csv"))
    _assert_same_numbers(fits, pd.read_csv(f1_run / "slopes.csv"))
    assert set(cells["run"]) == {str(f1_run)}
    for key in figure1.METRICS:  # the bound sits next to each measurement
        assert (cells[f"{key}_mean"] < cells[f"{key}_theory"]).all()


def test_figure2_csv_equals_the_runs_summary(cli, f2_run):
    code, out, _ = cli("table", f2_run, "--format", "csv")
    assert code == 0
    (cells,) = _csv_blocks(out)
    _assert_same_numbers(cells, pd.read_csv(f2_run / "summary.csv"))


def test_table1_csv_equals_the_runs_table1_csv(cli, t1_run):
    code, out, _ = cli("table", t1_run, "--format", "csv")
    assert code == 0
    (cells,) = _csv_blocks(out)
    _assert_same_numbers(cells, pd.read_csv(t1_run / "table1.csv"))


def test_table1_under_bound_is_never_a_bare_yes(cli, t1_run):
    # the fake cells' bounds (500-1500) lie above the zero predictor's held-out loss log 2
    code, out, _ = cli("table", t1_run, "--format", "markdown")
    assert code == 0
    header = next(line for line in out.splitlines() if line.startswith("| d_m"))
    column = [c.strip() for c in header.strip("|").split("|")].index("under bound")
    rows = [line for line in out.splitlines() if line.startswith("| 16") or
            line.startswith("| 32")]
    assert len(rows) == 4
    assert {[c.strip() for c in r.strip("|").split("|")][column] for r in rows} == {
        "yes, vacuous"}


def test_t_quantile_and_intervals_match_known_values():
    """t_{0.975} against tabulated values, the CI of a known sample, and the slope CI covering
    the true slope of noisy power-law data."""
    from boundcalc.runs.stats import fit_slope, mean_ci95, t_quantile_975

    for df, table in ((1, 12.7062), (2, 4.3027), (4, 2.7764), (9, 2.2622), (30, 2.0423)):
        assert abs(t_quantile_975(df) - table) < 5e-4
    mean, half, k = mean_ci95([1.0, 3.0])
    assert (mean, k) == (2.0, 2) and abs(half - 12.7062 * math.sqrt(2) / math.sqrt(2)) < 1e-3
    rng = np.random.default_rng(0)
    widths = [8, 16, 32, 64, 128, 256]
    values = [m ** -0.5 * math.exp(0.05 * rng.standard_normal()) for m in widths]
    slope, ci, _ = fit_slope(widths, values)
    assert abs(slope + 0.5) <= ci and ci < 0.2


# --------------------------------------------------------------------------- formats


def test_every_format_parses_with_one_table_per_kind_and_the_slopes(cli, f1_run, f2_run,
                                                                    t1_run):
    runs = (f1_run, f2_run, t1_run)
    panels = figure1.METRICS + figure1.EXTRA_METRICS
    rows = {"figure1": len(figure1.PRESETS["quick"].widths), "slopes": len(panels),
            "figure2": 2 * 2,
            "table1": len(table1.all_cells(table1.PRESETS["quick"]))}
    expected = [rows["figure1"], rows["slopes"], rows["figure2"], rows["table1"]]

    code, out, _ = cli("table", *runs, "--format", "csv")
    assert code == 0
    assert [len(b) for b in _csv_blocks(out)] == expected
    assert list(_csv_blocks(out)[1]["panel"]) == list(figure1.METRICS + figure1.EXTRA_METRICS)

    code, out, _ = cli("table", *runs, "--format", "markdown")
    assert code == 0
    blocks = [b for b in out.strip().split("\n\n") if b.startswith("|")]
    assert [len(b.splitlines()) - 2 for b in blocks] == expected
    for block in blocks:
        widths = {line.count("|") for line in block.splitlines()}
        assert len(widths) == 1, block
        assert set(block.splitlines()[1].strip("|").split("|")) == {"---:"}
    assert "slope in m (± 95% CI)" in out and "± " in blocks[1]

    # LaTeX: figure1's slopes are the last row of its table (one tabular per kind, not two),
    # figure2 one row per lag with the two models side by side: the format changed on purpose
    code, out, _ = cli("table", *runs, "--format", "latex")
    assert code == 0
    assert out.count("\\toprule") == out.count("\\bottomrule") == 3
    assert out.count("\\begin{tabular}") == out.count("\\end{tabular}") == 3
    for tabular in out.split("\\begin{tabular}")[1:]:
        body = tabular.split("\\toprule")[1].split("\\bottomrule")[0]
        lines = [line for line in body.splitlines() if line.endswith("\\\\")]
        assert len({_columns(line) for line in lines}) == 1, lines
    assert "\\pm" in out and "\\varepsilon_{\\mathrm{lin}}" in out
    assert "slope & " in out and "Transformer ($W$) & IndRNN ($u$)" in out
    assert "min\\_train" not in out and "lin\\_error" not in out   # symbols, not column names


def test_several_runs_of_one_kind_make_one_table_with_a_run_column(cli, t1_run, tmp_path):
    other = tmp_path / "second"
    shutil.copytree(t1_run, other)
    code, out, _ = cli("table", t1_run, other, "--format", "csv")
    assert code == 0
    (cells,) = _csv_blocks(out)
    assert list(cells["run"]) == [str(t1_run)] * 4 + [str(other)] * 4
    code, out, _ = cli("table", t1_run, other, "--format", "markdown")
    assert out.count("| run |") == 1 and f"| {other} |" in out


def _column(out: str, header: str) -> list[str]:
    """The cells under ``header`` in the first Markdown table of ``out`` that has it."""
    lines = [line for line in out.splitlines() if line.startswith("|")]
    start = next(i for i, line in enumerate(lines) if header in line)
    index = [c.strip() for c in lines[start].strip("|").split("|")].index(header)
    body = []
    for line in lines[start + 2:]:
        if not line.startswith("|") or line.startswith("| panel") or line.startswith("|---"):
            break
        body.append([c.strip() for c in line.strip("|").split("|")][index])
    return body


def test_markdown_and_latex_show_the_geometric_mean_and_interval_by_default(cli, f1_run):
    """The figures' statistic: ``gmean [low, high]`` rounded at the last digit of the narrower
    side of the interval (--digits − 1 significant digits, at least two)."""
    summary = pd.read_csv(f1_run / "summary.csv")
    first = summary.iloc[0]
    k = column_exponent(list(summary["lin_error_gmean"]))
    code, out, _ = cli("table", f1_run, "--format", "markdown", "--digits", "4")
    assert code == 0
    cells = _column(out, "linearization error (geometric mean [95% CI])")
    assert cells[0] == interval_text(first["lin_error_gmean"], first["lin_error_gci_low"],
                                     first["lin_error_gci_high"], "markdown", 4, 3, k)
    code, out, _ = cli("table", f1_run, "--format", "latex")
    shown = interval_text(first["lin_error_gmean"], first["lin_error_gci_low"],
                          first["lin_error_gci_high"], "latex", 3, 2, k)
    assert f"${shown}$" in out
    assert "geometric mean [95\\% CI on the log values]" in out and " \\pm " not in \
        out.split("\\midrule")[1]


def test_statistic_arithmetic_shows_mean_plus_minus_ci(cli, f1_run):
    summary = pd.read_csv(f1_run / "summary.csv")
    first = summary.iloc[0]
    k = column_exponent(list(summary["lin_error_mean"]))
    code, out, _ = cli("table", f1_run, "--statistic", "arithmetic", "--digits", "4")
    assert code == 0 and "mean ± 95% CI over seeds" in out
    cells = _column(out, "linearization error (± 95% CI)")
    assert cells[0] == column_mean_ci_text(first["lin_error_mean"], first["lin_error_ci95"],
                                           "markdown", 4, 3, k)
    code, _, err = cli("table", f1_run, "--statistic", "median")
    assert code == 2 and err.count("\n") == 1 and "--statistic" in err


def _power(cell: str) -> str | None:
    """k of a cell written ``(…)×10^k``, None for plain digits, ``bare`` for a number with its
    own power of ten (the ends of an interval spanning decades are allowed theirs)."""
    outside = re.sub(r"\[.*\]", "", cell)
    if (match := re.search(r"\)×10\^(-?\d+)$", outside)) is not None:
        return match[1]
    return "bare" if "×10^" in outside else None


@pytest.mark.parametrize("statistic", ["geometric", "arithmetic"])
@pytest.mark.slow
def test_every_column_writes_its_numbers_with_one_power_of_ten(cli, f1_run, f2_run, statistic):
    """A column is plain digits throughout, or ``(…)×10^k`` with one k throughout."""
    code, out, _ = cli("table", f1_run, f2_run, "--statistic", statistic)
    assert code == 0
    blocks = [b.splitlines() for b in out.strip().split("\n\n") if b.startswith("|")]
    assert len(blocks) == 3
    powers_seen = set()
    for block in blocks:
        rows = [[c.strip() for c in line.strip("|").split("|")] for line in block[2:]]
        for column in zip(*rows, strict=True):
            powers = {_power(cell) for cell in column if cell != "--"}
            assert len(powers) <= 1 and "bare" not in powers, (block[0], column)
            powers_seen |= powers
    assert powers_seen - {None}   # the quick run has a column that needs a power of ten


def test_no_table_output_has_e_notation(cli, f1_run, f2_run, t1_run):
    """Neither LaTeX nor Markdown writes ``1.1e+02``: powers of ten are ``\\times10^{2}`` or
    ``×10^2``, in the tables of every kind and in the files reproduce wrote."""
    texts = [(f1_run / "figure1_table.tex").read_text()]
    for fmt in ("latex", "markdown"):
        code, out, _ = cli("table", f1_run, f2_run, t1_run, "--format", fmt)
        assert code == 0
        texts.append(out)
    for text in texts:
        assert "e+" not in text and not re.search(r"\d[eE][+-]?\d", text), text
    assert "\\times10^{" in texts[1] and "×10^" in texts[2]


def test_latex_of_a_run_is_the_table_reproduce_wrote(cli, f1_run, f2_run, t1_run):
    """One LaTeX implementation: ``boundcalc table RUN --format latex`` prints, byte for byte,
    what ``reproduce`` wrote as figure1_table.tex and table1_table.tex (and figure 2's
    latex_table)."""
    code, out, _ = cli("table", f1_run, "--format", "latex")
    assert code == 0 and out == (f1_run / "figure1_table.tex").read_text()
    code, out, _ = cli("table", t1_run, "--format", "latex")
    assert code == 0 and out == (t1_run / "table1_table.tex").read_text()
    assert "\\multicolumn{2}{c}{paper}" in out
    cfg = figure2.make_config("quick", seeds=3, device="cpu", lags=(4, 16))
    code, out, _ = cli("table", f2_run, "--format", "latex")
    summary = figure2.summarize(load_run(f2_run).records, cfg)
    assert code == 0 and out == figure2.latex_table(summary, cfg)


def test_output_file_holds_what_stdout_shows(cli, f1_run, tmp_path):
    _, shown, _ = cli("table", f1_run, "--format", "latex")
    target = tmp_path / "table.tex"
    code, out, err = cli("table", f1_run, "--format", "latex", "--output", target)
    assert code == 0 and out == "" and f"wrote {target}" in err
    assert target.read_text() == shown
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


# --------------------------------------------------------------------------- figures


def _fail(*args, **kwargs):
    raise AssertionError("boundcalc table recomputed a cell")


@pytest.mark.slow
def test_figures_are_redrawn_from_stored_cells_without_recomputing(cli, f1_run, tmp_path,
                                                                   monkeypatch):
    run = tmp_path / "copy"
    shutil.copytree(f1_run, run)
    for name in ("figure1.png", "figure1.pdf"):
        (run / name).unlink()
    cells = {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (run / "cells").iterdir()}
    for name in ("compute_cell", "compute_cells", "seed_data", "run_cells", "train_students"):
        monkeypatch.setattr(figure1, name, _fail)
    code, _, err = cli("table", run, "--figures")
    assert code == 0, err
    assert (run / "figure1.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (run / "figure1.pdf").read_bytes()[:5] == b"%PDF-"
    assert {p: (p.stat().st_mtime_ns, p.read_bytes()) for p in (run / "cells").iterdir()} \
        == cells
    assert not [p for p in run.iterdir() if p.name.startswith(".figures.")]


@pytest.mark.slow
def test_figure_width_redraws_at_that_width_without_type3_fonts(cli, f2_run, tmp_path):
    target = tmp_path / "narrow"
    code, _, err = cli("table", f2_run, "--figure-width", "double", "--figures-dir", target)
    assert code == 0, err
    pdf = (target / "figure2.pdf").read_bytes()
    assert b"/Type3" not in pdf and b"/CIDFontType2" in pdf      # Type 42 (TrueType) fonts
    box = re.search(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)", pdf)
    assert float(box.group(1)) == pytest.approx(6.75 * 72)
    code, _, err = cli("table", f2_run, "--figure-width", "wide")
    assert code == 2 and err.startswith("error: --figure-width")


@pytest.mark.slow
def test_figures_dir_gets_png_and_pdf_per_run(cli, f2_run, t1_run, tmp_path, monkeypatch):
    for name in ("train_group", "train_cell", "run_cells"):
        monkeypatch.setattr(figure2, name, _fail)
    target = tmp_path / "figs"
    code, _, err = cli("table", f2_run, t1_run, "--figures-dir", target)
    assert code == 0, err
    folder = target / f2_run.name
    assert sorted(p.name for p in folder.iterdir()) == ["figure2.caption.txt", "figure2.pdf",
                                                        "figure2.png"]
    assert (folder / "figure2.png").stat().st_size > 1000
    assert "table1 has no figure" in err
    assert not (target / t1_run.name).exists()


# --------------------------------------------------------------------------- incomplete, errors


def test_incomplete_run_tables_what_exists_and_names_the_missing_cells(cli, t1_run, tmp_path):
    run = tmp_path / "partial"
    shutil.copytree(t1_run, run)
    (run / "cells" / "dm32-N128.json").unlink()
    (run / "cells" / "dm16-N64.json").unlink()
    code, out, err = cli("table", run, "--format", "csv")
    assert code == 0
    (cells,) = _csv_blocks(out)
    assert list(zip(cells["d_m"], cells["N"], strict=True)) == [(16, 128), (32, 64)]
    note = [line for line in err.splitlines() if "missing" in line]
    assert len(note) == 1 and "2 of 4" in note[0]
    assert "dm16-N64" in note[0] and "dm32-N128" in note[0] and str(run) in note[0]


def test_incomplete_figure1_run_still_fits_slopes_on_the_widths_it_has(cli, f1_run, tmp_path):
    run = tmp_path / "partial"
    shutil.copytree(f1_run, run)
    for seed in figure1.PRESETS["quick"].seeds:
        (run / "cells" / f"m64-seed{seed}.json").unlink()
    (run / "cells" / "m8-seed2.json").unlink()
    code, out, err = cli("table", run, "--format", "csv")
    assert code == 0
    cells, fits = _csv_blocks(out)
    assert list(cells["m"]) == [8, 16, 32] and list(cells["seeds"]) == [1, 2, 2]
    assert set(fits["widths"]) == {3}
    assert "3 of 8 figure1 cells missing" in err


@pytest.mark.parametrize("kind", ["table1", "figure1"])
def test_damaged_cells_are_named_and_the_others_tabled(cli, t1_run, f1_run, tmp_path, kind):
    run = tmp_path / "damaged"
    shutil.copytree(t1_run if kind == "table1" else f1_run, run)
    keys = (["dm16-N64", "dm16-N128", "dm32-N64"] if kind == "table1"
            else ["m8-seed1", "m16-seed1", "m32-seed2"])
    texts = {keys[0]: "", keys[1]: "{}"}
    texts[keys[2]] = (run / "cells" / f"{keys[2]}.json").read_text()[:40]      # truncated
    for key, text in texts.items():
        (run / "cells" / f"{key}.json").write_text(text)
    code, out, err = cli("table", run, "--format", "csv")
    assert code == 0 and "Traceback" not in err
    cells = _csv_blocks(out)[0]
    if kind == "table1":
        assert list(zip(cells["d_m"], cells["N"], strict=True)) == [(32, 128)]
    else:
        assert list(cells["m"]) == [8, 16, 32, 64] and list(cells["seeds"]) == [1, 1, 1, 2]
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 3
    for key in keys:
        assert sum(str(run / "cells" / f"{key}.json") in w for w in warnings) == 1
    assert all((run / "cells" / f"{key}.json").read_text() == t for key, t in texts.items())


def _unknown_kind(tmp_path: Path) -> Path:
    folder = tmp_path / "validate-run"
    RunDirectory(folder, config={"statements": ["lemma2"], "m": 16})
    return folder


def _no_config(tmp_path: Path) -> Path:
    (tmp_path / "empty").mkdir()
    return tmp_path / "empty"


@pytest.mark.parametrize(("make", "says"), [
    (lambda tmp: tmp / "does-not-exist", "is not a directory"),
    (lambda tmp: (tmp / "file.txt").write_text("x") and tmp / "file.txt", "is not a directory"),
    (_no_config, "has no config.json"),
    (_unknown_kind, "no experiment"),
], ids=["missing", "file", "no-config", "unknown-kind"])
def test_bad_run_dir_exits_2_with_one_line_naming_the_argument(cli, tmp_path, make, says):
    bad = make(tmp_path)
    code, out, err = cli("table", bad)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: RUN_DIR") and repr(str(bad)) in err and says in err
    assert "Traceback" not in err


def test_bad_format_exits_2_naming_the_flag(cli, t1_run):
    code, _, err = cli("table", t1_run, "--format", "json")
    assert code == 2 and err.startswith("error: --format") and len(err.splitlines()) == 1


def test_kind_is_recognised_without_the_experiment_field(tmp_path):
    assert detect_kind({"widths": [8], "seeds": [1]}) == "figure1"
    assert detect_kind({"lags": [4], "seeds": [0]}) == "figure2"
    assert detect_kind({"dms": [16], "Ns": [64]}) == "table1"
    (tmp_path / "cells").mkdir()
    (tmp_path / "cells" / "dm16-N64.json").write_text("{}")
    assert detect_kind({}, tmp_path) == "table1"
    assert detect_kind({"experiment": "figure9"}, tmp_path) is None


# --------------------------------------------------------------------------- no torch


def test_table_command_never_imports_torch_or_matplotlib(f1_run, f2_run, t1_run, tmp_path):
    code = ("import sys; from boundcalc.cli import main; "
            f"rc = main(['table', {str(f1_run)!r}, {str(f2_run)!r}, {str(t1_run)!r}, "
            "'--format', 'latex']); "
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'matplotlib')); print(rc, heavy, file=sys.stderr)")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "0 []"
    assert done.stdout.count("\\begin{tabular}") == 3


@pytest.mark.slow
def test_figures_are_redrawn_from_stored_runs_without_torch(f1_run, f2_run, tmp_path):
    """With matplotlib but no torch (``import torch`` fails), ``--figures`` still redraws."""
    target = tmp_path / "figs"
    code = ("import sys; sys.modules['torch'] = None; from boundcalc.cli import main; "
            f"sys.exit(main(['table', {str(f1_run)!r}, {str(f2_run)!r}, "
            f"'--figures-dir', {str(target)!r}]))")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    for run, name in ((f1_run, "figure1"), (f2_run, "figure2")):
        assert (target / run.name / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert (target / run.name / f"{name}.pdf").read_bytes()[:5] == b"%PDF-"


def test_figures_without_matplotlib_are_one_line_naming_the_extra(f2_run, tmp_path):
    code = ("import sys; sys.modules['matplotlib'] = None; from boundcalc.cli import main; "
            f"sys.exit(main(['table', {str(f2_run)!r}, '--figures-dir', "
            f"{str(tmp_path / 'figs')!r}, '--format', 'csv']))")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "error: --figures draws with matplotlib, which is not installed: pip install "
        "'boundcalc[plot]'"]


def test_slope_tables_name_their_panels_not_their_keys(cli, f1_run):
    code, out, _ = cli("table", f1_run, "--format", "markdown")
    assert code == 0
    assert "| linearization error |" in out and "| lin_error |" not in out
