"""The validators' inputs (validators/data/inputs.py): synthetic tokens inside the unit ball and
the same on every dtype, clipping that moves only the tokens outside it, user files checked with
one-line errors naming the file, and independent seeds per random object."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators.data.inputs import (  # noqa: E402
    NORM_TOLERANCE,
    check_inputs,
    check_labels,
    clip_tokens,
    derived_seed,
    load_inputs,
    load_labels,
    synthetic_inputs,
    token_norms,
)

F64 = torch.float64


def test_synthetic_tokens_lie_in_the_unit_ball_and_one_seed_gives_the_same_data_in_float32():
    X = synthetic_inputs(50, 7, 3, seed=4)
    assert X.shape == (50, 7, 3) and X.dtype == F64
    assert (token_norms(X) <= 1 + 1e-15).all()
    # x ~ N(0, I_3) is outside the unit ball with probability ≈ 0.8: most tokens were clipped
    assert (token_norms(X) > 1 - 1e-12).float().mean() > 0.5
    X32 = synthetic_inputs(50, 7, 3, seed=4, dtype=torch.float32)
    assert torch.equal(X32, X.to(torch.float32))
    assert not torch.equal(X, synthetic_inputs(50, 7, 3, seed=5))


def test_clipping_rescales_only_the_tokens_outside_the_unit_ball_along_their_direction():
    X = torch.tensor([[[3.0, 4.0], [0.3, 0.4], [0.0, 0.0]]], dtype=F64)
    out = clip_tokens(X)
    assert out.tolist() == [[[0.6, 0.8], [0.3, 0.4], [0.0, 0.0]]]
    assert out.shape == X.shape


def test_inputs_outside_the_unit_ball_are_refused_unless_clipped():
    X = torch.tensor([[[1.5, 0.0], [0.1, 0.1]]], dtype=F64)
    with pytest.raises(ValueError, match=r"cell.npy: 1 tokens have norm > 1 \(max 1.5\)"):
        check_inputs(X, source="cell.npy")
    assert check_inputs(X, clip=True).tolist() == [[[1.0, 0.0], [0.1, 0.1]]]
    # within the rounding slack the data are taken as they are
    edge = torch.tensor([[[1.0 + NORM_TOLERANCE / 2, 0.0]]], dtype=F64)
    assert torch.equal(check_inputs(edge), edge)


@pytest.mark.parametrize(("X", "message"), [
    (torch.zeros(2, 3), r"expected an array of shape \(n, T, d\), got shape \(2, 3\)"),
    (torch.zeros(2, 0, 3), r"every dimension of \(n, T, d\) must be >= 1"),
    (torch.tensor([[[float("nan"), 0.0]]]), "1 non-finite entries"),
])
def test_malformed_inputs_are_refused_with_one_line_naming_the_problem(X, message):
    with pytest.raises(ValueError, match=message):
        check_inputs(X)


def test_labels_accept_a_column_and_refuse_a_wrong_count_or_non_finite_values():
    assert check_labels(torch.ones(4, 1), n=4).shape == (4,)
    with pytest.raises(ValueError, match="expected 3 labels"):
        check_labels(torch.ones(4), n=3)
    with pytest.raises(ValueError, match="1 non-finite labels"):
        check_labels(torch.tensor([0.0, float("inf")]))
    with pytest.raises(ValueError, match=r"shape \(n,\)"):
        check_labels(torch.ones(2, 2))


def test_files_round_trip_from_npy_and_pt_and_bad_files_name_the_file(tmp_path):
    X = synthetic_inputs(3, 2, 4, seed=0)
    np.save(tmp_path / "x.npy", X.numpy())
    torch.save(X, tmp_path / "x.pt")
    for name in ("x.npy", "x.pt"):
        assert torch.equal(load_inputs(tmp_path / name), X)
    y = torch.tensor([0.5, -1.0, 2.0], dtype=F64)
    np.save(tmp_path / "y.npy", y.numpy().reshape(3, 1))
    assert torch.equal(load_labels(tmp_path / "y.npy", n=3), y)
    assert load_inputs(tmp_path / "x.npy", dtype=torch.float32).dtype == torch.float32
    (tmp_path / "x.csv").write_text("1,2\n")
    with pytest.raises(ValueError, match=r"x.csv: unsupported file type '.csv'"):
        load_inputs(tmp_path / "x.csv")
    with pytest.raises(ValueError, match="missing.npy: no such file"):
        load_inputs(tmp_path / "missing.npy")
    (tmp_path / "broken.npy").write_bytes(b"not numpy")
    with pytest.raises(ValueError, match="broken.npy: cannot be read"):
        load_inputs(tmp_path / "broken.npy")
    np.save(tmp_path / "text.npy", np.array(["a", "b"]))
    with pytest.raises(ValueError, match="text.npy: expected a real numeric array"):
        load_labels(tmp_path / "text.npy")


def test_derived_seeds_differ_by_tag_and_run_and_stay_63_bit():
    seeds = {derived_seed(s, tag) for s in range(20) for tag in ("data", "teacher", "batches")}
    assert len(seeds) == 60
    assert all(0 <= v < 2**63 for v in seeds)
    assert derived_seed(7, "data") == derived_seed(7, "data")
    with pytest.raises(ValueError, match="`seed` must be a non-negative integer"):
        derived_seed(-1, "data")
