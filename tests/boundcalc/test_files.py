"""The cache folders code is executed from: trusted only when nobody else can change them or any
folder above them; folders boundcalc creates are private whatever the umask; a file written
atomically gets the permissions the umask gives a plain ``open``."""

from __future__ import annotations

import os
import stat

import pytest

from boundcalc import files

as_root = pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0,
                             reason="giving a folder to another uid needs root")


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_private_folder_below_private_folders_is_trusted(tmp_path):
    folder = tmp_path / "cache"
    assert files.make_private_folder(folder / "kernels") is None
    assert files.untrusted_reason(folder / "kernels") is None


def test_a_cache_below_a_world_writable_parent_is_refused_naming_the_parent(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)                    # anyone may rename the cache below and plant theirs
    problem = files.make_private_folder(shared / "cache" / "kernels")
    assert problem is not None and f"{shared} above" in problem and "writable by others" in problem
    assert not files.private_folder(shared / "cache" / "kernels")


@as_root
def test_a_cache_below_another_users_folder_is_refused_naming_the_owner(tmp_path):
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    os.chown(foreign, 65534, 65534)
    problem = files.make_private_folder(foreign / "cache")
    assert problem is not None and f"{foreign} above" in problem and "uid 65534" in problem


def test_a_sticky_world_writable_parent_as_tmp_is_accepted(tmp_path):
    sticky = tmp_path / "tmp"
    sticky.mkdir()
    sticky.chmod(0o1777)                   # as /tmp: nobody renames another user's entries
    assert files.make_private_folder(sticky / "boundcalc-me" / "kernels") is None


def test_a_group_writable_cache_folder_itself_is_refused(tmp_path):
    folder = tmp_path / "cache"
    folder.mkdir()
    folder.chmod(0o770)
    assert "writable by others" in files.untrusted_reason(folder)


def test_the_cache_falls_back_to_this_users_folder_when_its_parent_is_shared(tmp_path,
                                                                            monkeypatch):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setattr(files.tempfile, "gettempdir", lambda: str(tmp_path / "own"))
    folder = files.private_cache_folder("kernels", primary=shared / "cache")
    assert folder == tmp_path / "own" / f"boundcalc-{files.user_id()}" / "kernels"


def test_folders_made_for_a_cache_are_private_under_umask_0(tmp_path):
    old = os.umask(0)
    try:
        assert files.make_private_folder(tmp_path / "a" / "b" / "c") is None
    finally:
        os.umask(old)
    assert [_mode(tmp_path / p) for p in ("a", "a/b", "a/b/c")] == [0o700] * 3


def test_output_file_honours_the_umask(tmp_path):
    import os

    from boundcalc.files import write_atomic

    old = os.umask(0o022)
    try:
        write_atomic(str(tmp_path / "out.csv"), "a,b")
    finally:
        os.umask(old)
    assert (tmp_path / "out.csv").stat().st_mode & 0o777 == 0o644
