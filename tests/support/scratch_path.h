// A path under the system's temporary directory for a test's files, emptied now and removed with
// everything under it when the test binary exits, so that runs leave nothing behind in /tmp
// (ctest runs each test as a process of its own; a test killed midway leaves its folder, which
// the next run of the same name and process id empties).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

namespace lmo::testdata {

// <tmp>/<leaf>_<pid>, not existing on return; the caller creates what it needs there.
inline std::filesystem::path scratch_path(const std::string& leaf) {
  struct Made {
    std::mutex m;
    std::vector<std::filesystem::path> paths;
    ~Made() {
      for (const auto& p : paths) {
        std::error_code ec;
        std::filesystem::remove_all(p, ec);
      }
    }
  };
  static Made made;
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / (leaf + "_" + std::to_string(getpid()));
  std::filesystem::remove_all(p);
  const std::lock_guard<std::mutex> lock(made.m);
  made.paths.push_back(p);
  return p;
}

}  // namespace lmo::testdata
