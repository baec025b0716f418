#include "seedance/base/status.h"

#include <gtest/gtest.h>

#include <memory>

namespace seedance::base {
namespace {

TEST(StatusTest, DefaultIsOkAndEmpty) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kOk);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.where(), "");
  EXPECT_EQ(s.ToString(), "OK");
  // An OK status is one null pointer: returning it allocates nothing.
  EXPECT_EQ(sizeof(Status), sizeof(void*));
}

TEST(StatusTest, ErrorCarriesCodeMessageWhere) {
  Status s = InvalidArgumentError("bad layers", "job.yaml:3: model.layers");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "bad layers");
  EXPECT_EQ(s.where(), "job.yaml:3: model.layers");
  EXPECT_EQ(s.ToString(), "INVALID_ARGUMENT: bad layers (job.yaml:3: model.layers)");
}

TEST(StatusTest, OkCodeWithMessageIsStillOk) {
  Status s(StatusCode::kOk, "ignored");
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.message(), "");
}

TEST(StatusTest, CopyIsDeepAndEqual) {
  Status a = NotFoundError("x", "f");
  Status b = a;
  EXPECT_EQ(a, b);
  b = IoError("y");
  EXPECT_EQ(a.message(), "x");
  EXPECT_FALSE(a == b);
  Status c;
  c = a;
  EXPECT_EQ(c, a);
  EXPECT_EQ(Status(), OkStatus());
}

TEST(StatusTest, WithWhereAndAnnotate) {
  Status s = OutOfRangeError("too big").WithWhere("flag --size");
  EXPECT_EQ(s.where(), "flag --size");
  EXPECT_EQ(s.code(), StatusCode::kOutOfRange);
  Status t = s.Annotate("reading catalog");
  EXPECT_EQ(t.message(), "reading catalog: too big");
  EXPECT_EQ(t.where(), "flag --size");
  EXPECT_TRUE(OkStatus().Annotate("x").ok());
}

TEST(StatusTest, EveryCodeHasAName) {
  for (int c = 0; c <= static_cast<int>(StatusCode::kInternal); ++c) {
    EXPECT_NE(StatusCodeName(static_cast<StatusCode>(c)), "UNKNOWN") << c;
  }
}

StatusOr<int> Half(int x) {
  if (x % 2) return InvalidArgumentError("odd");
  return x / 2;
}

StatusOr<int> Quarter(int x) {
  SEEDANCE_ASSIGN_OR_RETURN(int h, Half(x));
  SEEDANCE_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

Status CheckEven(int x) {
  SEEDANCE_RETURN_IF_ERROR(Half(x).status());
  return OkStatus();
}

TEST(StatusOrTest, ValueAndErrorPaths) {
  StatusOr<int> q = Quarter(8);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(*q, 2);
  StatusOr<int> bad = Quarter(6);  // 6 -> 3 -> odd
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "odd");
  EXPECT_EQ(bad.value_or(-1), -1);
  EXPECT_TRUE(CheckEven(4).ok());
  EXPECT_FALSE(CheckEven(5).ok());
}

TEST(StatusOrTest, MoveOnlyValue) {
  StatusOr<std::unique_ptr<int>> p = std::make_unique<int>(7);
  ASSERT_TRUE(p.ok());
  std::unique_ptr<int> owned = std::move(p).value();
  EXPECT_EQ(*owned, 7);
}

TEST(StatusOrTest, FromOkStatusBecomesInternalError) {
  StatusOr<int> s = OkStatus();
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), StatusCode::kInternal);
}

TEST(StatusOrDeathTest, ValueOfErrorAborts) {
  StatusOr<int> s = NotFoundError("nope");
  EXPECT_DEATH((void)s.value(), "nope");
}

}  // namespace
}  // namespace seedance::base
