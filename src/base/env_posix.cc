// The POSIX Env: real clocks, real files (optionally re-rooted), getenv.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <sstream>
#include <string_view>
#include <thread>

#include "seedance/base/env.h"

namespace seedance::base {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

std::string TooLarge() {
  return "larger than the " + std::to_string(kMaxReadFileBytes >> 30) + " GiB an input file may be";
}

class PosixEnv final : public Env {
 public:
  explicit PosixEnv(PosixEnvOptions options) : root_(std::move(options.root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
    if (root_ == "/") root_.clear();
  }

  int64_t NowMonotonicNanos() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }

  int64_t NowUnixNanos() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }

  void SleepFor(std::chrono::nanoseconds duration) override {
    std::this_thread::sleep_for(duration);
  }

  StatusOr<std::string> ReadFile(const std::string& path) override {
    const std::string real = Resolve(path);
    // O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused below).
    const int fd = ::open(real.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      const int err = errno;
      if (err == ENOENT) return NotFoundError("no such file", path);
      return IoError("cannot open: " + ErrnoText(err), path);
    }
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) return IoError("cannot stat: " + ErrnoText(errno), path);
    if (S_ISDIR(st.st_mode)) return IoError("is a directory", path);
    // Devices (/dev/zero), FIFOs and sockets never end or block: only regular files are read
    // (procfs and sysfs files are regular, with a size of 0 or 4096 whatever they hold).
    if (!S_ISREG(st.st_mode)) return IoError("not a regular file", path);
    if (st.st_size > kMaxReadFileBytes) return IoError(TooLarge(), path);
    std::string out;
    out.reserve(static_cast<size_t>(st.st_size));
    char buf[1 << 16];
    while (true) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n == 0) break;
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("read failed: " + ErrnoText(errno), path);
      }
      if (out.size() + static_cast<size_t>(n) > static_cast<size_t>(kMaxReadFileBytes)) {
        return IoError(TooLarge(), path);  // a file that grows while it is read
      }
      out.append(buf, static_cast<size_t>(n));
    }
    return out;
  }

  StatusOr<std::vector<std::string>> ListDirectory(const std::string& path) override {
    std::error_code ec;
    std::filesystem::directory_iterator it(Resolve(path), ec);
    if (ec) {
      if (ec == std::errc::no_such_file_or_directory)
        return NotFoundError("no such directory", path);
      return IoError("cannot list: " + ec.message(), path);
    }
    std::vector<std::string> names;
    for (const auto& entry : it) names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

  bool FileExists(const std::string& path) override {
    std::error_code ec;
    return std::filesystem::exists(Resolve(path), ec);
  }

  StatusOr<std::string> ReadLink(const std::string& path) override {
    std::error_code ec;
    auto target = std::filesystem::read_symlink(Resolve(path), ec);
    if (!ec) return target.string();
    if (ec == std::errc::no_such_file_or_directory) return NotFoundError("no such file", path);
    if (ec == std::errc::invalid_argument) return InvalidArgumentError("not a symbolic link", path);
    return IoError("cannot read link: " + ec.message(), path);
  }

  // A regular file (or a new one) is replaced atomically: a temporary beside it, renamed over
  // it. A symbolic link is followed to its end, and that file is replaced, so the link stays a
  // link. A character device (/dev/null, a terminal) or a FIFO with a reader is written through.
  // A descriptor of this process named as a file (/dev/stdout, /dev/fd/N, /proc/self/fd/N, or a
  // link to one: a shell's `>(...)`) is written to as the shell set it up — a pipe, a terminal,
  // a file opened for appending — never resolved to a path and replaced. Anything else (a
  // directory, a socket, a block device, a FIFO nobody reads) is refused and left as it was: a
  // rename over it would destroy it.
  Status WriteFileAtomic(const std::string& path, std::string_view contents) override {
    StatusOr<Target> target = FollowLinks(Resolve(path), path);
    if (!target.ok()) return target.status();
    if (target->descriptor) return WriteAllNoSigpipe(*target->descriptor, contents, path);
    const std::string& file = target->path;
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) {
      if (errno != ENOENT) return IoError("cannot stat: " + ErrnoText(errno), path);
      return ReplaceRegular(file, path, contents, /*mode=*/std::nullopt);
    }
    if (S_ISREG(st.st_mode)) return ReplaceRegular(file, path, contents, st.st_mode & 07777);
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      return WriteThrough(file, path, contents, S_ISFIFO(st.st_mode));
    }
    if (S_ISDIR(st.st_mode)) return IoError("is a directory", path);
    return IoError(
        "not a regular file, character device or FIFO: left as it is rather than replaced", path);
  }

  std::optional<std::string> GetVar(const std::string& name) override {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

  MemoryFacts Memory() override {
    MemoryFacts m;
    m.page_bytes = ::sysconf(_SC_PAGESIZE);
    m.physical_bytes = m.page_bytes * ::sysconf(_SC_PHYS_PAGES);
    rlimit as{};
    if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
      m.address_space_limit = static_cast<int64_t>(as.rlim_cur);
    }
    return m;
  }

 private:
  static constexpr int kMaxLinkHops = 40;  // as the kernel's ELOOP limit

  struct Target {
    std::string path;               // the file at the end of the links
    std::optional<int> descriptor;  // or this process's descriptor the path names
  };

  // The descriptor `at` names: /dev/stdin, /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
  static std::optional<int> DescriptorOf(std::string_view at) {
    if (at == "/dev/stdin") return 0;
    if (at == "/dev/stdout") return 1;
    if (at == "/dev/stderr") return 2;
    for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
      if (!at.starts_with(prefix)) continue;
      std::string_view digits = at.substr(prefix.size());
      if (digits.empty() || digits.size() > 9) return std::nullopt;
      int fd = 0;
      for (char c : digits) {
        if (c < '0' || c > '9') return std::nullopt;
        fd = fd * 10 + (c - '0');
      }
      return fd;
    }
    return std::nullopt;
  }

  // The end of `at`'s chain of symbolic links (`at` itself when it is not a link or does not
  // exist), or the descriptor a link of the chain names (the kernel's "magic" links under
  // /proc/self/fd do not name a path: a pipe's reads "pipe:[123]"). A relative target is taken
  // from the link's own directory; an absolute one under the Env's root.
  StatusOr<Target> FollowLinks(std::string at, const std::string& path) const {
    for (int hop = 0; hop < kMaxLinkHops; ++hop) {
      if (root_.empty()) {
        if (const std::optional<int> fd = DescriptorOf(at)) return Target{"", fd};
      }
      struct stat st {};
      if (::lstat(at.c_str(), &st) != 0) {
        if (errno == ENOENT) return Target{at, std::nullopt};
        return IoError("cannot stat: " + ErrnoText(errno), path);
      }
      if (!S_ISLNK(st.st_mode)) return Target{at, std::nullopt};
      std::string target(4096, '\0');
      const ssize_t n = ::readlink(at.c_str(), target.data(), target.size());
      if (n < 0) return IoError("cannot read link: " + ErrnoText(errno), path);
      if (static_cast<size_t>(n) == target.size()) return IoError("link target too long", path);
      target.resize(static_cast<size_t>(n));
      if (target.empty()) return IoError("empty symbolic link", path);
      at = target.front() == '/' ? Resolve(target) : DirectoryOf(at) + target;
    }
    return IoError("too many levels of symbolic links", path);
  }

  static std::string DirectoryOf(const std::string& file) {
    const size_t slash = file.find_last_of('/');
    return slash == std::string::npos ? "./" : file.substr(0, slash + 1);
  }

  // WriteAll with SIGPIPE held off: a pipe or FIFO whose reader has gone is an error (EPIPE), not
  // the end of the process. The signal the write raised, if any, is taken off this thread.
  static Status WriteAllNoSigpipe(int fd, std::string_view contents, const std::string& path) {
    sigset_t pipe_only, previous;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    sigset_t pending;
    sigemptyset(&pending);
    (void)::sigpending(&pending);
    const bool was_pending = sigismember(&pending, SIGPIPE) == 1;
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
    Status wrote = WriteAll(fd, contents, path);
    if (!was_pending) {
      const timespec now{0, 0};
      while (::sigtimedwait(&pipe_only, nullptr, &now) == SIGPIPE) {
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
    return wrote;
  }

  static Status WriteAll(int fd, std::string_view contents, const std::string& path) {
    size_t written = 0;
    while (written < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
      if (n < 0) {
        if (errno == EINTR) continue;
        return IoError("write failed: " + ErrnoText(errno), path);
      }
      written += static_cast<size_t>(n);
    }
    return OkStatus();
  }

  // Writes into a device or FIFO as `cat > path` would. O_NONBLOCK on open: a FIFO that nobody
  // reads is an error (ENXIO) rather than a hang.
  static Status WriteThrough(const std::string& target, const std::string& path,
                             std::string_view contents, bool fifo) {
    const int fd = ::open(target.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (fifo && errno == ENXIO) return IoError("a FIFO that nobody is reading", path);
      return IoError("cannot open for writing: " + ErrnoText(errno), path);
    }
    struct Closer {
      int fd;
      ~Closer() { ::close(fd); }
    } closer{fd};
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
      return IoError("cannot set blocking mode: " + ErrnoText(errno), path);
    }
    return WriteAllNoSigpipe(fd, contents, path);
  }

  // A temporary in the target's directory, flushed, renamed over the target, and the directory
  // flushed so that the rename is durable. `mode`: the replaced file's permissions, kept.
  static Status ReplaceRegular(const std::string& target, const std::string& path,
                               std::string_view contents, std::optional<mode_t> mode) {
    const std::string tmp = target + ".tmp." + std::to_string(::getpid()) + "." +
                            std::to_string(std::random_device{}());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return IoError("cannot create temporary file: " + ErrnoText(errno), path);
    Status wrote = WriteAll(fd, contents, path);
    if (wrote.ok() && mode.has_value() && ::fchmod(fd, *mode) != 0) {
      wrote = IoError("cannot keep the file's permissions: " + ErrnoText(errno), path);
    }
    // Both run whatever the first answers: a failed fsync must not leak the descriptor.
    const int sync_rc = wrote.ok() ? ::fsync(fd) : 0;
    const int sync_err = errno;
    const int close_rc = ::close(fd);
    const int close_err = errno;
    if (wrote.ok() && (sync_rc != 0 || close_rc != 0)) {
      wrote = IoError("flush failed: " + ErrnoText(sync_rc != 0 ? sync_err : close_err), path);
    }
    if (!wrote.ok()) {
      ::unlink(tmp.c_str());
      return wrote;
    }
    if (::rename(tmp.c_str(), target.c_str()) != 0) {
      const int err = errno;
      ::unlink(tmp.c_str());
      return IoError("rename failed: " + ErrnoText(err), path);
    }
    const std::string dir = DirectoryOf(target);
    const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir_fd < 0) return IoError("cannot open the directory to flush: " + ErrnoText(errno), path);
    const int dir_rc = ::fsync(dir_fd);
    const int dir_err = errno;
    ::close(dir_fd);
    if (dir_rc != 0) return IoError("directory flush failed: " + ErrnoText(dir_err), path);
    return OkStatus();
  }

  std::string Resolve(const std::string& path) const {
    if (root_.empty() || path.empty() || path.front() != '/') return path;
    return root_ + path;
  }

  std::string root_;  // empty: the real root
};

}  // namespace

Env* Env::Default() {
  static Env* env = new PosixEnv(PosixEnvOptions{});  // never destroyed: usable at exit
  return env;
}

std::unique_ptr<Env> NewPosixEnv(PosixEnvOptions options) {
  return std::make_unique<PosixEnv>(std::move(options));
}

}  // namespace seedance::base
