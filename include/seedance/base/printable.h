// Input echoed in a message (an error line, an HTTP error body) made safe to print: bounded in
// length, every byte visible, valid UTF-8. A megabyte-long field, a control character, a NUL or
// a cut multi-byte sequence in a user's input must not flood, garble or break the terminal, a
// log line or a JSON encoder that reads the message.
//
// Printable(text, max_bytes):
//   - valid UTF-8 sequences of printable characters are kept as they are;
//   - C0 controls, DEL and C1 controls are written as \n, \r, \t, \0 or \xNN, a backslash as is;
//   - a byte that does not start a valid, shortest-form UTF-8 sequence is written as \xNN;
//   - past max_bytes of output, the rest is dropped at a character boundary and
//     "... (N more bytes)" is appended.
//
// Thread safety: a pure function.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace seedance::base {

inline constexpr size_t kPrintableMaxBytes = 1024;

std::string Printable(std::string_view text, size_t max_bytes = kPrintableMaxBytes);

}  // namespace seedance::base
