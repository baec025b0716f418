// Test support: where the shared public data sets are, and what a test does
// when one is missing. SEEDANCE_DATA_DIR wins; otherwise ../shared/data next
// to the source tree (SEEDANCE_SOURCE_DIR, which CTest sets). A missing data
// set skips the test, except under CI=true, where it fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace seedance::base::testing {

inline std::filesystem::path DataDir() {
  if (const char* dir = std::getenv("SEEDANCE_DATA_DIR")) return dir;
  const char* src = std::getenv("SEEDANCE_SOURCE_DIR");
  return std::filesystem::path(src ? src : ".") / ".." / "shared" / "data";
}

inline bool InCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string(ci) == "true";
}

}  // namespace seedance::base::testing

// In a TEST body: skips (or, under CI=true, fails) when `path` does not exist.
#define SEEDANCE_REQUIRE_DATA(path)                                                             \
  do {                                                                                          \
    if (!std::filesystem::exists(path)) {                                                       \
      if (::seedance::base::testing::InCi()) FAIL() << "data set missing under CI: " << (path); \
      GTEST_SKIP() << "data set not found: " << (path);                                         \
    }                                                                                           \
  } while (false)
