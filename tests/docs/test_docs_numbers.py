"""The numbers README.md and docs/*.md quote from ``boundcalc`` commands are those the commands
print now (``docs/refresh.py``): the fast markers in the normal tier, the ones that need torch
(``validate``, the README's run-file example) in the slow tier. A failure lists each stale number
as FILE:LINE; ``python docs/refresh.py --write`` regenerates them."""

from __future__ import annotations

import doctest
import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _refresh() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_refresh", ROOT / "docs" / "refresh.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


refresh = _refresh()


def test_every_quoted_number_is_what_its_command_prints() -> None:
    differences, checked = refresh.refresh(ROOT, write=False)
    assert checked > 100, "the markers of README.md and docs/*.md were not found"
    assert not differences, "stale numbers (python docs/refresh.py --write):\n" + "\n".join(
        map(str, differences))


@pytest.mark.slow
@pytest.mark.needs_torch
def test_every_number_of_a_torch_command_is_what_it_prints() -> None:
    pytest.importorskip("torch")
    differences, _ = refresh.refresh(ROOT, write=False, slow=True)
    assert not differences, "stale numbers (python docs/refresh.py --write --slow):\n" + \
        "\n".join(map(str, differences))


@pytest.mark.parametrize(("quoted", "altered_to"), [
    ("`VACUOUS: min_iterate 23.26 ≥", "`VACUOUS: min_iterate 23.27 ≥"),   # in a sentence
    ("| 256 | 6302.3 | 1028.4 | 525.6 |", "| 256 | 6302.3 | 1028.4 | 525.7 |"),   # in a table
])
def test_a_changed_number_in_the_readme_is_found_and_written_back(
        quoted: str, altered_to: str, tmp_path: Path) -> None:
    """The check fails on a number altered by hand (naming its line) and ``--write`` restores it;
    the rest of the document is left as it was."""
    for name in refresh.DOCUMENTS:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    readme = tmp_path / "README.md"
    original = readme.read_text(encoding="utf-8")
    altered = original.replace(quoted, altered_to, 1)
    assert altered != original, f"the README no longer quotes {quoted!r}"
    readme.write_text(altered, encoding="utf-8")
    line = altered[: altered.index(altered_to)].count("\n") + 1
    found = refresh.check(tmp_path, documents=("README.md",))
    assert [(d.path, d.line) for d in found] == [("README.md", line)]
    was, now = (text.split()[-2] for text in (quoted, altered_to))
    assert f"{now} should be {was}" in found[0].message
    refresh.refresh(tmp_path, write=True, documents=("README.md",))
    assert readme.read_text(encoding="utf-8") == original


def test_a_marker_whose_text_is_gone_is_reported_not_skipped(tmp_path: Path) -> None:
    doc = tmp_path / "README.md"
    doc.write_text("<!-- numbers: boundcalc theorem1 --m 512 --n 1000 --rho 2 --format json\n"
                   "bound.min_iterate: min_iterate {} ≥\n-->\nThe bound is 25.41.\n",
                   encoding="utf-8")
    found = refresh.check(tmp_path, documents=("README.md",))
    assert len(found) == 1 and "not found" in found[0].message and found[0].line == 1


def test_an_output_block_is_compared_and_regenerated(tmp_path: Path) -> None:
    doc = tmp_path / "README.md"
    doc.write_text("<!-- output: boundcalc compare-rnn --T 2,8 -->\n```text\nold\n```\n"
                   "<!-- end output -->\n", encoding="utf-8")
    found = refresh.check(tmp_path, documents=("README.md",))
    assert len(found) == 1 and "has changed" in found[0].message
    refresh.refresh(tmp_path, write=True, documents=("README.md",))
    assert "transformer_bound" in doc.read_text(encoding="utf-8")
    assert refresh.check(tmp_path, documents=("README.md",)) == []


def test_the_script_s_examples_run() -> None:
    failures, tried = doctest.testmod(refresh, optionflags=doctest.ELLIPSIS)
    assert tried > 5 and failures == 0
