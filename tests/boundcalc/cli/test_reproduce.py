"""``boundcalc reproduce``'s own parsing (the experiments are tested in tests/validators)."""

from __future__ import annotations

import pytest

from boundcalc.cli.reproduce import parse_seeds
from boundcalc.errors import InputError


@pytest.mark.parametrize("text", ["-3", "0", "-", "1-", "a", "-1-3", "1e400"])
def test_a_bad_seeds_value_is_quoted_whole_in_the_error(text):
    with pytest.raises(InputError) as err:
        parse_seeds(text)
    assert err.value.flag == "--seeds"
    assert str(err.value).endswith(f", got {text!r}")


def test_seeds_take_a_count_a_range_or_a_list():
    assert parse_seeds(" 3 ") == 3
    assert parse_seeds("6-8") == [6, 7, 8]
    assert parse_seeds("0,4") == [0, 4]


def test_the_cli_quotes_a_negative_count(cli, tmp_path):
    run = cli("reproduce", "figure1", "--seeds", "-3", "--out", str(tmp_path / "run"))
    assert run.code == 2
    assert run.err.strip().endswith("got '-3'") and run.err.startswith("error: --seeds ")
    assert not (tmp_path / "run").exists()
