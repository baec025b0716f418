#include "seedance/kv/width.h"

namespace seedance::kv {

std::string_view KvWidthName(KvWidth width) { return base::EnumName(kKvWidthNames, width); }

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
