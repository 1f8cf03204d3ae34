"""lmoracle.reference and lmoracle.case against independent truth: mpmath's values correctly
rounded by tests/python/exact.py, on NumPy arrays and on real torch tensors, bf16 included."""
import ml_dtypes
import numpy as np
import pytest
import torch

import lmoracle
from exact import gelu, rmsnorm_row, round_to


def test_reference_gelu_numpy_every_format_matches_mpmath():
    # Inputs chosen here: ±0, a subnormal, moderate values, large ones, both signs.
    xs = [0.0, -0.0, 1e-40, -3.5, -0.75, 0.1, 1.0, 2.5, 7.0, -20.0]
    for fmt, dt in (("f32", np.float32), ("f16", np.float16), ("bf16", ml_dtypes.bfloat16)):
        x = np.array(xs, dtype=dt)
        y = lmoracle.reference("gelu", {"x": x}, n=len(xs))["y"]
        assert y.dtype == np.dtype(dt)
        for xi, yi in zip(x, y):
            assert float(yi) == round_to(gelu(xi), fmt), (fmt, float(xi))


def test_reference_default_format_is_the_first_real_input_dtype():
    x = np.array([0.5, -1.5], dtype=ml_dtypes.bfloat16)
    assert lmoracle.reference("gelu", [x], n=2)["y"].dtype == np.dtype(ml_dtypes.bfloat16)
    y = lmoracle.reference("gelu", [x], format="f32", n=2)["y"]
    assert y.dtype == np.float32
    assert [float(v) for v in y] == [round_to(gelu(v), "f32") for v in x]


def test_reference_rmsnorm_torch_bf16_matches_mpmath_and_returns_torch():
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 16, generator=g).to(torch.bfloat16)
    gamma = (1 + 0.1 * torch.randn(16, generator=g)).to(torch.bfloat16)
    y = lmoracle.reference("rmsnorm", {"x": x, "gamma": gamma}, rows=3, d=16, eps=1e-6)["y"]
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16 and y.shape == (3, 16)
    for r in range(3):
        want = [round_to(v, "bf16") for v in rmsnorm_row(x[r].float().tolist(),
                                                         gamma.float().tolist(), 1e-6)]
        assert y[r].float().tolist() == want


def test_reference_accepts_dlpack_only_objects():
    class OnlyDlpack:  # an array known only through DLPack (as a JAX or CuPy array offers)
        def __init__(self, a):
            self._a = a

        def __dlpack__(self, **kw):
            return self._a.__dlpack__(**kw)

        def __dlpack_device__(self):
            return self._a.__dlpack_device__()

    x = np.array([0.25, -2.0, 3.0], dtype=np.float32)
    y = lmoracle.reference("gelu", {"x": OnlyDlpack(x)}, n=3)["y"]
    assert [float(v) for v in y] == [round_to(gelu(v), "f32") for v in x]


def test_case_inputs_are_the_oracles_and_in_the_format():
    x = lmoracle.case("gelu/exact", format="bf16")
    assert list(x) == ["x"] and x["x"].dtype == np.dtype(ml_dtypes.bfloat16)
    assert x["x"].shape == (16384,)
    # The same case in f32 draws the same normal values, each rounded once to its format: the
    # bf16 value lies within half a bf16 ulp (at most 2^-8 relative) plus half an f32 ulp of the
    # f32 one.
    x32 = lmoracle.case("gelu/exact", format="f32")["x"].astype(np.float64)
    x16 = x["x"].astype(np.float64)
    assert np.all(np.abs(x16 - x32) <= np.abs(x32) * (2.0**-8 + 2.0**-24))
    t = lmoracle.case("gelu/exact", format="bf16", array="torch")["x"]
    assert t.dtype == torch.bfloat16
    assert np.array_equal(t.view(torch.int16).numpy(), x["x"].view(np.int16))


def test_case_for_an_op_with_params_and_seed_is_deterministic_and_seeded():
    a = lmoracle.case("rmsnorm", format="f32", seed=3, rows=2, d=8, eps=1e-6)
    b = lmoracle.case("rmsnorm", format="f32", seed=3, rows=2, d=8, eps=1e-6)
    c = lmoracle.case("rmsnorm", format="f32", seed=4, rows=2, d=8, eps=1e-6)
    assert list(a) == ["x", "gamma"] and a["x"].shape == (2, 8) and a["gamma"].shape == (8,)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["x"], c["x"])


def test_cases_and_ops_list_the_builtin_set():
    ids = [c.id for c in lmoracle.cases()]
    assert "rmsnorm/llama3-8b" in ids and len(ids) == len(set(ids))
    assert {c.op for c in lmoracle.cases("^rmsnorm/")} == {"rmsnorm"}
    assert "attention" in lmoracle.ops()


def test_version_is_the_projects():
    import re
    text = (pytest.importorskip("pathlib").Path(__file__).resolve().parents[2] /
            "CMakeLists.txt").read_text()
    assert lmoracle.__version__ == re.search(r"project\(lmoracle VERSION ([0-9.]+)", text)[1]
