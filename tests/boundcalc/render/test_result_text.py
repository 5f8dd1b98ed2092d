"""The tight route's result shows the max-event constants (u_inf, u_max, smoothness_beta) apart
from the constants of its 1 − 2δ statement; CSV and JSON keep them where they were."""

from __future__ import annotations

import json

import pytest

from boundcalc.calc.api import evaluate
from boundcalc.inputs.params import validate
from boundcalc.render.result_text import MAX_EVENT_CONSTANTS, render_result


def _section_of(text: str, name: str) -> str:
    """The title of the markdown section whose table lists ``name``."""
    title = ""
    for line in text.splitlines():
        if line.startswith("### "):
            title = line[4:]
        elif line.startswith(f"| {name} |"):
            return title
    raise AssertionError(f"{name} not in the output")


@pytest.mark.parametrize("statement", ["theorem1", "prop1", "remark9"])
def test_tight_route_shows_the_max_event_constants_apart(statement):
    data = evaluate(statement, validate(m=512, n=1000, rho="2")).floats().to_dict()
    text = render_result(data, "markdown")
    for name in MAX_EVENT_CONSTANTS:
        assert _section_of(text, name).startswith("Max-event constants (E_U")
    assert _section_of(text, "lipschitz_L") == "Constants"
    table = render_result(data, "table")
    assert table.index("Constants") < table.index("Max-event constants") < table.index("Terms")
    # the machine formats keep every key where it was
    assert {f"constants,{n}," for n in MAX_EVENT_CONSTANTS} <= {
        line[:len(f"constants,{line.split(',')[1]},")]
        for line in render_result(data, "csv").splitlines() if line.count(",") >= 2}
    assert set(MAX_EVENT_CONSTANTS) <= set(json.loads(render_result(data, "json"))["constants"])


def test_the_paper_route_keeps_them_among_its_constants():
    data = evaluate("theorem1_paper", validate(m=512, n=1000, rho="2")).floats().to_dict()
    text = render_result(data, "markdown")
    assert "Max-event constants" not in text
    assert _section_of(text, "u_inf") == "Constants"
