"""Output paths (boundcalc/inputs/output_paths.py): a path that cannot be written is refused
naming its flag before any work; a writable one, a device and a folder still to be made pass."""

from __future__ import annotations

import os

import pytest

from boundcalc.cli import main
from boundcalc.errors import InputError
from boundcalc.inputs.output_paths import OUTPUT, check_output_file, check_output_folder


def test_a_writable_file_path_and_a_device_pass(tmp_path):
    assert check_output_file("--output", tmp_path / "t.md") == str(tmp_path / "t.md")
    assert check_output_file("--output", os.devnull) == os.devnull
    assert OUTPUT.check(str(tmp_path / "t.md")) == str(tmp_path / "t.md")


@pytest.mark.parametrize("case, words", [
    ("empty", "must name a file"),
    ("folder", "is a folder"),
    ("missing_folder", "does not exist"),
    ("under_a_file", "not a folder"),
    ("long_name", "cannot write"),
])
def test_an_unwritable_output_file_is_refused_naming_the_flag(tmp_path, case, words):
    (tmp_path / "plain").write_text("x")
    path = {"empty": "", "folder": str(tmp_path), "missing_folder": str(tmp_path / "no" / "t.md"),
            "under_a_file": str(tmp_path / "plain" / "t.md"),
            "long_name": str(tmp_path / ("x" * 300) / "t.md")}[case]
    with pytest.raises(InputError) as err:
        check_output_file("--output", path)
    assert err.value.flag == "--output" and words in str(err.value)
    assert not (tmp_path / "no").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0,
                    reason="root may write in a read-only folder")
def test_a_folder_without_write_permission_is_refused(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(InputError, match="no permission"):
            check_output_file("--output", locked / "t.md")
        with pytest.raises(InputError, match="no permission"):
            check_output_folder("--figures-dir", locked / "figs")
    finally:
        locked.chmod(0o700)


def test_a_figures_folder_may_be_made_but_not_be_a_file(tmp_path):
    assert check_output_folder("--figures-dir", tmp_path / "a" / "b") == str(tmp_path / "a" / "b")
    assert not (tmp_path / "a").exists()  # checking creates nothing
    (tmp_path / "f").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        check_output_folder("--figures-dir", tmp_path / "f")
    with pytest.raises(InputError, match="not a folder"):
        check_output_folder("--figures-dir", tmp_path / "f" / "sub")


def test_the_cli_refuses_an_unwritable_output_before_computing(tmp_path, capsys):
    target = tmp_path / "missing" / "sweep.csv"
    code = main(["sweep", "theorem1", "--m", "8:4096:x2", "--format", "csv",
                 "--output", str(target)])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: --output ") and "does not exist" in err, err
    assert len(err.strip().splitlines()) == 1
