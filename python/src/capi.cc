// The C ABI (capi.h): parses a request, runs the named function (calls.h) and keeps its reply
// for Python to read. Exceptions stop here and become the Python exception type that nanobind's
// mapping gave them before the package moved to this ABI, so callers see the same errors.
#include "capi.h"

#include <cstdio>
#include <iostream>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "calls.h"
#include "cli_main.h"
#include "oracle/core/case_error.h"

using nlohmann::json;

struct lmo_result {
  std::string json;
  std::vector<std::vector<uint8_t>> tensors;
};

namespace {

lmo_result* error_result(const char* type, const std::string& message) {
  auto* r = new lmo_result;
  r->json = json{{"ok", false}, {"error", type}, {"message", message}}.dump(
      -1, ' ', false, json::error_handler_t::replace);
  return r;
}

lmo_result* run(const char* request, const void* const* data, const uint64_t* sizes,
                uint64_t count) {
  json q;
  try {
    q = json::parse(request ? request : "");
  } catch (const json::exception& e) {
    return error_result("ValueError", std::string("lmoracle: malformed request: ") + e.what());
  }
  const json args = q.value("args", json::object());
  const json descriptors = q.value("tensors", json::array());
  const std::string fn = q.value("fn", "");
  const auto& table = lmo::python::calls();
  const auto it = table.find(fn);
  if (it == table.end()) return error_result("ValueError", "lmoracle: no function \"" + fn + "\"");
  const lmo::python::Reply reply = it->second({args, descriptors, {data, sizes, count}});
  auto* r = new lmo_result;
  json out{{"ok", true}, {"value", reply.value}, {"tensors", json::array()}};
  lmo::python::tensors_to_result(reply.tensors, out["tensors"], r->tensors);
  // Replacement, not an exception, for text that is not UTF-8 (a file name from the user).
  r->json = out.dump(-1, ' ', false, json::error_handler_t::replace);
  return r;
}

}  // namespace

extern "C" {

int lmo_capi_version(void) { return LMO_CAPI_VERSION; }

lmo_result* lmo_call(const char* request, const void* const* data, const uint64_t* sizes,
                     uint64_t count) {
  // Bad input is the caller's mistake: ValueError, with the oracle's message (what, which field,
  // what was expected).
  try {
    return run(request, data, sizes, count);
  } catch (const lmo::oracle::InputError& e) {
    return error_result("ValueError", e.what());
  } catch (const std::invalid_argument& e) {
    return error_result("ValueError", e.what());
  } catch (const std::domain_error& e) {
    return error_result("ValueError", e.what());
  } catch (const std::length_error& e) {
    return error_result("ValueError", e.what());
  } catch (const std::out_of_range& e) {
    return error_result("IndexError", e.what());
  } catch (const std::overflow_error& e) {
    return error_result("OverflowError", e.what());
  } catch (const std::bad_alloc& e) {
    return error_result("MemoryError", e.what());
  } catch (const std::exception& e) {
    return error_result("RuntimeError", e.what());
  } catch (...) {
    return error_result("RuntimeError", "lmoracle: unknown C++ exception");
  }
}

const char* lmo_result_json(const lmo_result* r) { return r->json.c_str(); }

const void* lmo_result_data(const lmo_result* r, uint64_t i, uint64_t* size) {
  if (i >= r->tensors.size()) {
    *size = 0;
    return nullptr;
  }
  *size = r->tensors[i].size();
  return r->tensors[i].data();
}

void lmo_result_free(lmo_result* r) { delete r; }

int lmo_main(int argc, char** argv) {
  int rc;
  try {
    rc = lmoracle_main(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "lmoracle: " << e.what() << "\n";
    rc = 2;
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
  return rc;
}

}  // extern "C"
