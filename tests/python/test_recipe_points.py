"""Recipe texts and points (docs/recipes.md): the sinusoidal encoding's angle point, and recipe
texts that must be refused rather than read as something their author did not write."""
import numpy as np
import pytest

import lmoracle

CASE = "sinusoidal-pe/transformer-base-1m"  # positions in [65536, 1048576), d 512


def f64_kernel(positions, d, base=10000.0):
    """A kernel that forms its table in f64 and stores f32: PE(p, 2i) = sin(p / base^(2i/d)),
    PE(p, 2i+1) = cos(...) (Vaswani et al.), angles and sin/cos in NumPy's double."""
    i = np.arange(d // 2, dtype=np.float64)
    angles = positions.astype(np.float64)[:, None] / base ** (2 * i / d)[None, :]
    y = np.empty((positions.size, d), np.float64)
    y[:, 0::2], y[:, 1::2] = np.sin(angles), np.cos(angles)
    return y.astype(np.float32)


@pytest.fixture(scope="module")
def pe():
    x = lmoracle.case(CASE, format="f32")
    exact = lmoracle.reference(CASE, x)["pe"]
    return x, exact


def test_sinusoidal_has_an_angle_point():
    points = {p["name"]: p for p in lmoracle.rounding_points(CASE)}
    assert points["angle"]["values"] == ["f32", "f64"] and points["angle"]["strict"] == "f32"


def test_an_f64_table_and_the_correctly_rounded_one_pass_under_angle_f64(pe):
    x, exact = pe
    assert lmoracle.check(CASE, x, {"pe": exact}, recipe="angle=f64").passed
    y = f64_kernel(np.asarray(x["positions"]), exact.shape[1])
    # The f64 kernel is within an ulp or two of the correctly rounded table: a real f64 kernel.
    ulps = np.abs(y.view(np.int32).astype(np.int64) - exact.view(np.int32).astype(np.int64))
    assert ulps.max() <= 2
    v = lmoracle.check(CASE, x, {"pe": y}, recipe="angle=f64")
    assert v.passed, v.report


def test_a_tenth_of_a_percent_off_at_a_million_positions_fails_under_angle_f64(pe):
    x, exact = pe
    off = (exact.astype(np.float64) * (1 + 1e-3)).astype(np.float32)
    v = lmoracle.check(CASE, x, {"pe": off}, recipe="angle=f64")
    assert not v.passed, v.report
    # Under strict (f32 angles: ~0.06 rad of error at 10^6) the same table passes: the point is
    # what lets a kernel that forms its angles in f64 be held to its own accuracy.
    assert lmoracle.check(CASE, x, {"pe": off}).passed


@pytest.mark.parametrize("recipe", ["normed=bf16,normed=f16", "hf-llama-rmsnorm,normed=bf16,normed=f16"])
def test_a_point_given_twice_with_different_values_is_a_value_error(recipe):
    x = lmoracle.case("rmsnorm/tiny-rows", format="bf16")
    y = lmoracle.reference("rmsnorm/tiny-rows", x)["y"]
    with pytest.raises(ValueError, match=r"'normed' given twice with different values \(bf16, f16\)"):
        lmoracle.check("rmsnorm/tiny-rows", x, {"y": y}, recipe=recipe)


def test_a_point_given_twice_with_the_same_value_is_one_point():
    x = lmoracle.case("rmsnorm/tiny-rows", format="bf16")
    y = lmoracle.reference("rmsnorm/tiny-rows", x)["y"]
    assert lmoracle.check("rmsnorm/tiny-rows", x, {"y": y}, recipe="normed=bf16,normed=bf16").passed


@pytest.mark.parametrize("recipe", ["", "   "])
def test_an_empty_recipe_is_a_value_error(recipe):
    x = lmoracle.case("rmsnorm/tiny-rows", format="bf16")
    y = lmoracle.reference("rmsnorm/tiny-rows", x)["y"]
    with pytest.raises(ValueError, match="empty"):
        lmoracle.check("rmsnorm/tiny-rows", x, {"y": y}, recipe=recipe)


# --- truncating stores (+trunc) -------------------------------------------------------------

GELU = "gelu/exact"


def truncate_to_bf16(y32):
    """f32 → bf16 by dropping the low 16 bits (round toward zero), as a store that truncates."""
    import ml_dtypes
    bits = (np.asarray(y32, np.float32).view(np.uint32) >> 16).astype(np.uint16)
    return bits.view(ml_dtypes.bfloat16)


@pytest.fixture(scope="module")
def gelu_truncated():
    x = lmoracle.case(GELU, format="bf16")
    y32 = lmoracle.reference(GELU, x, format="f32")["y"]
    return x, truncate_to_bf16(y32)


def test_a_truncating_store_declared_as_rounding_fails_and_the_diagnosis_names_trunc(gelu_truncated):
    x, y = gelu_truncated
    v = lmoracle.check(GELU, x, {"y": y})
    assert not v.passed, v.report
    assert v.diagnosis[0]["recipe"].endswith("+trunc"), v.report
    # It passes under +trunc (below): the recipe explains every element.
    assert v.diagnosis[0]["explained"] == 1, v.diagnosis[:3]
    assert v.diagnosis[0]["equal"] > 0.99, v.diagnosis[:3]


def test_a_truncating_store_passes_under_trunc(gelu_truncated):
    x, y = gelu_truncated
    v = lmoracle.check(GELU, x, {"y": y}, recipe="strict+trunc")
    assert v.passed, v.report


def test_trunc_allows_one_step_toward_zero_and_no_more(gelu_truncated):
    import ml_dtypes
    x, y = gelu_truncated
    rn = lmoracle.reference(GELU, x)["y"].view(np.uint16)

    def with_element(i, pattern):
        b = rn.copy()
        b[i] = pattern
        return {"y": b.view(ml_dtypes.bfloat16)}

    # An element where one step toward zero (the pattern less one: sign-magnitude) fails strict:
    # there the strict policy allows no ulp at all.
    i = next(i for i in np.flatnonzero((rn & 0x7FFF) > 0x0100)[:50]
             if not lmoracle.check(GELU, x, with_element(i, rn[i] - 1)).passed)
    assert lmoracle.check(GELU, x, with_element(i, rn[i] - 1), recipe="strict+trunc").passed
    # Two steps toward zero: a store that truncates twice.
    v = lmoracle.check(GELU, x, with_element(i, rn[i] - 2), recipe="strict+trunc")
    assert not v.passed and v.outputs["y"].failed == 1, v.report
    # A round-to-nearest store is a truncating store's other possible value: it passes too.
    assert lmoracle.check(GELU, x, {"y": rn.view(ml_dtypes.bfloat16)}, recipe="strict+trunc").passed


# --- LayerNorm's variance forms -------------------------------------------------------------

LN = dict(rows=8, d=1024, eps=1e-5)


def layernorm_inputs(mean):
    rng = np.random.default_rng(5)
    return {"x": (mean + rng.standard_normal((LN["rows"], LN["d"]))).astype(np.float32),
            "gamma": (1 + 0.1 * rng.standard_normal(LN["d"])).astype(np.float32),
            "beta": (0.1 * rng.standard_normal(LN["d"])).astype(np.float32)}


def flax_layernorm(x, scale, bias, eps):
    """flax.linen.LayerNorm's default path as written there (_compute_stats with
    use_fast_variance=True, then _normalize): var = max(0, E[x²] − E[x]²), the reciprocal
    square root times the scale, (x − mean)·mul + bias; in f32 on JAX."""
    jnp = pytest.importorskip("jax.numpy")
    from jax import lax
    x, scale, bias = jnp.asarray(x), jnp.asarray(scale), jnp.asarray(bias)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    mean2 = jnp.mean(jnp.square(x), axis=-1, keepdims=True)
    var = jnp.maximum(0.0, mean2 - jnp.square(mean))
    mul = lax.rsqrt(var + eps) * scale
    return np.asarray((x - mean) * mul + bias)


def test_layernorm_has_the_variance_forms():
    points = {p["name"]: p for p in lmoracle.rounding_points("layernorm", **LN)}
    assert points["variance"]["values"] == ["two_pass", "one_pass", "welford"]
    assert points["variance"]["strict"] == "two_pass"


def test_flax_one_pass_layernorm_at_mean_100_fails_strict_and_passes_as_one_pass():
    x = layernorm_inputs(100.0)
    y = flax_layernorm(x["x"], x["gamma"], x["beta"], LN["eps"])
    strict = lmoracle.check("layernorm", x, {"y": y}, **LN)
    assert not strict.passed and strict.outputs["y"].worst_ulps > 10_000, strict.report
    # The diagnosis names the variance point's one-pass value: its bound holds every element
    # (Welford's, which equals more elements bit for bit, holds fewer).
    best = strict.diagnosis[0]
    assert best["recipe"] == "strict,variance=one_pass" and best["explained"] == 1, strict.report
    assert lmoracle.check("layernorm", x, {"y": y}, recipe="variance=one_pass", **LN).passed
    # Welford's update does not cancel: it does not excuse the one-pass errors.
    assert not lmoracle.check("layernorm", x, {"y": y}, recipe="variance=welford", **LN).passed


def test_a_two_pass_layernorm_passes_strict_at_mean_100():
    x = layernorm_inputs(100.0)
    xs = x["x"]
    mu = xs.mean(-1, keepdims=True, dtype=np.float32)
    var = np.square(xs - mu).mean(-1, keepdims=True, dtype=np.float32)
    y = ((xs - mu) / np.sqrt(var + np.float32(LN["eps"])) * x["gamma"] + x["beta"]).astype(np.float32)
    assert lmoracle.check("layernorm", x, {"y": y}, **LN).passed
