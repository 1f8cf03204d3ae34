"""lmoracle.check and lmoracle.testing.assert_matches_reference: a KernelBench-style kernel that
returns zeros fails, correct torch and NumPy kernels pass, and the Verdict's numbers are the
truth computed here with mpmath."""
import ml_dtypes
import mpmath
import numpy as np
import pytest
import torch

import lmoracle
from exact import gelu, rmsnorm_row, round_to

CASE = "rmsnorm/tiny-rows"  # 16 rows of 64, x ~ N(0, 0.001²): eps matters


def torch_rmsnorm(x, gamma, eps):
    """A correct kernel: f32 compute on the stored inputs, one rounding to the storage format."""
    xf, gf = x.float(), gamma.float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * gf
    return y.to(x.dtype)


def zero_kernel(x, gamma, eps):
    """KernelBench's reward hack: an output of the right shape and dtype, never computed."""
    return torch.zeros_like(x)


@pytest.mark.parametrize("fmt", ["bf16", "f32", "f16"])
def test_correct_torch_kernel_passes(fmt):
    c = lmoracle.cases(f"^{CASE}$")[0]
    x = lmoracle.case(CASE, format=fmt, array="torch")
    y = torch_rmsnorm(x["x"], x["gamma"], c.params["eps"])
    v = lmoracle.check(CASE, x, {"y": y})
    assert v.passed and bool(v), v.report
    assert v.outputs["y"].failed == 0 and v.outputs["y"].elements == 16 * 64
    lmoracle.testing.assert_matches_reference(CASE, x, {"y": y})
    # inputs=None: the judge regenerates the same inputs itself.
    assert lmoracle.check(CASE, None, {"y": y}).passed


def test_zero_output_kernel_fails_with_every_element_counted():
    x = lmoracle.case(CASE, format="bf16", array="torch")
    y = zero_kernel(x["x"], x["gamma"], 1e-6)
    v = lmoracle.check(CASE, x, {"y": y})
    assert not v.passed
    o = v.outputs["y"]
    # Every correctly rounded value is nonzero here, so every element fails.
    assert o.failed == o.elements == 16 * 64
    assert o.worst_actual == 0.0 and o.worst_index is not None and len(o.worst_index) == 2
    # The worst element's expected value is mpmath's, correctly rounded to bf16.
    r, i = o.worst_index
    want = rmsnorm_row(x["x"][r].float().tolist(), x["gamma"].float().tolist(), 1e-6)[i]
    assert o.worst_expected == round_to(want, "bf16")
    # And its exact value, to the 21 significant digits the report prints.
    assert abs(mpmath.mpf(o.worst_exact) - want) <= abs(want) * mpmath.mpf(10) ** -20, o.worst_exact
    assert f"exact {o.worst_exact}" in v.report
    with pytest.raises(AssertionError) as e:
        lmoracle.testing.assert_matches_reference(CASE, x, {"y": y})
    text = str(e.value)
    assert f"mismatched elements: {16 * 64} / {16 * 64} (100.0%)" in text
    assert f"at index {o.worst_index}" in text and "expected:" in text and "Allowed:" in text
    assert f"exact:    {o.worst_exact}" in text


def test_numpy_kernel_with_one_bad_element_is_pinpointed():
    x = np.array([0.5, -1.25, 2.0, 3.0, -0.125, 1.5], dtype=ml_dtypes.bfloat16)
    y = np.array([round_to(gelu(v), "bf16") for v in x]).astype(ml_dtypes.bfloat16)
    assert lmoracle.check("gelu", {"x": x}, {"y": y}, n=6).passed
    bad = y.copy()
    bad[3] = ml_dtypes.bfloat16(float(bad[3]) * 1.25)  # far beyond any ulp bound
    v = lmoracle.check("gelu", {"x": x}, bad, n=6)  # the op's only output may be passed bare
    o = v.outputs["y"]
    assert not v.passed and o.failed == 1 and o.worst_index == (3,)
    assert o.worst_expected == round_to(gelu(x[3]), "bf16") and o.worst_actual == float(bad[3])
    assert o.worst_ulps > 1 and "ulp" in o.bound
    # A failure ranks the recipes by the share of elements within each one's bound: every
    # recipe's bound holds the five right elements and none the wrong one, so no recipe explains
    # the errors, and the report says so. (Which recipe comes first among these ties is the
    # correlation of six errors, one of them the bug's: not pinned.)
    assert v.diagnosis and v.diagnosis[0]["explained"] == 5 / 6
    assert all(d["explained"] <= 5 / 6 for d in v.diagnosis)
    assert "no recipe explains these errors" in v.report
    assert f"worst element of out.y: [3] = {float(bad[3]):.9g}, exact {o.worst_exact}" in v.report
    assert lmoracle.check("gelu", {"x": x}, {"y": y}, n=6).diagnosis is None


def test_check_on_torch_float16_from_a_float64_computation():
    g = torch.Generator().manual_seed(9)
    x = torch.randn(64, generator=g, dtype=torch.float64).to(torch.float16)
    y = torch.nn.functional.gelu(x.double()).to(torch.float16)  # double rounding: within 1 ulp
    assert lmoracle.check("gelu", [x], {"y": y}, n=64).passed


def test_verdict_report_is_the_command_lines_text():
    x = lmoracle.case(CASE, format="f32")
    v = lmoracle.check(CASE, None, {"y": np.zeros((16, 64), np.float32)})
    assert v.report.startswith(f"case {CASE}\n") and v.report.rstrip().endswith("check: FAIL")
    assert str(v) == v.report and x["x"].shape == (16, 64)


def test_rounding_points_name_what_a_custom_recipe_may_set():
    pts = lmoracle.rounding_points("attention", h=2, d=4, tokens=3, mask="causal")
    assert [p["name"] for p in pts] == ["scores", "probs", "sum", "acc", "normalize"]
    assert pts[1]["values"] == "format" and pts[4]["values"] == ["early", "late"]
    assert {p["name"]: p["strict"] for p in pts}["normalize"] == "early"
    assert lmoracle.rounding_points("relu", n=4) == []
    # Every point can be set by a custom recipe; one the op lacks cannot.
    x = np.linspace(-3, 3, 8).astype(np.float32)
    y = np.array([float(gelu(float(v))) for v in x], dtype=np.float32)
    assert lmoracle.check("gelu", {"x": x}, {"y": y}, recipe="form=stable", n=8).recipe == \
        "strict,form=stable"
    with pytest.raises(ValueError, match="no rounding point 'probs'"):
        lmoracle.check("gelu", {"x": x}, {"y": y}, recipe="probs=bf16", n=8)
