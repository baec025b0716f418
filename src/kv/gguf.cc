#include "seedance/kv/gguf.h"

#include <cstring>
#include <limits>
#include <utility>

namespace seedance::kv {
namespace {

// Caps that no real model comes near; they bound what a lying header can make the reader
// allocate before the bytes run out.
constexpr uint64_t kMaxTensors = 1 << 20;
constexpr uint64_t kMaxKeys = 1 << 20;
constexpr int kMaxArrayDepth = 4;
// Array elements in all the metadata together: each becomes a GgufValue (about 100 bytes), so a
// file of N bytes could otherwise ask for about 100 N. Real vocabularies hold a few hundred
// thousand tokens and merges.
constexpr uint64_t kMaxArrayElements = uint64_t{1} << 22;
constexpr uint32_t kMaxDims = 4;

// A cursor over the file's bytes; every read is bounds-checked and a failure names the offset
// and what was being read.
class Cursor {
 public:
  Cursor(std::string_view bytes, const std::string& source) : b_(bytes), source_(source) {}

  // Takes n array elements from the metadata's budget; false when it runs out.
  bool TakeElements(uint64_t n) {
    if (n > elements_left_) return false;
    elements_left_ -= n;
    return true;
  }

  size_t at() const { return at_; }
  size_t left() const { return b_.size() - at_; }

  template <typename T>
  base::StatusOr<T> Read(std::string_view what) {
    if (left() < sizeof(T)) return Truncated(what, sizeof(T));
    T v;
    std::memcpy(&v, b_.data() + at_, sizeof(T));
    at_ += sizeof(T);
    return v;
  }

  base::StatusOr<std::string> String(std::string_view what) {
    const size_t start = at_;
    SEEDANCE_ASSIGN_OR_RETURN(const uint64_t n, Read<uint64_t>(what));
    if (n > left()) {
      return base::InvalidArgumentError(std::string(what) + ": a string of " + std::to_string(n) +
                                            " bytes at byte " + std::to_string(start) + " but " +
                                            std::to_string(left()) + " bytes remain",
                                        source_);
    }
    std::string s(b_.substr(at_, n));
    at_ += n;
    return s;
  }

  base::Status Truncated(std::string_view what, size_t need) const {
    return base::InvalidArgumentError(std::string(what) + ": truncated at byte " +
                                          std::to_string(at_) + " (needs " + std::to_string(need) +
                                          " bytes, " + std::to_string(left()) + " remain)",
                                      source_);
  }

  base::Status Error(const std::string& message) const {
    return base::InvalidArgumentError(message + " (byte " + std::to_string(at_) + ")", source_);
  }

 private:
  std::string_view b_;
  const std::string& source_;
  size_t at_ = 0;
  uint64_t elements_left_ = kMaxArrayElements;
};

// The smallest encoded size of one value of `t` (arrays and strings: their length fields), so
// an array's count can be checked against the bytes left before anything is allocated.
uint64_t MinBytes(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kString:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kArray:
      return 12;
  }
  return 1;
}

bool KnownValueType(uint32_t t) { return t <= static_cast<uint32_t>(GgufValueType::kFloat64); }

template <typename T>
base::Status ReadInteger(Cursor& c, const std::string& key, GgufValue& v) {
  SEEDANCE_ASSIGN_OR_RETURN(const T x, c.Read<T>(key));
  v.integer = static_cast<int64_t>(x);
  return base::OkStatus();
}

base::StatusOr<GgufValue> ReadValue(Cursor& c, GgufValueType type, const std::string& key,
                                    int depth) {
  GgufValue v;
  v.type = type;
  switch (type) {
    case GgufValueType::kUint8:
      SEEDANCE_RETURN_IF_ERROR(ReadInteger<uint8_t>(c, key, v));
      break;
    case GgufValueType::kInt8: {
      SEEDANCE_ASSIGN_OR_RETURN(const uint8_t x, c.Read<uint8_t>(key));
      v.integer = x < 128 ? x : static_cast<int64_t>(x) - 256;  // two's complement int8
      break;
    }
    case GgufValueType::kUint16:
      SEEDANCE_RETURN_IF_ERROR(ReadInteger<uint16_t>(c, key, v));
      break;
    case GgufValueType::kInt16:
      SEEDANCE_RETURN_IF_ERROR(ReadInteger<int16_t>(c, key, v));
      break;
    case GgufValueType::kUint32:
      SEEDANCE_RETURN_IF_ERROR(ReadInteger<uint32_t>(c, key, v));
      break;
    case GgufValueType::kInt32:
      SEEDANCE_RETURN_IF_ERROR(ReadInteger<int32_t>(c, key, v));
      break;
    case GgufValueType::kUint64: {
      SEEDANCE_ASSIGN_OR_RETURN(const uint64_t x, c.Read<uint64_t>(key));
      if (x > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        return c.Error(key + ": the uint64 " + std::to_string(x) + " is beyond int64");
      }
      v.integer = static_cast<int64_t>(x);
      break;
    }
    case GgufValueType::kInt64: {
      SEEDANCE_ASSIGN_OR_RETURN(v.integer, c.Read<int64_t>(key));
      break;
    }
    case GgufValueType::kFloat32: {
      SEEDANCE_ASSIGN_OR_RETURN(const float x, c.Read<float>(key));
      v.real = x;
      break;
    }
    case GgufValueType::kFloat64: {
      SEEDANCE_ASSIGN_OR_RETURN(v.real, c.Read<double>(key));
      break;
    }
    case GgufValueType::kBool: {
      SEEDANCE_ASSIGN_OR_RETURN(const uint8_t x, c.Read<uint8_t>(key));
      if (x > 1) return c.Error(key + ": a bool of " + std::to_string(x) + " (0 or 1 expected)");
      v.boolean = x == 1;
      break;
    }
    case GgufValueType::kString: {
      SEEDANCE_ASSIGN_OR_RETURN(v.text, c.String(key));
      break;
    }
    case GgufValueType::kArray: {
      if (depth >= kMaxArrayDepth) return c.Error(key + ": arrays nested too deeply");
      SEEDANCE_ASSIGN_OR_RETURN(const uint32_t element, c.Read<uint32_t>(key));
      if (!KnownValueType(element)) {
        return c.Error(key + ": unknown array element type " + std::to_string(element));
      }
      v.element = static_cast<GgufValueType>(element);
      SEEDANCE_ASSIGN_OR_RETURN(const uint64_t n, c.Read<uint64_t>(key));
      if (n > c.left() / MinBytes(v.element)) {
        return c.Error(key + ": an array of " + std::to_string(n) + " values cannot fit in the " +
                       std::to_string(c.left()) + " bytes that remain");
      }
      if (!c.TakeElements(n)) {
        return c.Error(key + ": the metadata's arrays hold more than " +
                       std::to_string(kMaxArrayElements) + " values in all");
      }
      v.array.reserve(n);
      for (uint64_t i = 0; i < n; ++i) {
        SEEDANCE_ASSIGN_OR_RETURN(GgufValue e, ReadValue(c, v.element, key, depth + 1));
        v.array.push_back(std::move(e));
      }
      break;
    }
  }
  return v;
}

struct TypeSize {
  uint32_t id;
  const char* name;
  int64_t block;   // values per block
  uint64_t bytes;  // bytes per block
};

// ggml's types with their block sizes (values per block, bytes per block), as the gguf package
// 0.19.0 lists them (GGML_QUANT_SIZES; tests/python/test_gguf_model.py compares): the table sizes
// every tensor, so offsets are checked even for types this reader does not dequantize.
constexpr TypeSize kTypes[] = {
    {0, "F32", 1, 4},         {1, "F16", 1, 2},         {2, "Q4_0", 32, 18},
    {3, "Q4_1", 32, 20},      {6, "Q5_0", 32, 22},      {7, "Q5_1", 32, 24},
    {8, "Q8_0", 32, 34},      {9, "Q8_1", 32, 40},      {10, "Q2_K", 256, 84},
    {11, "Q3_K", 256, 110},   {12, "Q4_K", 256, 144},   {13, "Q5_K", 256, 176},
    {14, "Q6_K", 256, 210},   {15, "Q8_K", 256, 292},   {16, "IQ2_XXS", 256, 66},
    {17, "IQ2_XS", 256, 74},  {18, "IQ3_XXS", 256, 98}, {19, "IQ1_S", 256, 50},
    {20, "IQ4_NL", 32, 18},   {21, "IQ3_S", 256, 110},  {22, "IQ2_S", 256, 82},
    {23, "IQ4_XS", 256, 136}, {24, "I8", 1, 1},         {25, "I16", 1, 2},
    {26, "I32", 1, 4},        {27, "I64", 1, 8},        {28, "F64", 1, 8},
    {29, "IQ1_M", 256, 56},   {30, "BF16", 1, 2},       {34, "TQ1_0", 256, 54},
    {35, "TQ2_0", 256, 66},   {39, "MXFP4", 32, 17},    {40, "NVFP4", 64, 36},
    {41, "Q1_0", 128, 18},
};

const TypeSize* FindType(uint32_t id) {
  for (const TypeSize& t : kTypes) {
    if (t.id == id) return &t;
  }
  return nullptr;
}

std::string_view ValueTypeName(GgufValueType t) {
  constexpr const char* kNames[] = {"uint8",  "int8",    "uint16", "int16",  "uint32",
                                    "int32",  "float32", "bool",   "string", "array",
                                    "uint64", "int64",   "float64"};
  const auto i = static_cast<uint32_t>(t);
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

bool IsInteger(GgufValueType t) {
  switch (t) {
    case GgufValueType::kUint8:
    case GgufValueType::kInt8:
    case GgufValueType::kUint16:
    case GgufValueType::kInt16:
    case GgufValueType::kUint32:
    case GgufValueType::kInt32:
    case GgufValueType::kUint64:
    case GgufValueType::kInt64:
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string GgmlTypeName(uint32_t type) {
  const TypeSize* t = FindType(type);
  return t != nullptr ? t->name : "type " + std::to_string(type);
}

uint64_t GgmlBytes(uint32_t type, int64_t count) {
  const TypeSize* t = FindType(type);
  if (t == nullptr || count < 0 || count % t->block != 0) return 0;
  const auto blocks = static_cast<uint64_t>(count / t->block);
  if (blocks > std::numeric_limits<uint64_t>::max() / t->bytes) return 0;
  return blocks * t->bytes;
}

int64_t GgufTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

base::StatusOr<GgufFile> GgufFile::Parse(std::string_view bytes, std::string source) {
  GgufFile f;
  f.bytes_ = bytes;
  f.source_ = std::move(source);
  Cursor c(bytes, f.source_);
  SEEDANCE_ASSIGN_OR_RETURN(const uint32_t magic, c.Read<uint32_t>("magic"));
  if (magic != 0x46554747) {  // "GGUF", little-endian
    return base::InvalidArgumentError("not a GGUF file (the first 4 bytes are not \"GGUF\")",
                                      f.source_);
  }
  SEEDANCE_ASSIGN_OR_RETURN(f.version_, c.Read<uint32_t>("version"));
  if (f.version_ != 2 && f.version_ != 3) {
    return base::InvalidArgumentError(
        "GGUF version " + std::to_string(f.version_) + " (2 and 3 are read)", f.source_);
  }
  SEEDANCE_ASSIGN_OR_RETURN(const uint64_t tensor_count, c.Read<uint64_t>("tensor_count"));
  SEEDANCE_ASSIGN_OR_RETURN(const uint64_t kv_count, c.Read<uint64_t>("kv_count"));
  if (tensor_count > kMaxTensors || tensor_count > c.left() / 24) {
    return c.Error("tensor_count " + std::to_string(tensor_count) +
                   " is more than the file can describe");
  }
  if (kv_count > kMaxKeys || kv_count > c.left() / 12) {
    return c.Error("kv_count " + std::to_string(kv_count) + " is more than the file can hold");
  }
  for (uint64_t i = 0; i < kv_count; ++i) {
    SEEDANCE_ASSIGN_OR_RETURN(std::string key, c.String("metadata key " + std::to_string(i)));
    SEEDANCE_ASSIGN_OR_RETURN(const uint32_t type, c.Read<uint32_t>(key));
    if (!KnownValueType(type)) return c.Error(key + ": unknown value type " + std::to_string(type));
    SEEDANCE_ASSIGN_OR_RETURN(GgufValue value,
                              ReadValue(c, static_cast<GgufValueType>(type), key, 0));
    if (!f.metadata_.emplace(key, std::move(value)).second) {
      return c.Error("the metadata key " + key + " appears twice");
    }
  }
  uint64_t alignment = 32;
  if (f.Has("general.alignment")) {
    SEEDANCE_ASSIGN_OR_RETURN(const int64_t a, f.Integer("general.alignment"));
    if (a <= 0 || a > (1 << 16) || (a & (a - 1)) != 0) {
      return base::InvalidArgumentError(
          "general.alignment " + std::to_string(a) + " is not a power of two up to 65536",
          f.source_);
    }
    alignment = static_cast<uint64_t>(a);
  }
  f.tensors_.reserve(tensor_count);
  for (uint64_t i = 0; i < tensor_count; ++i) {
    GgufTensor t;
    SEEDANCE_ASSIGN_OR_RETURN(t.name, c.String("tensor " + std::to_string(i) + " name"));
    SEEDANCE_ASSIGN_OR_RETURN(const uint32_t dims, c.Read<uint32_t>(t.name + ": n_dims"));
    if (dims == 0 || dims > kMaxDims) {
      return c.Error(t.name + ": n_dims " + std::to_string(dims) + " (1 to 4 expected)");
    }
    int64_t elements = 1;
    for (uint32_t d = 0; d < dims; ++d) {
      SEEDANCE_ASSIGN_OR_RETURN(const uint64_t n, c.Read<uint64_t>(t.name + ": shape"));
      if (n == 0 || n > (uint64_t{1} << 40) ||
          static_cast<uint64_t>(elements) > (uint64_t{1} << 50) / n) {
        return c.Error(t.name + ": dimension " + std::to_string(d) + " of " + std::to_string(n) +
                       " is empty or too large");
      }
      t.shape.push_back(static_cast<int64_t>(n));
      elements *= static_cast<int64_t>(n);
    }
    SEEDANCE_ASSIGN_OR_RETURN(t.type, c.Read<uint32_t>(t.name + ": type"));
    const TypeSize* ts = FindType(t.type);
    if (ts == nullptr)
      return c.Error(t.name + ": unknown tensor type id " + std::to_string(t.type));
    if (t.shape[0] % ts->block != 0) {
      return c.Error(t.name + ": a row of " + std::to_string(t.shape[0]) + " values is not whole " +
                     ts->name + " blocks of " + std::to_string(ts->block));
    }
    t.bytes = GgmlBytes(t.type, elements);
    SEEDANCE_ASSIGN_OR_RETURN(t.offset, c.Read<uint64_t>(t.name + ": offset"));
    if (t.offset % alignment != 0) {
      return c.Error(t.name + ": offset " + std::to_string(t.offset) + " is not a multiple of " +
                     std::to_string(alignment));
    }
    for (const GgufTensor& other : f.tensors_) {
      if (other.name == t.name) return c.Error("the tensor " + t.name + " appears twice");
    }
    f.tensors_.push_back(std::move(t));
  }
  const uint64_t data = (c.at() + alignment - 1) / alignment * alignment;
  for (GgufTensor& t : f.tensors_) {
    if (t.offset > bytes.size() || data > bytes.size() - t.offset ||
        t.bytes > bytes.size() - t.offset - data) {
      return base::InvalidArgumentError(
          t.name + ": its " + std::to_string(t.bytes) + " bytes at data offset " +
              std::to_string(t.offset) + " run past the end of the file (" +
              std::to_string(bytes.size()) + " bytes, data from byte " + std::to_string(data) + ")",
          f.source_);
    }
    t.offset += data;
  }
  return f;
}

bool GgufFile::Has(std::string_view key) const {
  return metadata_.find(std::string(key)) != metadata_.end();
}

namespace {

base::StatusOr<const GgufValue*> Find(const std::map<std::string, GgufValue>& m,
                                      std::string_view key, const std::string& source) {
  const auto it = m.find(std::string(key));
  if (it == m.end()) {
    return base::InvalidArgumentError("the metadata has no " + std::string(key), source);
  }
  return &it->second;
}

base::Status WrongType(std::string_view key, const GgufValue& v, std::string_view wanted,
                       const std::string& source) {
  return base::InvalidArgumentError(std::string(key) + " is a " +
                                        std::string(ValueTypeName(v.type)) + " (" +
                                        std::string(wanted) + " expected)",
                                    source);
}

}  // namespace

base::StatusOr<int64_t> GgufFile::Integer(std::string_view key) const {
  SEEDANCE_ASSIGN_OR_RETURN(const GgufValue* v, Find(metadata_, key, source_));
  if (!IsInteger(v->type)) return WrongType(key, *v, "an integer", source_);
  return v->integer;
}

base::StatusOr<double> GgufFile::Real(std::string_view key) const {
  SEEDANCE_ASSIGN_OR_RETURN(const GgufValue* v, Find(metadata_, key, source_));
  if (IsInteger(v->type)) return static_cast<double>(v->integer);
  if (v->type != GgufValueType::kFloat32 && v->type != GgufValueType::kFloat64) {
    return WrongType(key, *v, "a number", source_);
  }
  return v->real;
}

base::StatusOr<std::string> GgufFile::Text(std::string_view key) const {
  SEEDANCE_ASSIGN_OR_RETURN(const GgufValue* v, Find(metadata_, key, source_));
  if (v->type != GgufValueType::kString) return WrongType(key, *v, "a string", source_);
  return v->text;
}

base::StatusOr<bool> GgufFile::Boolean(std::string_view key) const {
  SEEDANCE_ASSIGN_OR_RETURN(const GgufValue* v, Find(metadata_, key, source_));
  if (v->type != GgufValueType::kBool) return WrongType(key, *v, "a bool", source_);
  return v->boolean;
}

base::StatusOr<const std::vector<GgufValue>*> GgufFile::Array(std::string_view key,
                                                              GgufValueType element) const {
  SEEDANCE_ASSIGN_OR_RETURN(const GgufValue* v, Find(metadata_, key, source_));
  const bool integers = IsInteger(element) && IsInteger(v->element);
  if (v->type != GgufValueType::kArray || (v->element != element && !integers)) {
    return WrongType(key, *v, "an array of " + std::string(ValueTypeName(element)), source_);
  }
  return &v->array;
}

base::StatusOr<const GgufTensor*> GgufFile::Tensor(std::string_view name) const {
  for (const GgufTensor& t : tensors_) {
    if (t.name == name) return &t;
  }
  return base::NotFoundError("no tensor " + std::string(name), source_);
}

base::StatusOr<std::vector<float>> GgufFile::Dequantize(const GgufTensor& t) const {
  std::vector<float> out(static_cast<size_t>(t.elements()));
  const std::span<const uint8_t> data(reinterpret_cast<const uint8_t*>(bytes_.data()) + t.offset,
                                      t.bytes);
  if (!DequantizeGgml(t.type, data, t.elements(), out.data())) {
    return base::InvalidArgumentError(t.name + " is " + GgmlTypeName(t.type) +
                                          ", which this reader does not dequantize (F32, F16, "
                                          "BF16, Q8_0, Q4_0 and Q4_1 are read)",
                                      source_);
  }
  return out;
}

}  // namespace seedance::kv
