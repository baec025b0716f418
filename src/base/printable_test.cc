#include "seedance/base/printable.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <string>

namespace seedance::base {
namespace {

TEST(PrintableTest, KeepsTextAndEscapesControls) {
  EXPECT_EQ(Printable("plain text, ünïcode, 日本, 🙂"),
            "plain text, ünïcode, 日本, 🙂");
  EXPECT_EQ(Printable(std::string("a\0b", 3)), "a\\0b");
  EXPECT_EQ(Printable("line\nnext\r\ttab\x1b[31m\x7f"), "line\\nnext\\r\\ttab\\x1b[31m\\x7f");
  EXPECT_EQ(Printable("\xc2\x85"), "\\xc2\\x85");                       // NEL, a C1 control
  EXPECT_EQ(Printable(std::string("\0\xff\xfe", 3)), "\\0\\xff\\xfe");  // not UTF-16
}

TEST(PrintableTest, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(Printable("\xe6\x97"), "\\xe6\\x97");                    // cut mid-sequence
  EXPECT_EQ(Printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(Printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(Printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // past U+10FFFF
  EXPECT_EQ(Printable("ok\x80ok"), "ok\\x80ok");
}

TEST(PrintableTest, LongInputIsCutAtACharacterWithTheCount) {
  const std::string big(1 << 20, 'x');
  const std::string p = Printable(big, 100);
  EXPECT_EQ(p, std::string(100, 'x') + "... (" + std::to_string((1 << 20) - 100) + " more bytes)");
  // A multi-byte character that would cross the bound is left out whole.
  const std::string cut = Printable("ab日本", 4);
  EXPECT_EQ(cut, "ab... (6 more bytes)");
}

// Property: whatever the bytes, the result is valid UTF-8 (a strict JSON encoder accepts it),
// has no control character, and is no longer than the bound plus the note.
TEST(PrintableTest, AnyBytesGiveBoundedPrintableUtf8) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    std::string bytes(rng() % 300, '\0');
    for (char& c : bytes) c = static_cast<char>(rng() % 256);
    const std::string p = Printable(bytes, 200);
    EXPECT_NO_THROW((void)nlohmann::json(p).dump()) << trial;
    for (unsigned char c : p) EXPECT_TRUE(c >= 0x20 && c != 0x7f) << trial;
    EXPECT_LE(p.size(), 200U + 32U);
  }
}

}  // namespace
}  // namespace seedance::base
