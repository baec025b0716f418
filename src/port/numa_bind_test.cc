// The memory policies' names, as topo's binding helpers and Python's bind_to_numa_node read them.
#include "seedance/port/numa_bind.h"

#include <gtest/gtest.h>

namespace seedance::port {
namespace {

TEST(MemoryPolicy, NamesRoundTripAndErrorsListThem) {
  for (MemoryPolicy p : {MemoryPolicy::kNone, MemoryPolicy::kPreferred, MemoryPolicy::kBind}) {
    EXPECT_EQ(*ParseMemoryPolicy(MemoryPolicyName(p), "memory"), p);
  }
  auto bad = ParseMemoryPolicy("interleave", "memory");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().ToString().find("none, preferred or bind"), std::string::npos);
}

}  // namespace
}  // namespace seedance::port
