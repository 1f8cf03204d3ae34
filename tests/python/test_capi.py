"""The C ABI under the package (python/src/capi.h, python/lmoracle/_core.py): a malformed request
is a Python exception naming what was wrong, never a crash; the library exports its C ABI and
nothing else (libstdc++ is linked in and hidden, so a C++ runtime that PyTorch loaded first
cannot interpose); its outputs cross bit for bit."""
import ctypes
import json
import shutil
import subprocess

import numpy as np
import pytest

import lmoracle
from lmoracle import _core


def test_the_library_has_the_packages_abi_version():
    assert _core._lib.lmo_capi_version() == _core._ABI


def test_an_unknown_function_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match='no function "nope"'):
        _core._call("nope")


def test_a_request_that_is_not_json_is_a_value_error():
    handle = _core._lib.lmo_call(b"{not json", None, None, 0)
    try:
        reply = json.loads(_core._lib.lmo_result_json(handle).decode())
    finally:
        _core._lib.lmo_result_free(handle)
    assert reply["ok"] is False and reply["error"] == "ValueError"
    assert "malformed request" in reply["message"]


def test_a_byte_count_that_does_not_match_the_shape_names_the_tensor():
    case = json.dumps({"id": "t/x", "op": "gelu", "seed": 0, "formats": ["f32"],
                       "params": {"n": 4}})
    with pytest.raises(ValueError, match=r"x.*expected 16 bytes.*got 12"):
        _core.reference(case, [("x", "f32", (4,), b"\0" * 12)], "f32")


def test_a_malformed_tensor_tuple_is_a_value_error():
    with pytest.raises(ValueError, match=r"\(name, dtype, shape, bytes\)"):
        _core._call("reference", {"case": "{}", "format": "f32"}, inputs=[("x", "f32")])


def test_an_unknown_dtype_is_named():
    case = json.dumps({"id": "t/x", "op": "gelu", "seed": 0, "formats": ["f32"],
                       "params": {"n": 1}})
    with pytest.raises(ValueError, match="expected a dtype of .*got f128"):
        _core.reference(case, [("x", "f128", (1,), b"\0" * 16)], "f32")


def test_outputs_cross_bit_for_bit():
    # GELU's correctly rounded values, from mpmath at 60 digits (x/2·erfc(−x/√2)); -0 keeps its
    # sign. Compared as bits, not values.
    mpmath = pytest.importorskip("mpmath")
    mpmath.mp.dps = 60
    x = np.array([0.0, -0.0, 1.0, -1.0, 3.5, -0.375], np.float32)
    exact = [mpmath.mpf(float(v)) / 2 * mpmath.erfc(-mpmath.mpf(float(v)) / mpmath.sqrt(2))
             for v in x]
    expected = np.array([float(e) for e in exact], np.float64).astype(np.float32)
    expected[1] = -0.0
    y = lmoracle.reference("gelu", {"x": x}, n=x.size)["y"]
    assert y.dtype == np.float32 and y.shape == x.shape
    assert y.view(np.uint32).tolist() == expected.view(np.uint32).tolist()


@pytest.mark.skipif(shutil.which("nm") is None, reason="nm (binutils) not installed")
def test_the_library_exports_only_its_c_abi():
    out = subprocess.run(["nm", "-D", "--defined-only", _core._library_path()],
                         capture_output=True, text=True, check=True).stdout
    exported = sorted({line.split()[-1] for line in out.splitlines()
                       if line.split() and line.split()[-2] in ("T", "W", "D", "B", "V", "i", "u")})
    assert exported == ["lmo_call", "lmo_capi_version", "lmo_main", "lmo_result_data",
                        "lmo_result_free", "lmo_result_json"]


@pytest.mark.skipif(shutil.which("readelf") is None, reason="readelf (binutils) not installed")
def test_the_library_needs_no_cxx_runtime_and_no_cublas():
    # Its own NEEDED entries (ldd would add its dependencies'): the C++ runtime is linked in, and
    # the GPU bench's cuBLAS is left out (tools/CMakeLists.txt, lmo_cli_no_gpu_bench).
    out = subprocess.run(["readelf", "-d", _core._library_path()], capture_output=True,
                         text=True, check=True).stdout
    needed = [line.split("[")[1].rstrip("]") for line in out.splitlines() if "(NEEDED)" in line]
    assert needed and not [n for n in needed if n.startswith(("libstdc++", "libgcc_s", "libcublas"))], needed


def test_the_command_line_runs_in_process_with_its_exit_code():
    assert _core.main(["lmoracle", "list"]) == 0
    assert _core.main(["lmoracle", "no-such-command"]) == 2
