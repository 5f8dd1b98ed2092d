"""The measurement of a ``--data`` set (validators/generalization_data.py): N, d_s, the init
norms, α, Φ(θ⁰) and the free yardsticks at the init of the given seed."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from boundcalc.validators import encoder as E  # noqa: E402
from boundcalc.validators.generalization_data import measure_data  # noqa: E402

from boundcalc.inputs.params import InputError  # noqa: E402

pytestmark = pytest.mark.needs_torch


def test_measure_data_measures_the_init_of_its_seed(token_samples, tmp_path):
    X, y = token_samples(10, 3, 6, seed=2)
    path = tmp_path / "cell.npz"
    np.savez(path, X=X.numpy(), y=y.numpy())
    out = measure_data(str(path), "8", "4")
    m = E.measure_init(E.lecun_init(8, 6, seed=4), X, y)
    assert out["seed"] == 4 and out["N"] == 10 and out["d_s"] == 3 and out["d"] == 6
    assert out["norms"] == m["norms"] and out["alpha"] == m["alpha"] and out["Phi0"] == m["Phi0"]
    f0 = E.forward(E.lecun_init(8, 6, seed=4), X).detach().numpy()
    assert out["initial_model_loss"] == pytest.approx(float(np.abs(f0 - y.numpy()).mean()),
                                                      rel=1e-12)
    assert out["zero_predictor_loss"] == pytest.approx(float(y.abs().mean()), rel=1e-15)
    assert out["y_max"] == float(y.abs().max())
    with pytest.raises(InputError) as err:
        measure_data(str(path), "8", None)
    assert err.value.flag == "--from-init"
