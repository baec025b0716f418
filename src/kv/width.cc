#include "seedance/kv/width.h"

namespace seedance::kv {

std::string_view KvWidthName(KvWidth width) { return base::EnumName(kKvWidthNames, width); }

std::vector<std::string> KvWidthNames(bool quantized_only) {
  std::vector<std::string> out;
  for (const auto& [width, name] : kKvWidthNames) {
    if (!quantized_only || width != KvWidth::kFp32) out.emplace_back(name);
  }
  return out;
}

std::string QuantizedKvWidthList() {
  const std::vector<std::string> names = KvWidthNames(/*quantized_only=*/true);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += names[i];
  }
  return out;
}

base::StatusOr<KvWidth> ParseKvWidth(std::string_view text, std::string_view where) {
  return base::ParseEnum(kKvWidthNames, text, where);
}

int KvCodeBits(KvWidth width) {
  switch (width) {
    case KvWidth::kFp32:
      return 32;
    case KvWidth::kInt8:
    case KvWidth::kFp8:
    case KvWidth::kAdaptive:
      return 8;
    case KvWidth::kInt6:
      return 6;
    case KvWidth::kInt5:
      return 5;
    case KvWidth::kInt4:
      return 4;
    case KvWidth::kInt2:
      return 2;
  }
  return 32;
}

}  // namespace seedance::kv
