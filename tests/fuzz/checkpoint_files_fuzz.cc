// Fuzz target (libFuzzer): the checkpoint readers of control/ — the checkpoint file decoder
// (checkpoint_store.h) and the cold tier's frame decoder (cold_codec.h); the first byte picks.
// Checks their contract on every input: an accepted input re-encodes to itself (a checkpoint
// file) or re-encodes and decodes to the same bytes (a cold frame), and nothing else is
// accepted silently. Built by the `asan` preset; .ci/run runs it from the seeds in
// tests/fuzz/corpus/checkpoint_files/.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "seedance/control/checkpoint_store.h"
#include "seedance/control/cold_codec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::string_view in(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    auto c = seedance::control::DecodeCheckpoint(in, "fuzz");
    if (c.ok() && seedance::control::EncodeCheckpoint(c->step, c->next_sample, c->payload) != in) {
      __builtin_trap();
    }
  } else {
    auto original = seedance::control::DecodeCold(in);
    if (original.ok()) {
      const int width = static_cast<unsigned char>(in[5]);
      auto again = seedance::control::EncodeCold(*original, {.element_bytes = width});
      if (!again.ok()) __builtin_trap();
      auto back = seedance::control::DecodeCold(*again);
      if (!back.ok() || *back != *original) __builtin_trap();
    }
  }
  return 0;
}
