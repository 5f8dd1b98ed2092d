"""Property test (hypothesis) over hostile input.

Every calculator command (not the torch ones: validate, reproduce) is driven in-process with values
drawn from these classes: negative, zero, nan, inf, 1e±400, text, empty, odd / huge m,
n = 1, δ ∈ {0, 1, 1e-300}, wrong component counts, unknown / degenerate activations, precision
extremes, unwritable / odd ``--output``. Whatever the input:

* the exit code is 0, 1 or 2;
* neither stream shows "Traceback" or "internal error";
* exit 0 with ``--format json`` is JSON with finite numbers only (an overflowed quantity is a string
  plus ``"verdict": "overflow"``, see :data:`boundcalc.calc.api.OVERFLOW`), no Infinity / NaN;
* exit 2 is one stderr line, ``error:`` / ``Error:``, naming the flag (``--...``; the one
  positional argument, ``explain STATEMENT``, is named ``STATEMENT``).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.cli import main

STATEMENTS = ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1", "prop1", "remark9",
              "prop2")

# --- value classes ------------------------------------------------------------------------------

HOSTILE = ["-1", "-0.5", "0", "-0", "nan", "NaN", "inf", "-inf", "1e400", "-1e400", "1e-400",
           "1e300", "1e-300", "5e-324", "abc", "", " ", "1,2", "0x10", "1e", "--", "½"]
#: valid-looking values, drawn about as often as hostile ones, so that runs reach the evaluators
PLAIN = st.sampled_from(["0.1", "0.5", "1", "2", "10", "1e-3"])
REAL = st.one_of(PLAIN, PLAIN, PLAIN, PLAIN, st.sampled_from(HOSTILE),
                 st.floats(allow_nan=True, allow_infinity=True).map(repr),
                 st.text(max_size=6))
M = st.one_of(st.sampled_from(["2", "8", "512", "3", "1", "7", "2" + "0" * 40, "1e30",
                               "1e400", "4.0", "4.5", str(2**64), str(2**64 + 1)]), REAL)
N = st.one_of(st.sampled_from(["1", "2", "1000", "1e12", "1e300", "1.5"]), REAL)
DELTA = st.one_of(st.sampled_from(["0", "1", "1e-300", "0.05", "0.5", "0.999999"]), REAL)
VEC = st.one_of(
    st.sampled_from(["1", "0", "2,1,0.5", "1,2", "1,2,3,4", "1,,1", ",", "1,-1,1", "nan,1,1",
                     "inf,1,1", "1e400,1,1", "1e300,1e300,1e300", "0,0,0"]),
    REAL)
ACTIVATION = st.sampled_from(
    ["tanh", "erf", "relu", "", "TANH", "custom:", "custom:1,1", "custom:1,1,1,1",
     "custom:0,0,0", "custom:-1,1,1", "custom:nan,1,1", "custom:inf,1,1",
     "custom:1e300,1e300,1e300", "custom:1e400,1,1", "custom:a,b,c", "custom"])
PRECISION = st.sampled_from(["1", "0", "-1", "5", "10", "15", "30", "100", "1000", "100000",
                             "1e9", "nan", "abc", ""])
INT = st.one_of(st.sampled_from(["1", "2", "8", "1000", "1e300", "1.5", "2" + "0" * 40]), REAL)
FORMAT = st.sampled_from(["json", "json", "json", "table", "csv", "markdown", "latex", "xml", ""])
ROUTE = st.sampled_from(["tight", "paper", "other", ""])
GRID = st.one_of(st.sampled_from(["2:64:x2", "2,8,1e30", "2:1e400:x2", "8:2:x2", "2:64:x1",
                                  "2:64:+0", "2:64:x0", "2:8", "a:b:c", "2,,4", ":", "2:64:x2:1"]),
                 M)
T_LIST = st.one_of(st.sampled_from(["1,4,16,64,256,1024", "1", "0", "-1", "1,a", "", ",", "1e400",
                                    "1e300", "4,2"]), INT)


def _common() -> dict[str, st.SearchStrategy[str]]:
    """The options that every statement command (and sweep / width / steps) takes."""
    return {"--m": M, "--n": N, "--d": INT, "--T": INT, "--delta": DELTA, "--rho": VEC,
            "--nu": VEC, "--steps": INT, "--eta": REAL, "--activation": ACTIVATION,
            "--precision": PRECISION, "--format": FORMAT}


def _options() -> dict[tuple[str, ...], dict[str, st.SearchStrategy[str]]]:
    table: dict[tuple[str, ...], dict[str, st.SearchStrategy[str]]] = {}
    for s in ("event", "lemma2", "lemma3", "lemma5", "lemma6", "prop2"):
        table[(s,)] = _common()
    for s in ("theorem1", "prop1", "remark9"):
        table[(s,)] = {**_common(), "--route": ROUTE}
    table[("prop1",)]["--batch-size"] = INT
    table[("remark9",)]["--misspecification"] = REAL
    sweep = {k: GRID for k in ("--m", "--n", "--d", "--T", "--steps", "--eta", "--delta")}
    sweep.update({"--rho": VEC, "--nu": VEC, "--activation": ACTIVATION, "--format": FORMAT,
                  "--route": ROUTE, "--batch-size": GRID, "--misspecification": GRID})
    sweep.update({f"--{k}-{c}": GRID for k in ("rho", "nu") for c in "cuw"})
    table[("sweep", "theorem1")] = sweep
    width = {k: v for k, v in _common().items() if k != "--m"}
    table[("width",)] = {**width, "--target": REAL, "--route": ROUTE}
    steps = {k: v for k, v in _common().items() if k != "--steps"}
    table[("steps",)] = {**steps, "--target": REAL, "--route": ROUTE}
    table[("compare-rnn",)] = {"--T": T_LIST, "--m": M, "--n": N, "--rho": VEC, "--nu": VEC,
                               "--alpha": REAL, "--steps": INT, "--activation": ACTIVATION,
                               "--format": FORMAT}
    table[("generalization",)] = {
        "--N": N, "--dm": INT, "--ds": INT, "--rx": REAL, "--radii": VEC, "--delta": DELTA,
        "--alpha": REAL, "--phi0": REAL, "--from-init": INT, "--d": INT, "--label-bound": REAL,
        **{f"--{w}": REAL for w in ("wq-fro", "wk-fro", "wv-fro", "wq-spec", "wk-spec",
                                    "wv-spec", "wo-norm")},
        "--hidden-constants": st.sampled_from(["C_D=1", "C_D=-1", "C_D=nan", "X=1", "C_D", "",
                                               "C_D=1e400"]),
        "--data": st.sampled_from(["missing.npz", "", "/proc/version", "/", "x.npz"]),
        "--precision": PRECISION, "--format": FORMAT}
    return table


OPTIONS = _options()
FLAGS = {"theorem1": ["--symbolic", "--strict"], "sweep": ["--strict"], "width": ["--strict",
         "--nonvacuous"], "steps": ["--strict"], "generalization": ["--as-printed", "--strict",
         "--symbolic"]}
OUTPUTS = ["file", "file", "/sys/nope/out.json", "/proc/version", "DIR", "", "-",
           "/nonexistent-dir/x/y.json"]


@st.composite
def invocations(draw) -> tuple[list[str], str | None, str | None]:
    """(argv, --output kind or None, format). A handful of options per run, so that most runs get
    past the first error and reach the evaluators."""
    if draw(st.integers(0, 14)) == 0:
        statement = draw(st.one_of(st.sampled_from(STATEMENTS), st.sampled_from(
            ["", "foo", "THEOREM1", "sweep", "--route"])))
        argv = ["explain", statement]
        if draw(st.booleans()):
            argv += ["--route", draw(ROUTE)]
        fmt = draw(st.sampled_from(["json", "table", "markdown", "latex", "csv", "xml"]))
        argv += ["--format", fmt]
    else:
        command = draw(st.sampled_from(sorted(OPTIONS)))
        table = OPTIONS[command]
        names = draw(st.lists(st.sampled_from(sorted(table)), max_size=5, unique=True))
        required = {"steps": ["--target"], "width": ["--target"],
                    "generalization": ["--alpha", "--phi0", "--from-init"]}
        for name in required.get(command[0], []):
            if name not in names and draw(st.integers(0, 5)) > 0:
                names.append(name)
        argv = list(command)
        fmt = None
        for name in names:
            value = draw(table[name])
            if name == "--format":
                fmt = value
            argv += [name, value]
        if fmt is None and draw(st.booleans()):
            fmt = "json"
            argv += ["--format", "json"]
        for flag in FLAGS.get(command[0], []):
            if draw(st.integers(0, 4)) == 0:
                argv.append(flag)
    output = draw(st.one_of(st.none(), st.sampled_from(OUTPUTS)))
    return argv, output, fmt


def _no_constant(name: str) -> object:
    raise ValueError(f"non-finite JSON constant {name}")


def _finite(obj: object) -> None:
    if isinstance(obj, float):
        assert obj == obj and abs(obj) != float("inf"), obj
    elif isinstance(obj, dict):
        for v in obj.values():
            _finite(v)
    elif isinstance(obj, list):
        for v in obj:
            _finite(v)


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as exc:  # main returns its code; a SystemExit is itself a finding
            code = exc.code if isinstance(exc.code, int) else 99
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str], tmp: Path, output: str | None = None,
          fmt: str | None = None) -> tuple[int, str, str]:
    """Run ``boundcalc argv`` (with ``--output`` of the given kind) and assert the properties."""
    target = None
    argv = list(argv)
    if output is not None:
        if output == "file":
            target = tmp / "out.txt"
            target.unlink(missing_ok=True)
            output = str(target)
        elif output == "DIR":
            output = str(tmp)
        argv += ["--output", output]
    code, out, err = _run(argv)
    shown = f"boundcalc {' '.join(map(repr, argv))} -> {code}\nstdout: {out[-2000:]}\nstderr: {err}"
    assert code in (0, 1, 2), shown
    for text in (out, err):
        assert "Traceback" not in text, shown
        assert "internal error" not in text.lower(), shown
    if code == 2:
        lines = err.strip("\n").splitlines()
        assert len(lines) == 1, shown
        assert lines[0].startswith(("error:", "Error:")), shown
        assert "--" in lines[0] or (argv[0] == "explain" and "STATEMENT" in lines[0]), shown
    if code == 0 and fmt == "json":
        written = Path(output) if output else None  # relative: the cwd, a tmp folder
        text = written.read_text() if written is not None and written.is_file() else out
        data = json.loads(text, parse_constant=_no_constant)
        _finite(data)
        if "overflow" in text and isinstance(data, dict) and "overflow" in data:
            assert data.get("verdict") == "overflow", shown
    return code, out, err


@settings(max_examples=1000, deadline=None, derandomize=True, database=None,
          suppress_health_check=list(HealthCheck))
@given(inv=invocations())
@pytest.mark.slow
def test_hostile_input_never_breaks_a_command(inv, tmp_path_factory, monkeypatch) -> None:
    argv, output, fmt = inv
    monkeypatch.chdir(tmp_path_factory.getbasetemp())  # `--output -` is a file named '-'
    check(argv, tmp_path_factory.mktemp("fuzz", numbered=True), output, fmt)


# --- regressions: exact inputs the property found ----------------------------------------------

REGRESSIONS: list[tuple[list[str], str | None, str | None]] = [
    # hand-picked hostile cases, and `--output -` (a file named '-', read back by the check)
    (["prop2", "--m", "512", "--T", "1024", "--format", "json"], None, "json"),
    (["theorem1", "--rho", "1e300", "--format", "json"], None, "json"),
    (["theorem1", "--eta", "5e-324", "--format", "json"], "file", "json"),
    (["sweep", "theorem1", "--m", "2:1e400:x2"], None, None),
    (["sweep", "theorem1", "--m", "1e30,2", "--format", "json"], None, "json"),
    (["steps", "--target", "0.1", "--rho", "1e300"], None, None),
    (["compare-rnn", "--T", "1,4,16,64,256,1024", "--format", "json"], None, "json"),
    (["compare-rnn", "--format", "xml"], None, None),
    (["lemma2", "--format", "json"], "-", "json"),
    (["theorem1", "--format", "json"], "/sys/nope/out.json", "json"),
    # found by the property: --from-init drew a 64 x 6.8e16 matrix (numpy: array too big, exit 3)
    (["generalization", "--phi0", "0.1", "--d", "6.801222510405973e+16", "--format", "json",
      "--ds", "6.801222510405973e+16", "--rx", "0.1", "--alpha", "0.1", "--from-init",
      "6.801222510405973e+16", "--as-printed"], None, "json"),
]


@pytest.mark.parametrize(("argv", "output", "fmt"), REGRESSIONS)
def test_regression(argv, output, fmt, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    check(argv, tmp_path, output, fmt)
