"""Property tests (hypothesis) over valid inputs: finite, non-negative numbers (positive where no
input makes them vanish), the same numbers in every output format, and the mpmath point evaluator
agreeing with the numpy grid evaluator."""

from __future__ import annotations

import csv
import io
import json
import math
import re

import mpmath
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from boundcalc.calc.api import evaluate
from boundcalc.calc.evaluator import (
    activation_values,
    compiled_statement,
    evaluate_grid,
)
from boundcalc.cli import main
from boundcalc.inputs.params import ARGUMENT_NAMES, InputError, validate

STATEMENTS = ("event", "lemma2", "lemma3", "lemma5", "lemma6", "theorem1", "prop1", "remark9")
GROUPS = ("constants", "terms", "bound")

SETTINGS = settings(deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture],
                    derandomize=True)


def _decimal(low: float, high: float, **kw) -> st.SearchStrategy[str]:
    """Decimal text of a float in [low, high] (the shortest repr, e.g. '0.05', '1e-07')."""
    return st.floats(low, high, allow_nan=False, allow_infinity=False, **kw).map(repr)


def _scale(high: float) -> st.SearchStrategy[str]:
    """0, or a value in [1e-6, high] (smaller ones underflow float64 squares in the grid)."""
    return st.one_of(st.just("0"), _decimal(1e-6, high))


def _activation() -> st.SearchStrategy[str]:
    custom = st.tuples(*[_scale(10)] * 3).map(lambda s: "custom:" + ",".join(s))
    return st.one_of(st.sampled_from(["tanh", "erf"]), custom)


@st.composite
def points(draw) -> tuple[str, dict[str, object]]:
    """A statement and a valid input point: m even in [2, 2^40], n in [1, 1e12], d in [1, 4096],
    δ in (0, 1/2), every ρ and ν component 0 or in [1e-6, 100] (ρ ≥ ν or not), K in [1, 1e9], tanh /
    erf / custom activations, η given or η*."""
    statement = draw(st.sampled_from(STATEMENTS))
    n = draw(st.integers(1, 10**12))
    rho = [draw(_scale(100)) for _ in range(3)]
    nu = [draw(_scale(100)) for _ in range(3)]
    if draw(st.booleans()):  # often rho >= nu componentwise, so that the bound is guaranteed
        nu = [min(a, b, key=float) for a, b in zip(rho, nu, strict=True)]
    eta = draw(st.one_of(st.none(), _decimal(1e-9, 10, exclude_min=True)))
    if eta is None and all(float(v) == 0 for v in nu):
        nu[0] = "1"
    values = {
        "m": 2 * draw(st.integers(1, 2**39)), "n": n, "d": draw(st.integers(1, 4096)),
        "T": draw(st.integers(1, 4096)),
        "delta": draw(_decimal(1e-12, 0.5, exclude_max=True)),
        "rho": ",".join(rho), "nu": ",".join(nu), "steps": draw(st.integers(1, 10**9)),
        "eta": eta, "activation": draw(_activation()),
        "batch_size": draw(st.integers(1, 10**6)),
        "misspecification": draw(_scale(10)),
    }
    return statement, values


def _evaluate(statement: str, values: dict[str, object], precision: int = 20):
    """``evaluate``, or None when η* is needed but undefined (L·B = 0: a zero activation bound,
    or zero radii and budgets), which must then be the one input error (``--eta``)."""
    inputs = validate(**values, statement=statement)
    try:
        return evaluate(statement, inputs, precision=precision)
    except InputError as exc:
        assert exc.flag == "--eta" and inputs.eta is None, exc
        grid = evaluate_grid(statement, _columns(inputs))
        assert not math.isfinite(float(grid["constants.theorem_step_size"]))
        return None


def _vanishing_inputs(inputs: dict[str, object]) -> bool:
    """Whether some input is 0 (a radius, a budget, an activation bound or ε_mis), which can make
    a constant or term exactly 0."""
    keys = ("rho_c", "rho_u", "rho_w", "nu_c", "nu_u", "nu_w", "sigma0", "sigma1", "sigma2")
    return any(inputs[k] == 0 for k in keys)


@settings(SETTINGS, max_examples=150)
@given(point=points())
def test_every_number_is_finite_and_non_negative(point):
    statement, values = point
    res = _evaluate(statement, values)
    if res is None:
        return
    data = res.to_dict()
    zero_allowed = _vanishing_inputs(data["inputs"])
    for group in GROUPS:
        for key, value in data[group].items():
            if value is None:  # undefined here: only eta* with a given eta and L·B = 0
                assert (key, data["inputs"]["eta_source"]) == ("theorem_step_size", "given")
                continue
            assert math.isfinite(value), (group, key, value)
            assert value >= 0, (group, key, value)
            if not zero_allowed and key != "misspecification":
                assert value > 0, (group, key, value)
    if data["inputs"]["epsilon_mis"] > 0 and not zero_allowed and "misspecification" in \
            data["terms"]:
        assert data["terms"]["misspecification"] > 0
    assert 0 < data["probability"] <= 1
    for number in (data["inputs"][k] for k in ("eta", "sigma0", "sigma1", "sigma2")):
        assert number is None or (math.isfinite(number) and number >= 0)
    json.dumps(data, allow_nan=False)  # the JSON contract: every number finite


# --------------------------------------------------------------------------- formats


def _cli(args: list[str], capsys) -> str:
    capsys.readouterr()
    assert main(args) == 0
    return capsys.readouterr().out


def _flags(values: dict[str, object]) -> list[str]:
    flags = []
    for key, value in values.items():
        if value is not None:
            flags += [f"--{key.replace('_', '-')}", str(value)]
    return flags


def _shown(value: float | int, digits: int = 6) -> float:
    """The number a rounding format shows, parsed back."""
    return float(value) if isinstance(value, int) else float(f"{value:.{digits}g}")


def _csv_numbers(text: str) -> dict[tuple[str, str], str]:
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["section", "name", "value"]
    return {(s, n): v for s, n, v in rows[1:]}


def _section_key(title: str) -> str:
    """The JSON section a text format's section title shows: the tight route's max-event
    constants are constants shown apart."""
    key = title.strip().lower()
    return "constants" if key.startswith("max-event constants") else key


def _markdown_numbers(text: str) -> dict[tuple[str, str], str]:
    out, section = {}, ""
    for line in text.splitlines():
        if line.startswith("### "):
            section = _section_key(line[4:])
        elif line.startswith("| ") and section and not line.startswith("| name"):
            cells = [c.strip() for c in line.strip("|").split(" | ")]
            if len(cells) == 2:
                out[(section, cells[0])] = cells[1]
    return out


def _latex_number(cell: str) -> float | None:
    cell = cell.strip()
    match = re.fullmatch(r"\$(-?[0-9.]+)(?:\\times 10\^\{(-?\d+)\})?\$", cell)
    if not match:
        return None
    mantissa, exponent = match.groups()
    return float(f"{mantissa}e{exponent}") if exponent else float(mantissa)


def _latex_numbers(text: str, names: dict[str, str]) -> dict[tuple[str, str], float | None]:
    out, section = {}, ""
    for line in text.splitlines():
        caption = re.match(r"\\multicolumn\{3\}\{l\}\{\\textit\{(.*)\}\} \\\\", line)
        if caption:
            section = _section_key(caption.group(1))
            continue
        if " & " not in line or not section:
            continue
        symbol, value, _ = line.split(" & ", 2)
        texttt = re.fullmatch(r"\\texttt\{(.*)\}", symbol)
        key = texttt.group(1).replace(r"\_", "_") if texttt else names.get(symbol.strip("$"))
        out[(section, key)] = _latex_number(value)
    return out


def _table_numbers(text: str, keys: set[str]) -> dict[tuple[str, str], str]:
    out, section = {}, ""
    titles = {"Inputs", "Constants", "Terms", "Bound", "Probability", "Conditions"}
    for line in text.splitlines():
        stripped = line.strip()
        if stripped in titles:
            section = stripped.lower()
            continue
        tokens = stripped.split()
        if len(tokens) >= 2 and tokens[0] in keys and section:
            out.setdefault((section, tokens[0]), tokens[1])
    return out


@settings(SETTINGS, max_examples=30)
@given(point=points())
@pytest.mark.slow
def test_every_format_carries_the_same_numbers(point, capsys):
    statement, values = point
    if _evaluate(statement, values) is None:
        return
    own = {"prop1": "batch_size", "remark9": "misspecification"}
    values = {k: v for k, v in values.items()
              if k not in ("batch_size", "misspecification") or own.get(statement) == k}
    args = [statement, *_flags(values)]
    data = json.loads(_cli([*args, "--format", "json"], capsys))
    csv_values = _csv_numbers(_cli([*args, "--format", "csv"], capsys))
    md_values = _markdown_numbers(_cli([*args, "--format", "markdown"], capsys))
    latex_text = _cli([*args, "--format", "latex"], capsys)
    assert latex_text.isascii()
    st_info = compiled_statement(statement)
    latex_values = _latex_numbers(latex_text, {v: k for k, v in st_info.latex_names.items()})
    sections = {g: data[g] for g in GROUPS}
    sections["probability"] = {"probability": data["probability"]}
    keys = {k for group in sections.values() for k in group}
    table_values = _table_numbers(_cli(args, capsys), keys)
    for section, items in sections.items():
        for key, value in items.items():
            if value is None:  # undefined (eta* when L·B = 0): an empty cell everywhere
                assert csv_values[(section, key)] == md_values[(section, key)] == ""
                assert latex_values[(section, key)] is None
                assert table_values[(section, key)] == "—"
                continue
            # exact formats: the float itself
            assert float(csv_values[(section, key)]) == value, (section, key)
            assert float(md_values[(section, key)]) == value, (section, key)
            # rounding formats: the float at the 6 significant digits they show
            assert latex_values[(section, key)] == _shown(value), (section, key)
            assert float(table_values[(section, key)]) == _shown(value), (section, key)
    for key, value in data["inputs"].items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            assert float(csv_values[("inputs", key)]) == value
            assert float(md_values[("inputs", key)]) == value


# --------------------------------------------------------------------------- grid


def _columns(inputs) -> dict[str, object]:
    sigma = activation_values(inputs.activation, 30)
    cols = {"m": float(inputs.m), "n": float(inputs.n), "d": float(inputs.d),
            "T": float(inputs.T), "delta": float(inputs.delta),
            "rho_c": float(inputs.rho[0]), "rho_u": float(inputs.rho[1]),
            "rho_w": float(inputs.rho[2]), "nu_c": float(inputs.nu[0]),
            "nu_u": float(inputs.nu[1]), "nu_w": float(inputs.nu[2]),
            "sigma0": float(sigma[0]), "sigma1": float(sigma[1]), "sigma2": float(sigma[2]),
            "K": float(inputs.steps), "eta": None if inputs.eta is None else float(inputs.eta),
            "b": float(inputs.batch_size), "epsilon_mis": float(inputs.misspecification)}
    assert set(cols) == set(ARGUMENT_NAMES)
    return cols


@settings(SETTINGS, max_examples=150)
@given(point=points())
def test_point_and_grid_evaluators_agree(point):
    statement, values = point
    inputs = validate(**values, statement=statement)
    res = _evaluate(statement, values, precision=30)
    if res is None:
        return
    grid = evaluate_grid(statement, _columns(inputs))
    for group in GROUPS:
        for key, value in getattr(res, group).items():
            if value is None:
                assert not math.isfinite(float(grid[f"{group}.{key}"]))
                continue
            exact, fast = float(value), float(grid[f"{group}.{key}"])
            assert math.isclose(exact, fast, rel_tol=1e-9, abs_tol=1e-300), (group, key, exact,
                                                                            fast)
    assert math.isclose(float(res.probability), float(grid["probability"]), rel_tol=1e-9)
    for cond in res.conditions:
        assert bool(grid[f"condition.{cond.name}"]) == cond.holds, cond
    if res.inputs["eta"] is not None and compiled_statement(statement).step:
        assert math.isclose(res.inputs["eta"], float(grid["eta"]), rel_tol=1e-9)


@settings(SETTINGS, max_examples=60)
@given(point=points(), route=st.sampled_from(["", "_paper"]), prop2=st.booleans())
@pytest.mark.slow
def test_guaranteed_iff_conditions_hold_and_min_iterate_is_below_both_free_bounds(point, route,
                                                                                  prop2):
    """The verdict's definition, checked from the exact values: min_iterate against min(B², Y²),
    average_iterate against B², ``guaranteed`` only with a guaranteed verdict, and Y² binding
    (Y ≤ B) wherever both are defined."""
    statement, values = point
    name = "prop2" if prop2 else (statement + route if statement in (
        "theorem1", "prop1", "remark9") else "theorem1" + route)
    res = _evaluate(name, values)
    if res is None or res.overflow:
        return
    trivial, initial = res.constants["trivial_bound_B2"], res.constants["initial_loss_bound"]
    label = res.constants["label_envelope_Y"]
    assert abs(initial - label**2) <= 1e-15 * label**2
    assert initial <= trivial
    assert res.free_bound[1] == min(trivial, initial)
    if initial < trivial:
        assert res.free_bound[0] == "initial_loss_bound"
    below = res.bound["min_iterate"] < min(trivial, initial)
    holds = all(c.holds for c in res.conditions)
    assert res.conditions_hold == holds
    # a bound below its free yardstick is guaranteed only where its probability reaches
    # --min-probability (default 1/2, decided exactly); at or above the yardstick it is vacuous
    # whatever its probability, since the yardstick holds surely
    sufficient = res.probability >= mpmath.mpf("0.5")
    assert res.probability_sufficient == sufficient
    assert res.verdict == ("not_guaranteed" if not holds else
                           "vacuous" if not below else
                           "guaranteed" if sufficient else "not_guaranteed")
    assert res.guaranteed == (holds and below and sufficient)
    average_below = res.bound["average_iterate"] < trivial
    assert res.average_iterate_verdict == ("not_guaranteed" if not holds else
                                           "vacuous" if not average_below else
                                           "guaranteed" if sufficient else "not_guaranteed")
    data = res.to_dict()
    assert data["statement"]["guaranteed"] == res.guaranteed
    assert data["statement"]["conditions_hold"] == holds
