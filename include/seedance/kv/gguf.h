// GGUF, the model file of llama.cpp and of Transformers' `gguf_file=` (features KV-1..KV-6 on
// real models): a header, typed metadata (key -> value), a tensor table and the tensors' data.
//
// The reader validates before it trusts: every length, count and offset is checked against the
// bytes there are (a truncated or lying file is an error naming the file, the byte offset and
// the field, never a crash), tensor shapes must not overflow, data must lie inside the file at
// the file's alignment. Versions 2 and 3 are read (little-endian).
//
// Tensor types dequantized to float: F32, F16, BF16, Q8_0, Q4_0, Q4_1 (ggml's block formats:
// 32 weights a block with an fp16 scale, and for Q4_1 an fp16 minimum). The other types ggml
// defines (K-quants, IQ, TQ, MXFP4, ...) are read into the table with their sizes, and
// dequantizing one is an error that names the tensor and its type; a type id ggml does not
// define is an error at parse.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"

namespace seedance::kv {

enum class GgufValueType : uint32_t {
  kUint8 = 0,
  kInt8 = 1,
  kUint16 = 2,
  kInt16 = 3,
  kUint32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUint64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

// One metadata value. Integers of every width are kept in `integer` (signed types sign-extended;
// a uint64 above INT64_MAX is refused as unrepresentable), floats in `real`, arrays in `array`
// with `element` their type.
struct GgufValue {
  GgufValueType type = GgufValueType::kUint32;
  int64_t integer = 0;
  double real = 0;
  bool boolean = false;
  std::string text;
  GgufValueType element = GgufValueType::kUint32;
  std::vector<GgufValue> array;
};

// ggml's tensor types (the ids in the file).
enum class GgmlType : uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 8,
  kBF16 = 30,
};
// "F32", "Q4_1", "Q6_K", ...; "type N" for an id the table does not know.
std::string GgmlTypeName(uint32_t type);

struct GgufTensor {
  std::string name;
  std::vector<int64_t> shape;  // ggml order: shape[0] is the innermost (row length)
  uint32_t type = 0;           // a ggml type id the reader knows the block size of
  uint64_t offset = 0;         // in the file, absolute
  uint64_t bytes = 0;          // its data's size
  int64_t elements() const;
};

class GgufFile {
 public:
  // Parses `bytes` (the whole file, which the returned object views: it must outlive it).
  // `source` names the file in errors.
  static base::StatusOr<GgufFile> Parse(std::string_view bytes, std::string source);

  uint32_t version() const { return version_; }
  const std::string& source() const { return source_; }
  const std::map<std::string, GgufValue>& metadata() const { return metadata_; }
  const std::vector<GgufTensor>& tensors() const { return tensors_; }

  // Typed metadata; errors name the file and key (missing, or of another type).
  base::StatusOr<int64_t> Integer(std::string_view key) const;
  base::StatusOr<double> Real(std::string_view key) const;  // a float, or an integer
  base::StatusOr<std::string> Text(std::string_view key) const;
  base::StatusOr<bool> Boolean(std::string_view key) const;
  base::StatusOr<const std::vector<GgufValue>*> Array(std::string_view key,
                                                      GgufValueType element) const;
  bool Has(std::string_view key) const;

  // The tensor named `name`; NotFound naming the file when there is none.
  base::StatusOr<const GgufTensor*> Tensor(std::string_view name) const;
  // Its values as float, row-major in ggml order (shape[0] fastest).
  base::StatusOr<std::vector<float>> Dequantize(const GgufTensor& tensor) const;

 private:
  std::string_view bytes_;
  std::string source_;
  uint32_t version_ = 0;
  std::map<std::string, GgufValue> metadata_;
  std::vector<GgufTensor> tensors_;
};

// The block formats' dequantization, `count` values from `data` (which must hold
// GgmlBytes(type, count) bytes; count a multiple of the block size). False for a type
// without a dequantizer here.
bool DequantizeGgml(uint32_t type, std::span<const uint8_t> data, int64_t count, float* out);
// Bytes of `count` values of `type` (block formats: whole blocks); 0 for an unknown type or a
// count that is not a whole number of blocks.
uint64_t GgmlBytes(uint32_t type, int64_t count);

}  // namespace seedance::kv
