"""The C++ side and the Python side give identical results for the same case: the command
line's golden file (inputs and correctly rounded outputs) and its `check` verdict, bit for bit,
against lmoracle.case, lmoracle.reference and lmoracle.check."""
import json
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest
import safetensors.numpy

import lmoracle

ST = {"bf16": ml_dtypes.bfloat16, "e4m3": ml_dtypes.float8_e4m3fn, "e5m2": ml_dtypes.float8_e5m2}


def load(path):
    """A safetensors file with bf16 and fp8 as ml_dtypes (safetensors.numpy lacks them)."""
    from safetensors import safe_open
    out = {}
    with safe_open(str(path), framework="numpy") as f:
        for k in f.keys():
            out[k] = f.get_tensor(k)
    return out


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


@pytest.fixture(scope="module")
def golden(tmp_path_factory, lmoracle_bin):
    out = tmp_path_factory.mktemp("golden")
    subprocess.run([lmoracle_bin, "golden", "--out", str(out), "--filter",
                    "^(rmsnorm/tiny-rows|attention/mistral-7b-window)$"], check=True,
                   stdout=subprocess.DEVNULL)
    return out


@pytest.mark.parametrize("case_id", ["rmsnorm/tiny-rows", "attention/mistral-7b-window"])
def test_golden_inputs_and_outputs_equal_the_packages(golden, case_id):
    g = load(golden / (case_id.replace("/", "+") + ".safetensors"))
    c = lmoracle.cases(f"^{case_id}$")[0]
    # The golden file's inputs are those `verify` generates in the case's first format.
    ins = lmoracle.case(case_id, format=c.formats[0])
    for name, a in ins.items():
        assert np.array_equal(bits(a), bits(g["in." + name])), name
    # out.<name>.<fmt>: the reference on those inputs converted to fmt, correctly rounded.
    for fmt in c.formats:
        out = lmoracle.reference(case_id, ins, format=fmt)
        for name, a in out.items():
            want = g[f"out.{name}.{fmt}"]
            if fmt in ST and want.dtype != ST[fmt]:
                want = want.view(ST[fmt])
            assert a.dtype == want.dtype and np.array_equal(bits(a), bits(want)), (fmt, name)


def test_check_verdict_equals_the_command_lines(golden, tmp_path, lmoracle_bin):
    case_id = "rmsnorm/tiny-rows"
    x = lmoracle.case(case_id, format="f32")
    y = lmoracle.reference(case_id, x)["y"]
    y[0, :5] *= np.float32(1.0001)  # a few elements off by ~14 ulp
    y[3, 7] = np.float32(0)
    actual = tmp_path / "actual.safetensors"
    safetensors.numpy.save_file({"out.y": y}, str(actual))
    r = subprocess.run([lmoracle_bin, "check", "--golden",
                        str(golden / "rmsnorm+tiny-rows.safetensors"), "--actual", str(actual),
                        "--json"], capture_output=True, text=True)
    assert r.returncode == 1, r.stderr
    cli = json.loads(r.stdout)
    v = lmoracle.check(case_id, x, {"y": y})
    assert cli["pass"] is False and v.passed is False
    (o,) = cli["outputs"]
    p = v.outputs["y"]
    assert (p.failed, p.elements, p.worst_ulps, p.worst_actual, p.worst_expected, p.bound,
            p.detail) == (o["failed"], o["elements"], o["worst_ulps"], o["worst_actual"],
                          o["worst_expected"], o["bound"], o["detail"])
    assert p.worst_index == tuple(int(i) for i in np.unravel_index(o["worst_index"], y.shape))


def test_python_m_lmoracle_is_the_command_line(lmoracle_bin):
    py = subprocess.run([sys.executable, "-m", "lmoracle", "--version"], capture_output=True,
                        text=True)
    cli = subprocess.run([lmoracle_bin, "--version"], capture_output=True, text=True)
    assert py.returncode == cli.returncode == 0
    assert py.stdout == cli.stdout and lmoracle.__version__ in py.stdout
    bad = subprocess.run([sys.executable, "-m", "lmoracle", "frobnicate"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "unknown subcommand 'frobnicate'" in bad.stderr
    ok = subprocess.run([sys.executable, "-m", "lmoracle", "verify", "--filter", "^gelu/",
                         "--backend", "ref"], capture_output=True, text=True)
    assert ok.returncode == 0 and "verify: 3 passed, 0 failed" in ok.stdout, ok.stdout[-800:]
