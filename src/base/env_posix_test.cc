#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

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
