"""The pytest plugin: a marker parametrizes one test over the built-in cases it selects."""
import math

import pytest
import torch
import torch.nn.functional as F

# Correct kernels: float64 compute, one rounding to the storage format (within an ulp of the
# correctly rounded value: double rounding adds at most one). GELU as x/2·erfc(−x/√2), accurate
# in the negative tail; F.gelu's x/2·(1 + erf(x/√2)) cancels there (1 + erf → 0) and is
# thousands of ulp off in f32 below x ≈ −5, which the oracle reports (checked below).
ACTIVATIONS = {"gelu": lambda x: x / 2 * torch.special.erfc(-x / math.sqrt(2)), "silu": F.silu}


@pytest.mark.lmoracle_cases("^(gelu|silu)/")
def test_torch_activations_on_every_case(lmoracle_case):
    x = lmoracle_case.inputs(array="torch")["x"]
    y = ACTIVATIONS[lmoracle_case.op](x.double()).to(x.dtype)
    lmoracle_case.assert_matches({"y": y})


@pytest.mark.lmoracle_cases("^gelu/", formats=["f32"])
def test_torch_gelu_fails_in_the_negative_tail(lmoracle_case):
    x = lmoracle_case.inputs(array="torch")["x"]
    v = lmoracle_case.check({"y": F.gelu(x.double()).float()})
    o = v.outputs["y"]
    assert not v.passed and x[o.worst_index].item() < -5


def test_marker_selects_each_case_and_format(request):
    names = [i.name for i in request.session.items
             if i.originalname == "test_torch_activations_on_every_case"]
    assert names == ["test_torch_activations_on_every_case[gelu/exact[f32]]",
                     "test_torch_activations_on_every_case[gelu/exact[bf16]]",
                     "test_torch_activations_on_every_case[gelu/exact[f16]]",
                     "test_torch_activations_on_every_case[silu/basic[f32]]",
                     "test_torch_activations_on_every_case[silu/basic[bf16]]",
                     "test_torch_activations_on_every_case[silu/basic[f16]]"]


INNER = '''
import pytest, torch

@pytest.mark.lmoracle_cases("^rmsnorm/tiny-rows$", formats=["bf16", "f32"])
def test_zero_kernel(lmoracle_case):
    x = lmoracle_case.inputs(array="torch")["x"]
    lmoracle_case.assert_matches({"y": torch.zeros_like(x)})

@pytest.mark.lmoracle_cases("^rmsnorm/tiny-rows$", formats=["f32"])
def test_correct_kernel(lmoracle_case):
    x = lmoracle_case.inputs(array="torch")
    xf, g = x["x"].float(), x["gamma"].float()
    y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * g
    lmoracle_case.assert_matches({"y": y})
'''


def test_zero_kernel_fails_under_the_marker_and_a_correct_one_passes(pytester):
    pytester.makepyfile(INNER)
    r = pytester.runpytest("-p", "lmoracle.pytest_plugin", "-p", "no:cacheprovider")
    r.assert_outcomes(passed=1, failed=2)
    r.stdout.fnmatch_lines(["*test_zero_kernel[[]rmsnorm/tiny-rows[[]bf16[]][]]*",
                            "*mismatched elements: 1024 / 1024 (100.0%)*"])


def test_a_pattern_that_selects_nothing_is_a_usage_error(pytester):
    pytester.makepyfile('''
import pytest
@pytest.mark.lmoracle_cases("^no-such-op/")
def test_x(lmoracle_case):
    pass
''')
    r = pytester.runpytest("-p", "lmoracle.pytest_plugin", "-p", "no:cacheprovider")
    assert r.ret != 0
    assert "selects no built-in case" in r.stdout.str() + r.stderr.str()
