"""Lemma 6's F at its free cap √m·c_max·σ₀: the records carry the cap, and ``validate`` prints
``true, at its free cap`` instead of a plain ``true`` (the lemma adds nothing there)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_lemma6_records_at_the_cap_carry_it_and_validate_says_so():
    from boundcalc.validators.checks.lemma6 import validate_lemma6

    from boundcalc.cli.validate import _cap_text

    records = validate_lemma6(16, 4, 8, "2", starts=1, steps=0, samples=2)
    output = [r for r in records if r["name"] == "lemma6.output_envelope_F"]
    assert output and all(r["free_cap"] == 6.0 and r["bound"] == 6.0 for r in output)
    assert all(r["bound_over_free_cap"] == 1.0 for r in output)
    assert {_cap_text("true", r["bound_over_free_cap"]) for r in output} == {
        "true, at its free cap"}
    others = [r for r in records if r["name"] != "lemma6.output_envelope_F"]
    assert all("free_cap" not in r for r in others)
