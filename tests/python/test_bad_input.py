"""Bad input raises ValueError or TypeError naming the tensor or parameter and what was
expected; it never crashes the interpreter."""
import numpy as np
import pytest
import torch

import lmoracle

X = np.zeros((2, 4), np.float32)
G = np.ones(4, np.float32)
P = dict(rows=2, d=4, eps=1e-6)


def test_unknown_op_lists_the_ops():
    with pytest.raises(ValueError, match=r"op: expected an op name \(.*rmsnorm.*\).*'rmsnrom'"):
        lmoracle.reference("rmsnrom", {"x": X})


def test_unknown_case_id():
    with pytest.raises(ValueError, match="nope/none"):
        lmoracle.case("nope/none")


def test_wrong_shape_names_the_tensor_and_the_shape():
    with pytest.raises(ValueError, match=r"inputs: x: expected the shape \[2, 4\].*got \[4, 2\]"):
        lmoracle.reference("rmsnorm", {"x": X.T.copy(), "gamma": G}, **P)


def test_missing_input_names_it():
    with pytest.raises(ValueError, match=r"inputs: gamma: expected the input tensor \"gamma\""):
        lmoracle.reference("rmsnorm", {"x": X}, **P)


def test_wrong_dtype_names_the_tensor():
    with pytest.raises(TypeError, match=r"inputs\['x'\]: expected a dtype of .*got complex64"):
        lmoracle.reference("rmsnorm", {"x": X.astype(np.complex64), "gamma": G}, **P)
    with pytest.raises(TypeError, match=r"outputs\['y'\]: expected a dtype"):
        lmoracle.check("rmsnorm", {"x": X, "gamma": G}, {"y": torch.zeros(2, 4, dtype=torch.bool)}, **P)


def test_integer_where_real_expected():
    with pytest.raises(ValueError, match=r"inputs: x: expected floating point"):
        lmoracle.reference("rmsnorm", {"x": X.astype(np.int32), "gamma": G}, **P)


def test_not_an_array():
    with pytest.raises(TypeError, match=r"inputs\['x'\]: expected an array .* got object"):
        lmoracle.reference("rmsnorm", {"x": object(), "gamma": G}, **P)
    with pytest.raises(TypeError, match="expected a mapping of input name to array"):
        lmoracle.reference("rmsnorm", 3, **P)


def test_bad_parameter_is_named():
    with pytest.raises(ValueError, match=r"params\.eps"):
        lmoracle.reference("rmsnorm", {"x": X, "gamma": G}, rows=2, d=4, eps=-1.0)
    with pytest.raises(ValueError, match=r"params\.g.*divisor"):
        lmoracle.case("attention", h=4, g=3, d=8, tokens=4, mask="causal")
    with pytest.raises(TypeError, match="parameter eps: expected a number"):
        lmoracle.case("rmsnorm", rows=2, d=4, eps=object())


def test_bad_format_seed_and_recipe():
    with pytest.raises(ValueError, match=r"format: expected a format name .*got \"f12\""):
        lmoracle.reference("rmsnorm", {"x": X, "gamma": G}, format="f12", **P)
    with pytest.raises(ValueError, match=r"seed: expected an integer ≥ 0"):
        lmoracle.case("rmsnorm", seed=-1, **P)
    with pytest.raises(ValueError, match=r"recipe: unknown recipe 'fast-math': expected one of "
                                         r"strict, flash-attention"):
        lmoracle.check("rmsnorm", {"x": X, "gamma": G}, {"y": X}, recipe="fast-math", **P)


def test_wrong_output_shape_and_mixed_formats():
    with pytest.raises(ValueError, match=r"y: expected the shape \[2, 4\]"):
        lmoracle.check("rmsnorm", {"x": X, "gamma": G}, {"y": np.zeros(8, np.float32)}, **P)
    with pytest.raises(ValueError, match=r"outputs: expected 1 arrays in the order \(y\)"):
        lmoracle.check("rmsnorm", {"x": X, "gamma": G}, [X, X], **P)
    with pytest.raises(ValueError, match=r"y: expected the kernel's output tensor, but it is missing"):
        lmoracle.check("rmsnorm", {"x": X, "gamma": G}, {"z": X}, **P)


def _garbage():
    from hypothesis import strategies as st
    scalar = st.one_of(st.none(), st.booleans(), st.integers(-3, 40),
                       st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=6))
    return st.one_of(scalar, st.lists(scalar, max_size=3))


def test_garbage_parameters_raise_value_or_type_errors_only():
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    ops = sorted({c.op for c in lmoracle.cases()})
    keys = sorted({k for c in lmoracle.cases() for k in c.params} | {"bogus"})

    @settings(max_examples=300, suppress_health_check=list(HealthCheck))
    @given(st.sampled_from(ops), st.dictionaries(st.sampled_from(keys), _garbage(), max_size=6),
           st.sampled_from(["f32", "bf16", "e4m3", "tf32", "f8", ""]))
    def run(op, params, fmt):
        try:
            x = lmoracle.case(op, format=fmt or None, **params)
            lmoracle.reference(op, x, format=fmt or None, **params)
        except (ValueError, TypeError):
            pass  # refused with a message: what bad input must get

    run()


def test_integer_input_outside_its_range_names_the_element():
    x = lmoracle.case("cross_entropy", rows=2, vocab=8)
    x["target"][1] = 8  # a token id past the vocabulary
    with pytest.raises(ValueError, match=r"inputs: target: element 1 is 8, expected integers in "
                                         r"\[0, 8\)"):
        lmoracle.reference("cross_entropy", x, rows=2, vocab=8)


def test_a_damaged_case_file_stops_only_the_calls_that_read_it(tmp_path, monkeypatch):
    """An op name needs no case file: with a broken file in the cases folder, reference and
    check by op name still run, and a call by case ID names the file."""
    (tmp_path / "broken.json").write_text('{"cases": [{"id": "x/y", "op": "relu"')
    monkeypatch.setenv("LMO_CASES_DIR", str(tmp_path))
    x = np.array([-1.0, 0.5, 2.0], dtype=np.float32)
    (y,) = lmoracle.reference("relu", {"x": x}, format="f32", n=3).values()
    assert np.array_equal(np.asarray(y).reshape(-1), np.array([0.0, 0.5, 2.0], np.float32))
    assert lmoracle.check("relu", {"x": x}, {"y": np.maximum(x, 0)}, n=3).passed
    with pytest.raises(ValueError, match="broken.json"):
        lmoracle.case("relu/basic")
