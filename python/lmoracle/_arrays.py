"""Arrays in, arrays out: any NumPy, PyTorch or JAX array (or other object with the array
interface or DLPack) becomes the (name, dtype, shape, bytes) tuple the C++ module reads, and the
module's outputs become NumPy arrays, or torch tensors when the caller passed torch tensors.

Only dtypes map here; every value crosses bit for bit (bf16 and fp8 through ml_dtypes), so no
number is rounded or reinterpreted on the way."""
import sys

import ml_dtypes
import numpy as np

# The project's dtype names (reference/tensor.h) and their NumPy dtypes.
NUMPY_DTYPES = {
    "f64": np.dtype(np.float64),
    "f32": np.dtype(np.float32),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "e4m3": np.dtype(ml_dtypes.float8_e4m3fn),
    "e5m2": np.dtype(ml_dtypes.float8_e5m2),
    "i64": np.dtype(np.int64),
    "i32": np.dtype(np.int32),
    "u8": np.dtype(np.uint8),
}
_NAMES = {dt: name for name, dt in NUMPY_DTYPES.items()}
EXPECTED = "float64, float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int64, int32 or uint8"


def _torch_module(x):
    """torch, when x is a torch tensor (without importing torch for anyone else)."""
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return torch
    return None


def _torch_to_numpy(torch, t):
    # CUDA (or any device) through .cpu(); detach so a tensor that requires grad converts.
    t = t.detach().cpu().contiguous()
    # NumPy has no bf16 or fp8: reinterpret the bits as integers of the same width, then view
    # them as ml_dtypes' type. Exact: no value is converted.
    bits = {torch.bfloat16: (torch.int16, ml_dtypes.bfloat16)}
    for name, np_type in (("float8_e4m3fn", ml_dtypes.float8_e4m3fn),
                          ("float8_e5m2", ml_dtypes.float8_e5m2)):
        if hasattr(torch, name):
            bits[getattr(torch, name)] = (torch.uint8, np_type)
    if t.dtype in bits:
        int_type, np_type = bits[t.dtype]
        return t.view(int_type).numpy().view(np_type)
    return t.numpy()


def to_numpy(x, what):
    """x as a C-contiguous, native-byte-order NumPy array. TypeError names `what` (e.g.
    "inputs['x']") when x is not an array."""
    torch = _torch_module(x)
    if torch is not None:
        a = _torch_to_numpy(torch, x)
    elif isinstance(x, np.ndarray):
        a = x
    elif hasattr(x, "__array__") or hasattr(x, "__array_interface__"):
        a = np.asarray(x)  # JAX arrays convert here, bf16 included (JAX's dtypes are ml_dtypes')
    elif hasattr(x, "__dlpack__"):
        a = np.from_dlpack(x)
    elif isinstance(x, (list, tuple, int, float)):
        a = np.asarray(x)
    else:
        raise TypeError(f"{what}: expected an array (NumPy, PyTorch, JAX, or any object with "
                        f"the array interface or DLPack), got {type(x).__name__}")
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    return np.ascontiguousarray(a)


def dtype_name(a, what):
    name = _NAMES.get(a.dtype)
    if name is None:
        raise TypeError(f"{what}: expected a dtype of {EXPECTED}, got {a.dtype}")
    return name


def pack(name, x, what):
    """The module's tuple for array x (what: how messages name it)."""
    a = to_numpy(x, what)
    return (name, dtype_name(a, what), tuple(int(e) for e in a.shape), a.tobytes())


def unpack(item):
    """A NumPy array from the module's (name, dtype, shape, bytes) tuple: (name, array)."""
    name, dtype, shape, data = item
    a = np.frombuffer(data, dtype=NUMPY_DTYPES[dtype]).reshape(shape).copy()
    return name, a


def is_torch(x):
    return _torch_module(x) is not None


def to_torch(a):
    """A CPU torch tensor with the same bits as NumPy array a."""
    import torch
    special = {np.dtype(ml_dtypes.bfloat16): (np.int16, torch.bfloat16),
               np.dtype(ml_dtypes.float8_e4m3fn): (np.uint8, getattr(torch, "float8_e4m3fn", None)),
               np.dtype(ml_dtypes.float8_e5m2): (np.uint8, getattr(torch, "float8_e5m2", None))}
    if a.dtype in special:
        int_type, torch_type = special[a.dtype]
        return torch.from_numpy(a.view(int_type).copy()).view(torch_type)
    return torch.from_numpy(a.copy())
