#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "seedance/base/env.h"

namespace seedance::base {
namespace {

namespace fs = std::filesystem;

class PosixEnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/seedance_env_test_XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories(fs::path(dir_ + "/" + rel).parent_path());
    std::ofstream(dir_ + "/" + rel) << text;
  }
  std::string dir_;
};

TEST_F(PosixEnvTest, ReadListExists) {
  Write("a.txt", "hello");
  Write("sub/b.txt", "x");
  Env* env = Env::Default();
  auto text = env->ReadFile(dir_ + "/a.txt");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "hello");
  auto names = env->ListDirectory(dir_);
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a.txt", "sub"}));
  EXPECT_TRUE(env->FileExists(dir_ + "/sub/b.txt"));
  EXPECT_FALSE(env->FileExists(dir_ + "/nope"));
}

TEST_F(PosixEnvTest, MissingFileIsNotFoundWithPath) {
  auto r = Env::Default()->ReadFile(dir_ + "/missing.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(r.status().where(), dir_ + "/missing.yaml");
  EXPECT_EQ(Env::Default()->ListDirectory(dir_ + "/nodir").status().code(), StatusCode::kNotFound);
}

TEST_F(PosixEnvTest, DirectoryIsNotAFile) {
  auto r = Env::Default()->ReadFile(dir_);
  EXPECT_FALSE(r.ok());
}

// Hardening finding 5: a device never ends and a FIFO blocks; neither is read.
TEST_F(PosixEnvTest, DevicesAndFifosAreRefusedNotRead) {
  auto zero = Env::Default()->ReadFile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.status().message().find("not a regular file"), std::string_view::npos);
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto f = Env::Default()->ReadFile(fifo);  // returns at once: no writer is waited for
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().where(), fifo);
}

TEST_F(PosixEnvTest, RootRemapsAbsolutePathsOnly) {
  // A fake /sys tree under dir_.
  Write("sys/devices/system/node/online", "0-1\n");
  auto env = NewPosixEnv({.root = dir_ + "/"});
  auto text = env->ReadFile("/sys/devices/system/node/online");
  ASSERT_TRUE(text.ok()) << text.status().ToString();
  EXPECT_EQ(*text, "0-1\n");
  auto nodes = env->ListDirectory("/sys/devices/system");
  ASSERT_TRUE(nodes.ok());
  EXPECT_EQ(*nodes, std::vector<std::string>{"node"});
  // Errors name the path the caller asked for, not the re-rooted one.
  auto missing = env->ReadFile("/proc/stat");
  EXPECT_EQ(missing.status().where(), "/proc/stat");
}

TEST_F(PosixEnvTest, ReadLinkReturnsTheStoredTargetUnderTheRoot) {
  // A sysfs-style relative link inside a fake root, and a /proc/PID/fd-style
  // absolute one: both come back exactly as stored.
  Write("sys/devices/pci0000:00/0000:00:01.0/numa_node", "1\n");
  fs::create_directories(dir_ + "/sys/bus/pci/devices");
  fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0",
                     dir_ + "/sys/bus/pci/devices/0000:00:01.0");
  fs::create_symlink("/dev/nvidia0", dir_ + "/fd3");
  auto env = NewPosixEnv({.root = dir_});
  EXPECT_EQ(*env->ReadLink("/sys/bus/pci/devices/0000:00:01.0"),
            "../../../devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(*env->ReadFile("/sys/bus/pci/devices/0000:00:01.0/numa_node"), "1\n");
  EXPECT_EQ(*env->ReadLink("/fd3"), "/dev/nvidia0");
  EXPECT_EQ(env->ReadLink("/sys/bus/pci/devices/0000:00:01.0/numa_node").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(env->ReadLink("/nope").status().code(), StatusCode::kNotFound);
}

TEST_F(PosixEnvTest, AtomicWriteReplacesAndLeavesNoTemporaries) {
  Env* env = Env::Default();
  const std::string path = dir_ + "/out.json";
  ASSERT_TRUE(env->WriteFileAtomic(path, "first").ok());
  ASSERT_TRUE(env->WriteFileAtomic(path, "second").ok());
  EXPECT_EQ(*env->ReadFile(path), "second");
  EXPECT_EQ(*env->ListDirectory(dir_), std::vector<std::string>{"out.json"});
}

TEST_F(PosixEnvTest, AtomicWriteIntoMissingDirectoryFailsCleanly) {
  Status s = Env::Default()->WriteFileAtomic(dir_ + "/no/such/dir/x", "data");
  EXPECT_EQ(s.code(), StatusCode::kIoError);
  EXPECT_EQ(s.where(), dir_ + "/no/such/dir/x");
}

TEST_F(PosixEnvTest, AtomicWriteFollowsLinksAndKeepsThem) {
  Env* env = Env::Default();
  Write("real/target.txt", "old");
  ::chmod((dir_ + "/real/target.txt").c_str(), 0600);
  fs::create_symlink("real/target.txt", dir_ + "/relative");  // relative to the link's folder
  fs::create_symlink(dir_ + "/relative", dir_ + "/chain");    // a link to a link
  ASSERT_TRUE(env->WriteFileAtomic(dir_ + "/chain", "new").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ + "/chain"));
  EXPECT_TRUE(fs::is_symlink(dir_ + "/relative"));
  EXPECT_EQ(*env->ReadFile(dir_ + "/real/target.txt"), "new");
  EXPECT_EQ(fs::status(dir_ + "/real/target.txt").permissions(),
            fs::perms::owner_read | fs::perms::owner_write);  // the replaced file's mode is kept
  // A dangling link creates its target, as `cat > link` would.
  fs::create_symlink("created.txt", dir_ + "/dangling");
  ASSERT_TRUE(env->WriteFileAtomic(dir_ + "/dangling", "made").ok());
  EXPECT_TRUE(fs::is_symlink(dir_ + "/dangling"));
  EXPECT_EQ(*env->ReadFile(dir_ + "/created.txt"), "made");
  // A loop is an error, and both links stay.
  fs::create_symlink("loop_b", dir_ + "/loop_a");
  fs::create_symlink("loop_a", dir_ + "/loop_b");
  Status loop = env->WriteFileAtomic(dir_ + "/loop_a", "x");
  EXPECT_EQ(loop.code(), StatusCode::kIoError);
  EXPECT_NE(loop.message().find("symbolic links"), std::string::npos) << loop.message();
  EXPECT_TRUE(fs::is_symlink(dir_ + "/loop_a"));
}

// The property the writers promise: whatever is at the destination and is not a regular file is
// still there, of the same type, afterwards; it was written through or the write was refused.
TEST_F(PosixEnvTest, AtomicWriteNeverReplacesWhatIsNotARegularFile) {
  Env* env = Env::Default();
  const std::string fifo = dir_ + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  const std::string sub = dir_ + "/sub";
  fs::create_directory(sub);
  const std::string sock = dir_ + "/sock";
  const int sfd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(sfd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof addr.sun_path);
  std::memcpy(addr.sun_path, sock.c_str(), sock.size() + 1);
  ASSERT_EQ(::bind(sfd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  fs::create_symlink(fifo, dir_ + "/to_fifo");
  fs::create_symlink("/dev/null", dir_ + "/to_null");

  struct Case {
    std::string path;
    fs::file_type type;  // of the entry itself, before and after
    bool written;        // written through (true) or refused (false)
  };
  const std::vector<Case> cases = {
      {"/dev/null", fs::file_type::character, true},
      {dir_ + "/to_null", fs::file_type::symlink, true},
      {fifo, fs::file_type::fifo, false},  // nobody reads it: refused, never a hang
      {dir_ + "/to_fifo", fs::file_type::symlink, false},
      {sub, fs::file_type::directory, false},
      {sock, fs::file_type::socket, false},
  };
  for (const Case& c : cases) {
    ASSERT_EQ(fs::symlink_status(c.path).type(), c.type) << c.path;
    const Status s = env->WriteFileAtomic(c.path, "report\n");
    EXPECT_EQ(s.ok(), c.written) << c.path << ": " << s.ToString();
    if (!s.ok()) {
      EXPECT_EQ(s.where(), c.path);
    }
    EXPECT_EQ(fs::symlink_status(c.path).type(), c.type) << c.path;
  }
  EXPECT_EQ(fs::status("/dev/null").type(), fs::file_type::character);
  EXPECT_EQ(fs::symlink_status(fifo).type(), fs::file_type::fifo);

  // A FIFO with a reader is written through: the reader gets every byte.
  std::string received;
  std::thread reader([&] {
    const int rfd = ::open(fifo.c_str(), O_RDONLY);
    char buf[256];
    ssize_t n = 0;
    while ((n = ::read(rfd, buf, sizeof buf)) > 0) received.append(buf, static_cast<size_t>(n));
    ::close(rfd);
  });
  Status through = IoError("not tried", fifo);
  for (int attempt = 0; attempt < 500 && !through.ok(); ++attempt) {  // until the reader opens it
    through = env->WriteFileAtomic(dir_ + "/to_fifo", "through the pipe\n");
    if (!through.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reader.join();
  EXPECT_TRUE(through.ok()) << through.ToString();
  EXPECT_EQ(received, "through the pipe\n");
  EXPECT_EQ(fs::symlink_status(fifo).type(), fs::file_type::fifo);
  ::close(sfd);

  // No temporary left behind by any refusal.
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_EQ(entry.path().filename().string().find(".tmp."), std::string::npos) << entry.path();
  }
}

// A descriptor of this process named as a file (/dev/fd/N, /proc/self/fd/N, a link to one) is
// written to as it was opened — a pipe, a file opened for appending — never resolved to a path
// and replaced; a reader that has gone is an error, not a SIGPIPE that ends the process.
TEST_F(PosixEnvTest, AtomicWriteToADescriptorWritesThroughIt) {
  Env* env = Env::Default();
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const std::string by_dev = "/dev/fd/" + std::to_string(pipe_fds[1]);
  ASSERT_TRUE(env->WriteFileAtomic(by_dev, "one ").ok());
  fs::create_symlink("/proc/self/fd/" + std::to_string(pipe_fds[1]), dir_ + "/to_pipe");
  ASSERT_TRUE(env->WriteFileAtomic(dir_ + "/to_pipe", "two").ok());
  ::close(pipe_fds[1]);
  char buf[64];
  const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
  EXPECT_EQ(std::string(buf, static_cast<size_t>(std::max<ssize_t>(n, 0))), "one two");
  EXPECT_TRUE(fs::is_symlink(dir_ + "/to_pipe"));
  // The reader gone: EPIPE as an error, and the process is still here.
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[0]);
  const Status gone = env->WriteFileAtomic("/dev/fd/" + std::to_string(pipe_fds[1]), "x");
  EXPECT_EQ(gone.code(), StatusCode::kIoError);
  EXPECT_NE(gone.message().find("write failed"), std::string::npos) << gone.ToString();
  ::close(pipe_fds[1]);
  // A file opened for appending keeps what it had.
  Write("log.txt", "kept\n");
  const int log = ::open((dir_ + "/log.txt").c_str(), O_WRONLY | O_APPEND);
  ASSERT_GE(log, 0);
  ASSERT_TRUE(env->WriteFileAtomic("/proc/self/fd/" + std::to_string(log), "added\n").ok());
  ::close(log);
  EXPECT_EQ(*env->ReadFile(dir_ + "/log.txt"), "kept\nadded\n");
}

TEST_F(PosixEnvTest, ClocksAndVariables) {
  Env* env = Env::Default();
  int64_t a = env->NowMonotonicNanos();
  env->SleepFor(std::chrono::milliseconds(1));
  EXPECT_GE(env->NowMonotonicNanos() - a, 1'000'000);
  EXPECT_GT(env->NowUnixNanos(), 1'600'000'000LL * 1'000'000'000LL);  // after 2020
  ::setenv("SEEDANCE_ENV_TEST_VAR", "42", 1);
  EXPECT_EQ(env->GetVar("SEEDANCE_ENV_TEST_VAR"), "42");
  ::unsetenv("SEEDANCE_ENV_TEST_VAR");
  EXPECT_FALSE(env->GetVar("SEEDANCE_ENV_TEST_VAR").has_value());
}

}  // namespace
}  // namespace seedance::base
