"""JAX arrays, bf16 included, go in as they are; outputs come back as NumPy arrays."""
import jax.numpy as jnp
import ml_dtypes
import numpy as np

import lmoracle
from exact import gelu, round_to


def test_reference_and_check_on_jax_bf16():
    x = jnp.array([-6.0, -1.25, 0.0, 0.375, 3.0], dtype=jnp.bfloat16)
    y = lmoracle.reference("gelu", {"x": x}, n=5)["y"]
    assert y.dtype == np.dtype(ml_dtypes.bfloat16)
    want = [round_to(gelu(v), "bf16") for v in np.asarray(x)]
    assert [float(v) for v in y] == want
    assert lmoracle.check("gelu", {"x": x}, {"y": jnp.asarray(y)}, n=5).passed
    zero = lmoracle.check("gelu", {"x": x}, {"y": jnp.zeros(5, jnp.bfloat16)}, n=5)
    assert not zero.passed and zero.outputs["y"].failed == 4  # gelu(0) = 0 is right
