"""The guards lmoracle.evaluate puts around a kernel call (evaluate_api.py runs the checks):

  - poison: each run of the kernel has a poison, one bit pattern per dtype: a NaN with a payload
    (run 0), then a random finite value drawn from the trial's seed (run 1). Output buffers the
    harness hands the kernel (protocol "out") are filled with it, and so is every buffer the
    kernel allocates uninitialized while it runs (numpy.empty, numpy.empty_like, torch.empty,
    torch.empty_like, torch.empty_strided, Tensor.new_empty): an output element that holds the
    poison of both runs was never written.
  - hashes: every input's bytes (SHA-256) before and after the call;
  - aliasing: an output that shares memory with an input (or is the input object);
  - the call itself: inputs in the kernel's array kind (NumPy, torch on a device, JAX), fresh
    copies for every call, parameters passed by keyword where the kernel's signature takes them;
    while it runs, the oracle's reference, judge and input draws refuse to run (a kernel that
    asks lmoracle for the answer raises).

Nothing here judges values: evaluate_api.py hands the outputs to lmoracle.check."""
import contextlib
import hashlib
import inspect
import sys

import numpy as np

from . import _arrays

# Run 0's poison: a quiet NaN with a payload no arithmetic produces (ints: a fixed odd pattern).
NAN_BITS = {"f64": 0x7FF8A5A5A5A5A5A5, "f32": 0x7FE5A5A5, "f16": 0x7E5A, "bf16": 0x7FE5,
            "e4m3": 0x7F, "e5m2": 0x7F, "i64": 0x5A5A5A5A5A5A5A5B, "i32": 0x5A5A5A5B,
            "u8": 0xA5}
_UINT = {8: np.uint64, 4: np.uint32, 2: np.uint16, 1: np.uint8}


class Poison:
    """One run's poison: the bits each dtype's buffers are filled with (`bits[name]`), and the
    byte for buffers of other dtypes."""

    def __init__(self, run, rng):
        self.run = run
        if run == 0:
            self.bits = dict(NAN_BITS)
            self.byte = 0xA5
        else:
            self.bits = {name: _random_finite(name, rng) for name in NAN_BITS}
            self.byte = int(rng.integers(1, 255))

    def value(self, name):
        """The poison of dtype `name` as a 0-d NumPy array."""
        dt = _arrays.NUMPY_DTYPES[name]
        return np.array(self.bits[name], dtype=_UINT[dt.itemsize]).view(dt)

    def fill_numpy(self, a):
        name = _arrays._NAMES.get(a.dtype)
        try:
            if name is not None:
                a.view(_UINT[a.dtype.itemsize]).fill(self.bits[name])
            elif a.size:
                a.view(np.uint8).fill(self.byte)
        except (ValueError, TypeError):
            pass  # a view NumPy cannot reinterpret: left as allocated

    def fill_torch(self, torch, t):
        if not isinstance(t, torch.Tensor) or t.numel() == 0 or t.is_complex() or \
                t.dtype == torch.bool:
            return
        ints = {8: torch.int64, 4: torch.int32, 2: torch.int16, 1: torch.uint8}
        size = t.element_size()
        name = _TORCH_NAMES(torch).get(t.dtype)
        bits = self.bits[name] if name is not None else int.from_bytes(bytes([self.byte]) * size,
                                                                      "little")
        if size > 1 and bits >= 1 << (8 * size - 1):
            bits -= 1 << (8 * size)  # the same bits as a signed integer
        with torch.no_grad():
            t.view(ints[size]).fill_(bits)

    def unwritten(self, name, a):
        """The mask of elements of array `a` (dtype `name`) that hold this poison."""
        u = _UINT[a.dtype.itemsize]
        return a.view(u) == u(self.bits[name])


def _random_finite(name, rng):
    """Random bits of dtype `name`: a finite, non-zero value (any non-zero integer)."""
    dt = _arrays.NUMPY_DTYPES[name]
    u = _UINT[dt.itemsize]
    while True:
        bits = int(rng.integers(1, np.iinfo(u).max, dtype=u, endpoint=True))
        if dt.kind in "iu":
            return bits
        f = float(np.array(bits, dtype=u).view(dt).astype(np.float64))
        if np.isfinite(f) and f != 0:
            return bits


def _TORCH_NAMES(torch):
    names = {torch.float64: "f64", torch.float32: "f32", torch.float16: "f16",
             torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.uint8: "u8"}
    for attr, name in (("float8_e4m3fn", "e4m3"), ("float8_e5m2", "e5m2")):
        if hasattr(torch, attr):
            names[getattr(torch, attr)] = name
    return names


@contextlib.contextmanager
def poisoned_allocations(poison):
    """While the kernel runs, every uninitialized buffer NumPy or torch allocates from Python
    holds the poison (the allocators' own reuse would hand it stale, often plausible, data)."""
    saved = []

    def patch(owner, attr, fill):
        orig = getattr(owner, attr, None)
        if orig is None:
            return

        def poisoned(*args, **kwargs):
            out = orig(*args, **kwargs)
            fill(out)
            return out
        poisoned.__wrapped__ = orig
        saved.append((owner, attr, orig))
        setattr(owner, attr, poisoned)

    # The kernel may not ask the oracle for the answer (lmoracle.reference, .check, .case).
    from . import _core
    for attr in ("reference", "check", "case_inputs"):
        orig = getattr(_core, attr, None)
        if orig is None:
            continue

        def refuse(*args, _attr=attr, **kwargs):
            raise RuntimeError(f"the kernel called the oracle (lmoracle._core.{_attr}) while "
                               f"it was evaluated")
        saved.append((_core, attr, orig))
        setattr(_core, attr, refuse)
    patch(np, "empty", poison.fill_numpy)
    patch(np, "empty_like", poison.fill_numpy)
    torch = sys.modules.get("torch")
    if torch is not None:
        fill = lambda t: poison.fill_torch(torch, t)  # noqa: E731
        for attr in ("empty", "empty_like", "empty_strided"):
            patch(torch, attr, fill)
        patch(torch.Tensor, "new_empty", fill)
    try:
        yield
    finally:
        for owner, attr, orig in reversed(saved):
            setattr(owner, attr, orig)


def digest(a):
    """SHA-256 of a NumPy array's dtype, shape and bytes."""
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def _memory_range(x):
    """(start, end) of the memory under array x, or None where it is not host/device memory we
    can name (JAX arrays are immutable)."""
    torch = _arrays._torch_module(x)
    if torch is not None:
        s = x.untyped_storage()
        return (str(x.device), s.data_ptr(), s.data_ptr() + s.nbytes())
    if isinstance(x, np.ndarray):
        lo, hi = np.byte_bounds(x) if hasattr(np, "byte_bounds") else np.lib.array_utils.byte_bounds(x)
        return ("cpu", lo, hi)
    return None


def aliases(out, inp):
    """Whether output array `out` is input `inp` or shares memory with it."""
    if out is inp:
        return True
    a, b = _memory_range(out), _memory_range(inp)
    if a is None or b is None or a[0] != b[0]:
        return False
    return a[1] < b[2] and b[1] < a[2]


class KernelError(Exception):
    """The kernel raised, returned something that is not the op's outputs, or wrote what the
    protocol does not allow: the reason, one line."""


class Caller:
    """Calls a kernel in one of the two protocols:

      protocol "return": outputs = kernel(*inputs, **params); outputs a mapping of output name to
          array, a sequence in the op's output order, or the one output's array;
      protocol "out":    kernel(*inputs, out=buffers, **params) writes into the buffers the
          harness allocates and poisons (the one output's array, or a tuple in the op's output
          order); its return value is ignored.

    inputs: the op's inputs in its order, as `array` ("numpy", "torch", "jax") on `device` (torch);
    params: those of the case's parameters the kernel's signature names (all of them where it
    takes **kwargs)."""

    def __init__(self, kernel, protocol="return", array="numpy", device=None):
        if not callable(kernel):
            raise TypeError(f"lmoracle.evaluate: kernel: expected a callable, got "
                            f"{type(kernel).__name__}")
        if protocol not in ("return", "out"):
            raise ValueError(f"lmoracle.evaluate: protocol: expected 'return' or 'out', got "
                             f"{protocol!r}")
        if array not in ("numpy", "torch", "jax"):
            raise ValueError(f"lmoracle.evaluate: array: expected 'numpy', 'torch' or 'jax', got "
                             f"{array!r}")
        if device is not None and array != "torch":
            raise ValueError(f"lmoracle.evaluate: device: only for array='torch', got {device!r}")
        self.kernel, self.protocol, self.array, self.device = kernel, protocol, array, device
        self.takes_all, self.names = True, None
        try:
            sig = inspect.signature(kernel)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            kinds = [p.kind for p in sig.parameters.values()]
            self.takes_all = inspect.Parameter.VAR_KEYWORD in kinds
            self.names = {n for n, p in sig.parameters.items()
                          if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
            if protocol == "out" and "out" not in self.names and not self.takes_all:
                raise ValueError("lmoracle.evaluate: protocol: 'out' calls kernel(..., out=...), "
                                 "but the kernel's signature has no parameter out")

    def to_kind(self, a):
        """A fresh copy of NumPy array a as the kernel's array kind."""
        if self.array == "numpy":
            return np.array(a, copy=True)
        if self.array == "torch":
            t = _arrays.to_torch(a)
            return t.to(self.device) if self.device is not None else t
        import jax.numpy as jnp
        return jnp.asarray(np.array(a, copy=True))

    def call(self, io, inputs, params, poison, expected):
        """One call. io: op_io's record of this case; inputs: name -> NumPy array (the harness's
        own copies, never handed out); expected: output name -> (dtype name, shape). Returns
        (outputs as NumPy copies, the input objects the kernel got, the output objects it gave
        back). KernelError on anything the protocol does not allow."""
        names = [d["name"] for d in io["inputs"]]
        given = [self.to_kind(inputs[n]) for n in names]
        kwargs = {k: v for k, v in params.items()
                  if k not in names and (self.takes_all or (self.names and k in self.names))}
        out_names = [d["name"] for d in io["outputs"]]
        buffers = None
        if self.protocol == "out":
            buffers = []
            for n in out_names:
                dt, shape = expected[n]
                b = np.empty(shape, dtype=_arrays.NUMPY_DTYPES[dt])
                poison.fill_numpy(b)
                buffers.append(self.to_kind(b) if self.array != "jax" else b)
            kwargs["out"] = buffers[0] if len(buffers) == 1 else tuple(buffers)
        try:
            with poisoned_allocations(poison):
                result = self.kernel(*given, **kwargs)
        except Exception as e:  # noqa: BLE001 — any failure of the kernel is its verdict
            raise KernelError(f"the kernel raised {type(e).__name__}: "
                              f"{_one_line(str(e))}") from e
        objects = dict(zip(out_names, buffers)) if buffers is not None else \
            self._outputs(result, out_names)
        outputs = {}
        for n in out_names:
            try:
                a = np.array(_arrays.to_numpy(objects[n], f"output {n!r}"), copy=True)
                dt = _arrays.dtype_name(a, f"output {n!r}")
            except TypeError as e:
                raise KernelError(_one_line(str(e))) from e
            want_dt, want_shape = expected[n]
            if dt != want_dt or list(a.shape) != list(want_shape):
                raise KernelError(f"output {n!r}: expected {want_dt} {list(want_shape)}, got "
                                  f"{dt} {list(a.shape)}")
            outputs[n] = a
        return outputs, dict(zip(names, given)), objects

    def _outputs(self, result, out_names):
        if isinstance(result, dict):
            missing = [n for n in out_names if n not in result]
            if missing:
                raise KernelError(f"the kernel returned no {', '.join(map(repr, missing))} "
                                  f"(outputs by name: {', '.join(out_names)})")
            return {n: result[n] for n in out_names}
        if isinstance(result, (list, tuple)):
            if len(result) != len(out_names):
                raise KernelError(f"the kernel returned {len(result)} arrays, expected "
                                  f"{len(out_names)} ({', '.join(out_names)})")
            return dict(zip(out_names, result))
        if result is None:
            raise KernelError("the kernel returned None (protocol 'return' expects its outputs)")
        if len(out_names) != 1:
            raise KernelError(f"the kernel returned one array, expected {len(out_names)} "
                              f"({', '.join(out_names)})")
        return {out_names[0]: result}


def to_numpy_copy(x, what):
    return np.array(_arrays.to_numpy(x, what), copy=True)


def _one_line(s):
    s = " ".join(str(s).split())
    return s if len(s) <= 300 else s[:297] + "..."
