// Running the lmoracle program from a test as a user would: its exit code, its output and the
// files it wrote.
#pragma once

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lmo::testdata {

struct CliResult {
  int code;
  std::string out;  // stdout, then stderr when `merge_stderr`
};

// Runs `program args` through the shell; stderr joins stdout unless merge_stderr is false.
inline CliResult run_cli(const std::string& program, const std::string& args,
                         bool merge_stderr = true) {
  const std::string cmd = program + " " + args + (merge_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return {-1, "popen failed"};
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) out.append(buf.data(), n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

// The bytes of a file the program wrote ("" when it is missing).
inline std::string file_bytes(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace lmo::testdata
