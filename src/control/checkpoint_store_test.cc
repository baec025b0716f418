#include "seedance/control/checkpoint_store.h"

#include <gtest/gtest.h>

#include "seedance/base/fake_env.h"

namespace seedance::control {
namespace {

// The CRC-32 check value every implementation publishes (zlib, IEEE 802.3): "123456789".
TEST(CheckpointStoreTest, Crc32CheckValue) {
  EXPECT_EQ(Crc32("123456789"), 0xCBF43926U);
  EXPECT_EQ(Crc32(""), 0U);
}

TEST(CheckpointStoreTest, RoundTripAndEveryTruncationIsRejected) {
  const std::string payload = "weights and optimizer state \x00\x01\xff";
  const std::string file = EncodeCheckpoint(42, 1337, payload);
  auto c = DecodeCheckpoint(file, "f");
  ASSERT_TRUE(c.ok()) << c.status().ToString();
  EXPECT_EQ(c->step, 42);
  EXPECT_EQ(c->next_sample, 1337);
  EXPECT_EQ(c->payload, payload);
  // A write cut anywhere — what a crash without the atomic rename would leave — never decodes.
  for (size_t n = 0; n < file.size(); ++n) {
    EXPECT_FALSE(DecodeCheckpoint(file.substr(0, n), "f").ok()) << n;
  }
  // One flipped bit anywhere is caught (header fields by their checks, payload by the CRC).
  for (size_t i = 0; i < file.size(); ++i) {
    std::string bad = file;
    bad[i] = static_cast<char>(bad[i] ^ 0x10);
    auto d = DecodeCheckpoint(bad, "f");
    if (i >= 8 && i < 24) continue;  // step and next_sample: any value is well-formed
    EXPECT_FALSE(d.ok()) << i;
  }
}

TEST(CheckpointStoreTest, NewestSkipsWhatDoesNotValidate) {
  base::FakeEnv env;
  env.SetFile("/ck/.keep", "");
  ASSERT_TRUE(WriteCheckpoint(env, "/ck", 100, 6400, "a").ok());
  ASSERT_TRUE(WriteCheckpoint(env, "/ck", 200, 12800, "b").ok());
  env.SetFile("/ck/ckpt-000000000300.sdck", "SDCK torn");     // a torn newest file
  env.SetFile("/ck/ckpt-000000000400.sdck.tmp.1.2", "half");  // a temporary file
  env.SetFile("/ck/notes.txt", "x");
  auto r = NewestCheckpoint(env, "/ck");
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_TRUE(r->checkpoint.has_value());
  EXPECT_EQ(r->checkpoint->step, 200);
  EXPECT_EQ(r->checkpoint->next_sample, 12800);
  EXPECT_EQ(r->checkpoint->payload, "b");
  ASSERT_EQ(r->skipped.size(), 1u);
  EXPECT_NE(r->skipped[0].find("ckpt-000000000300.sdck"), std::string::npos);
  EXPECT_EQ(*CheckpointSteps(env, "/ck"), (std::vector<int64_t>{100, 200, 300}));
  // A file whose name and header disagree is not trusted.
  env.SetFile("/ck/ckpt-000000000500.sdck", EncodeCheckpoint(7, 0, "c"));
  EXPECT_EQ(NewestCheckpoint(env, "/ck")->checkpoint->step, 200);
  EXPECT_FALSE(WriteCheckpoint(env, "/ck", -1, 0, "x").ok());
}

}  // namespace
}  // namespace seedance::control
