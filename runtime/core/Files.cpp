#include "runtime/core/Files.h"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

#include <ext/stdio_filebuf.h>

namespace ampc::rt {
namespace {

std::string dirOf(const std::string &path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos)
    return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

/// Follows symlinks from `path` to the file they name (which need not
/// exist); "" after too many links.
std::string throughLinks(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st;
    if (lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode))
      return path;
    char target[PATH_MAX];
    ssize_t n = readlink(path.c_str(), target, sizeof target - 1);
    if (n < 0)
      return path;
    target[n] = 0;
    path = target[0] == '/' ? std::string(target) : dirOf(path) + "/" + target;
  }
  return "";
}

std::string notRegular(const struct stat &st) {
  if (S_ISDIR(st.st_mode))
    return "is a directory";
  if (S_ISFIFO(st.st_mode))
    return "is a FIFO, not a regular file";
  if (S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode))
    return "is a device, not a regular file";
  if (S_ISSOCK(st.st_mode))
    return "is a socket, not a regular file";
  return "is not a regular file";
}

} // namespace

std::optional<std::string> readFile(const std::string &path, std::string &error) {
  int fd = open(path.c_str(), O_RDONLY | O_NONBLOCK);
  if (fd < 0) {
    error = std::strerror(errno);
    return std::nullopt;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    error = "it " + notRegular(st);
    close(fd);
    return std::nullopt;
  }
  std::string text(st.st_size, '\0');
  size_t done = 0;
  while (done < text.size()) {
    ssize_t n = read(fd, text.data() + done, text.size() - done);
    if (n <= 0) {
      if (n < 0 && errno == EINTR)
        continue;
      break;
    }
    done += n;
  }
  close(fd);
  if (done != text.size()) {
    error = "it changed while being read";
    return std::nullopt;
  }
  return text;
}

std::string checkWritable(const std::string &path) {
  if (path.empty())
    return "an empty file name";
  std::string target = throughLinks(path);
  if (target.empty())
    return "too many levels of symbolic links";
  struct stat st;
  if (stat(target.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    return "it " + notRegular(st) + "; refusing to replace it";
  std::string dir = dirOf(target);
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return "its directory " + dir + " does not exist";
  if (access(dir.c_str(), W_OK) != 0)
    return "its directory " + dir + " is not writable";
  return "";
}

std::string writeFileAtomically(const std::string &path,
                                const std::function<bool(std::ostream &)> &write) {
  if (std::string why = checkWritable(path); !why.empty())
    return why;
  std::string target = throughLinks(path);
  std::string base = target.substr(target.rfind('/') + 1);
  std::string tmp = dirOf(target) + "/." + base + ".tmp-XXXXXX";
  int fd = mkstemp(tmp.data()); // O_EXCL: a new file, never a user's
  if (fd < 0)
    return std::string("cannot create a temporary file: ") + std::strerror(errno);
  struct stat st;
  mode_t mode;
  if (stat(target.c_str(), &st) == 0) {
    mode = st.st_mode & 07777;
  } else {
    mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  fchmod(fd, mode);
  bool ok;
  {
    __gnu_cxx::stdio_filebuf<char> buffer(fd, std::ios::out | std::ios::binary);
    std::ostream out(&buffer);
    ok = write(out) && out.flush().good();
    ok = buffer.close() != nullptr && ok; // closes fd
  }
  if (!ok) {
    unlink(tmp.c_str());
    return "cannot write the file";
  }
  if (rename(tmp.c_str(), target.c_str()) != 0) {
    std::string why = std::strerror(errno);
    unlink(tmp.c_str());
    return "cannot write the file: " + why;
  }
  return "";
}

std::string writeFileAtomically(const std::string &path, const std::string &contents) {
  return writeFileAtomically(path, [&](std::ostream &out) {
    out.write(contents.data(), contents.size());
    return true;
  });
}

} // namespace ampc::rt
