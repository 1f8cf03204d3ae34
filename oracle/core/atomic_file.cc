#include "oracle/core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "oracle/core/case_error.h"

namespace lmo::oracle {

void write_file_atomically(const std::filesystem::path& path, std::span<const uint8_t> bytes) {
  const std::span<const uint8_t> one[] = {bytes};
  write_file_atomically(path, std::span<const std::span<const uint8_t>>(one));
}

void write_file_atomically(const std::filesystem::path& path,
                           std::span<const std::span<const uint8_t>> pieces) {
  const std::string file = path.string();
  const std::string tmp = file + ".tmp." + std::to_string(::getpid());
  auto fail = [&](const std::string& what, int err) {
    ::unlink(tmp.c_str());
    throw InputError(file, "write", what + ": " + std::strerror(err));
  };
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    const int err = errno;
    throw InputError(file, "write",
                     "cannot create the temporary file " + tmp + ": " + std::strerror(err));
  }
  for (const std::span<const uint8_t> bytes : pieces) {
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        fail("cannot write " + tmp, err);
      }
      done += static_cast<size_t>(n);
    }
  }
  // The data must be on disk before the rename publishes the name, or a crash could expose a
  // file of the right name but without its contents.
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    fail("cannot flush " + tmp, err);
  }
  if (::close(fd) != 0) fail("cannot close " + tmp, errno);
  if (::rename(tmp.c_str(), file.c_str()) != 0) fail("cannot rename " + tmp + " to " + file, errno);
  // Make the rename itself durable; a folder that cannot be opened only loses that guarantee.
  const std::filesystem::path parent = path.has_parent_path() ? path.parent_path() : ".";
  const int dir = ::open(parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);
    ::close(dir);
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  write_file_atomically(
      path, std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
}

std::vector<uint8_t> read_file_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string(), "read", "cannot open the file for reading");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  in.seekg(0, std::ios::beg);
  if (size < 0) throw InputError(path.string(), "read", "cannot determine the file size");
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size)) {
    throw InputError(path.string(), "read", "read error");
  }
  return bytes;
}

}  // namespace lmo::oracle
