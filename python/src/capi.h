/* The C ABI of the lmoracle Python package (liblmoracle_capi.so), loaded by
 * python/lmoracle/_core.py through ctypes. A C ABI rather than a CPython extension: the library
 * needs no Python headers and names no CPython symbol, so one wheel serves every Python 3 (the
 * GPU machine's 3.12 as well as Debian's 3.11), and ctypes releases the GIL for each call.
 *
 * One entry point carries every function: a request is JSON text
 *   {"fn": NAME, "args": {...}, "tensors": [{"group", "name", "dtype", "shape"}, ...]}
 * with the bytes of tensor i (C-contiguous, little-endian, in the project's dtype) at data[i]
 * (sizes[i] bytes). The result's JSON is
 *   {"ok": true, "value": ..., "tensors": [{"name", "dtype", "shape"}, ...]}
 * with tensor i's bytes from lmo_result_data(r, i), or
 *   {"ok": false, "error": "ValueError" | "IndexError" | "MemoryError" | "OverflowError" |
 *                          "RuntimeError", "message": TEXT}
 * Nothing is thrown across the boundary. */
#ifndef LMO_PYTHON_CAPI_H_
#define LMO_PYTHON_CAPI_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LMO_CAPI __attribute__((visibility("default")))

/* Bumped when a request or result changes shape: _core.py refuses a library of another. */
#define LMO_CAPI_VERSION 1

typedef struct lmo_result lmo_result;

LMO_CAPI int lmo_capi_version(void);
/* Never NULL: an error is reported in the result's JSON. */
LMO_CAPI lmo_result* lmo_call(const char* request, const void* const* data, const uint64_t* sizes,
                              uint64_t count);
LMO_CAPI const char* lmo_result_json(const lmo_result* r);
/* Tensor i's bytes (NULL past the last), their count in *size. */
LMO_CAPI const void* lmo_result_data(const lmo_result* r, uint64_t i, uint64_t* size);
LMO_CAPI void lmo_result_free(lmo_result* r);
/* The lmoracle command line (tools/cli_main.cc) with its exit code; flushes C and C++ streams. */
LMO_CAPI int lmo_main(int argc, char** argv);

#ifdef __cplusplus
}
#endif

#endif /* LMO_PYTHON_CAPI_H_ */
