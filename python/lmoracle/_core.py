"""lmoracle._core: the oracle's C++ (cases, inputs, the reference, the judge, the command line)
behind the package, loaded through ctypes from liblmoracle_capi.so (python/src/capi.h).

A C ABI rather than a CPython extension: the library names no CPython symbol, so one build
serves every Python 3, and ctypes releases the GIL for each call, so other Python threads (the
package's progress line, a test's own threads) go on while the oracle computes. Tensors cross
as (name, dtype, shape, bytes) tuples (the package's _arrays.py makes and reads them)."""
import ctypes
import json
import os
import sys

_LIBRARY = "liblmoracle_capi.so"
_ABI = 1  # LMO_CAPI_VERSION in capi.h
_ERRORS = {"ValueError": ValueError, "IndexError": IndexError, "MemoryError": MemoryError,
           "OverflowError": OverflowError, "RuntimeError": RuntimeError}


def _library_path():
    # The package's folders: an installed package's own, or in a build tree python/lmoracle and
    # build/python/lmoracle, where the library is built (__init__.py's extend_path).
    package = sys.modules[__package__]
    for folder in list(getattr(package, "__path__", [])) + [os.path.dirname(__file__)]:
        candidate = os.path.join(folder, _LIBRARY)
        if os.path.isfile(candidate):
            return candidate
    raise ImportError(f"lmoracle: {_LIBRARY} not found beside the package "
                      f"({', '.join(package.__path__)}); build it (tools/setup) or install the wheel")


def _load():
    lib = ctypes.CDLL(_library_path())
    lib.lmo_capi_version.restype = ctypes.c_int
    lib.lmo_call.restype = ctypes.c_void_p
    lib.lmo_call.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                             ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64]
    lib.lmo_result_json.restype = ctypes.c_char_p
    lib.lmo_result_json.argtypes = [ctypes.c_void_p]
    lib.lmo_result_data.restype = ctypes.c_void_p
    lib.lmo_result_data.argtypes = [ctypes.c_void_p, ctypes.c_uint64,
                                    ctypes.POINTER(ctypes.c_uint64)]
    lib.lmo_result_free.restype = None
    lib.lmo_result_free.argtypes = [ctypes.c_void_p]
    lib.lmo_main.restype = ctypes.c_int
    lib.lmo_main.argtypes = [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)]
    if lib.lmo_capi_version() != _ABI:
        raise ImportError(f"lmoracle: {_LIBRARY} has C ABI {lib.lmo_capi_version()}, this package "
                          f"expects {_ABI}: rebuild it (tools/setup) or reinstall the wheel")
    return lib


_lib = _load()


def _call(fn, args=None, **groups):
    """Runs fn with JSON args and tensor groups (lists of (name, dtype, shape, bytes)); returns
    (value, tensors as such tuples)."""
    descriptors, buffers = [], []
    for group, items in groups.items():
        if items is None:
            continue
        for item in items:
            if not isinstance(item, tuple) or len(item) != 4:
                raise ValueError(f"{group}: expected (name, dtype, shape, bytes) tuples")
            name, dtype, shape, data = item
            descriptors.append({"group": group, "name": name, "dtype": dtype,
                                "shape": [int(e) for e in shape]})
            buffers.append(bytes(data))
        args = dict(args or {}, **{group: True})
    request = json.dumps({"fn": fn, "args": args or {}, "tensors": descriptors}).encode()
    n = len(buffers)
    data = (ctypes.c_void_p * max(n, 1))(
        *[ctypes.cast(ctypes.c_char_p(b), ctypes.c_void_p) for b in buffers])
    sizes = (ctypes.c_uint64 * max(n, 1))(*[len(b) for b in buffers])
    handle = _lib.lmo_call(request, data, sizes, n)
    try:
        reply = json.loads(_lib.lmo_result_json(handle).decode())
        if not reply["ok"]:
            raise _ERRORS.get(reply["error"], RuntimeError)(reply["message"])
        out = []
        for i, d in enumerate(reply["tensors"]):
            size = ctypes.c_uint64(0)
            ptr = _lib.lmo_result_data(handle, i, ctypes.byref(size))
            out.append((d["name"], d["dtype"], tuple(d["shape"]),
                        ctypes.string_at(ptr, size.value) if size.value else b""))
        return reply["value"], out
    finally:
        _lib.lmo_result_free(handle)


def version():
    return _call("version")[0]


def builtin_cases_dir():
    return _call("builtin_cases_dir")[0]


def load_cases(dir):
    return _call("load_cases", {"dir": dir})[0]


def ops():
    return _call("ops")[0]


def op_io(case):
    return _call("op_io", {"case": case})[0]


def case_inputs(case, format):
    return _call("case_inputs", {"case": case, "format": format})[1]


def reference(case, inputs, format):
    fmt, tensors = _call("reference", {"case": case, "format": format}, inputs=inputs)
    return tensors, fmt


def check(case, inputs, outputs, recipe="strict", diagnose=False):
    value, _ = _call("check", {"case": case, "recipe": recipe, "diagnose": bool(diagnose)},
                     inputs=inputs, outputs=outputs)
    return value[0], value[1]


def recipes():
    return [(name, list(ops), list(points), source)
            for name, ops, points, source in _call("recipes")[0]]


def validate(case):
    _call("validate", {"case": case})


def validate_recipe(case, recipe):
    """ValueError when the recipe text is malformed or does not apply to the case's op."""
    _call("validate_recipe", {"case": case, "recipe": recipe})


def specials(format):
    return _call("specials", {"format": format})[0]


def main(argv):
    """The lmoracle command line with these arguments (argv[0] is the program's name)."""
    encoded = [os.fsencode(a) for a in argv]
    c_argv = (ctypes.c_char_p * (len(encoded) + 1))(*encoded, None)
    return _lib.lmo_main(len(encoded), c_argv)
