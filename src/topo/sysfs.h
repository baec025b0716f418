// Small readers for sysfs-style files, shared by discovery and the affinity
// check. Each one records a note instead of failing, so that a garbled file
// degrades one field, never the whole report.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/topo/topology.h"  // kMaxCpus

namespace seedance::topo::internal {

// Collects the notes of one discovery pass.
class Notes {
 public:
  void Add(std::string note) { notes_.push_back(std::move(note)); }
  std::vector<std::string> Take() { return std::move(notes_); }

 private:
  std::vector<std::string> notes_;
};

// The file's text without surrounding white space; nullopt when it does not
// exist (no note: absence is normal) or cannot be read (a note).
std::optional<std::string> ReadTrimmed(base::Env& env, const std::string& path, Notes& notes);

// An integer file (decimal, or hex with 0x). nullopt and a note on garbage.
std::optional<int64_t> ReadInteger(base::Env& env, const std::string& path, Notes& notes);

// A CPU list file ("0-3,8"). nullopt and a note on garbage.
std::optional<std::vector<int>> ReadCpuList(base::Env& env, const std::string& path, Notes& notes,
                                            int limit = kMaxCpus);

// Joins `dir` and a relative link `target`, folding "." and "..".
std::string JoinLink(const std::string& dir, const std::string& target);

// The PCI part of a resolved sysfs device path: the host bridge ("pci0000:17")
// followed by every PCI function ("0000:17:00.0", ...) on the way down.
// Empty when the path holds no PCI host bridge.
std::vector<std::string> PciChain(const std::string& resolved_path);

// True for "0000:17:00.0".
bool IsPciAddress(const std::string& s);

}  // namespace seedance::topo::internal
