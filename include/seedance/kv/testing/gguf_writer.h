// Writes small GGUF files for tests and fuzz seeds (the reader is kv/gguf.h): metadata of every
// value type and tensors given as raw bytes of any ggml type, laid out as llama.cpp lays them out
// (data aligned to general.alignment, 32 by default).
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "seedance/kv/gguf.h"

namespace seedance::kv::testing {

class GgufWriter {
 public:
  void U32(const std::string& key, uint32_t v) {
    Key(key, GgufValueType::kUint32);
    Put(v);
  }
  void I32(const std::string& key, int32_t v) {
    Key(key, GgufValueType::kInt32);
    Put(v);
  }
  void F32(const std::string& key, float v) {
    Key(key, GgufValueType::kFloat32);
    Put(v);
  }
  void Bool(const std::string& key, bool v) {
    Key(key, GgufValueType::kBool);
    Put(static_cast<uint8_t>(v));
  }
  void Str(const std::string& key, const std::string& v) {
    Key(key, GgufValueType::kString);
    PutString(v);
  }
  void Strings(const std::string& key, const std::vector<std::string>& v) {
    Key(key, GgufValueType::kArray);
    Put(static_cast<uint32_t>(GgufValueType::kString));
    Put(static_cast<uint64_t>(v.size()));
    for (const std::string& s : v) PutString(s);
  }
  void I32s(const std::string& key, const std::vector<int32_t>& v) {
    Key(key, GgufValueType::kArray);
    Put(static_cast<uint32_t>(GgufValueType::kInt32));
    Put(static_cast<uint64_t>(v.size()));
    for (int32_t x : v) Put(x);
  }
  // A tensor of `shape` (ggml order) whose data is `data` (already in `type`'s encoding).
  void Tensor(const std::string& name, std::vector<uint64_t> shape, uint32_t type,
              std::string data) {
    tensors_.push_back({name, std::move(shape), type, std::move(data)});
  }
  void F32Tensor(const std::string& name, std::vector<uint64_t> shape,
                 const std::vector<float>& values) {
    std::string data(values.size() * 4, '\0');
    std::memcpy(data.data(), values.data(), data.size());
    Tensor(name, std::move(shape), static_cast<uint32_t>(GgmlType::kF32), std::move(data));
  }

  std::string Bytes(uint32_t version = 3, uint64_t alignment = 32) const {
    std::string out;
    auto put = [&out](const auto& v) { out.append(reinterpret_cast<const char*>(&v), sizeof(v)); };
    put(uint32_t{0x46554747});
    put(version);
    put(static_cast<uint64_t>(tensors_.size()));
    put(keys_);
    out += kv_;
    uint64_t offset = 0;
    std::vector<uint64_t> offsets;
    for (const auto& t : tensors_) {
      put(static_cast<uint64_t>(t.name.size()));
      out += t.name;
      put(static_cast<uint32_t>(t.shape.size()));
      for (uint64_t d : t.shape) put(d);
      put(t.type);
      put(offset);
      offsets.push_back(offset);
      offset += (t.data.size() + alignment - 1) / alignment * alignment;
    }
    out.resize((out.size() + alignment - 1) / alignment * alignment, '\0');
    const size_t data = out.size();
    for (size_t i = 0; i < tensors_.size(); ++i) {
      out.resize(data + offsets[i], '\0');
      out += tensors_[i].data;
    }
    return out;
  }

 private:
  struct Entry {
    std::string name;
    std::vector<uint64_t> shape;
    uint32_t type;
    std::string data;
  };
  template <typename T>
  void Put(T v) {
    kv_.append(reinterpret_cast<const char*>(&v), sizeof(v));
  }
  void PutString(const std::string& s) {
    Put(static_cast<uint64_t>(s.size()));
    kv_ += s;
  }
  void Key(const std::string& key, GgufValueType type) {
    ++keys_;
    PutString(key);
    Put(static_cast<uint32_t>(type));
  }
  uint64_t keys_ = 0;
  std::string kv_;
  std::vector<Entry> tensors_;
};

}  // namespace seedance::kv::testing
