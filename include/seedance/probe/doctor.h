// The environment doctor (feature PROBE-5; `seedancectl doctor`): which versions of the GPU
// software stack a machine has, checked against a table of known problems.
//
// What is found (FindStack), every path under `root` ("/" normally; a test's fake tree):
//   driver         /proc/driver/nvidia/version ("Kernel Module ... 535.104.05"), else
//                  /sys/module/nvidia/version, else libcuda.so.VERSION in a library directory
//   cuda_runtime   libcudart.so.VERSION, else /usr/local/cuda/version.json
//   cudnn          include/cudnn_version.h (CUDNN_MAJOR, _MINOR, _PATCHLEVEL), else libcudnn.so.V
//   cublas         libcublas.so.VERSION
//   nccl           include/nccl.h (NCCL_MAJOR, _MINOR, _PATCH), else libnccl.so.VERSION
//   torch, transformers   the Python packages' dist-info METADATA ("Version:")
//   torch_cuda     the CUDA torch was built for (torch/version.py `cuda`; absent: a CPU build)
//   torch_cudnn, torch_nccl   the cuDNN and NCCL wheels torch brings (nvidia-cudnn-cu*,
//                  nvidia-nccl-cu* dist-info)
// Library directories: LD_LIBRARY_PATH, those listed in /etc/ld.so.conf.d/*.conf, and the usual
// ones (/usr/lib/x86_64-linux-gnu, /usr/lib64, /usr/local/cuda/lib64, ...). Python packages:
// the site-packages of each `python_prefixes` entry (a virtual environment or an installation
// prefix) and the system's /usr/lib/python3*/dist-packages and /usr/local/lib/python3*.
// Of several copies of a library, the newest version is reported, with every place it was found.
//
// The table (known_problems.yaml, compiled in; `doctor --table FILE` reads another) lists rows
// of {id, when, symptom, fix, source}. `when` is clauses joined by " and ", all of which must hold:
//   COMPONENT OP VERSION      e.g. "driver < 525", "cudnn == 8.7.0", "cuda_runtime.major == 12"
//   COMPONENT OP COMPONENT    e.g. "cublas.minor < cuda_runtime.minor", "cudnn.major !=
//   torch_cudnn.major" COMPONENT missing | COMPONENT present
// OP is one of == != < <= > >=. Versions compare numerically, component by component, on as
// many components as the literal has ("== 8.7" holds for 8.7.0 and 8.7.4); a `.major` or
// `.minor` suffix keeps one or two components. A clause naming a component that was not found
// is false (except `missing`).
//
// Thread safety: pure functions of the Env they are given.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/env.h"
#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::probe {

// A dotted version: "535.104.05" -> {535, 104, 5}; "12.1" -> {12, 1}. Parsing stops at the first
// character that is neither a digit nor a dot between digits ("2.13.0+cpu" -> {2, 13, 0}).
struct Version {
  std::vector<int> parts;
  std::string text;  // as found
};
std::optional<Version> ParseVersion(std::string_view text);
// <0, 0, >0 comparing the first `n` components (missing ones count as 0).
int CompareVersions(const Version& a, const Version& b, size_t n);

struct Found {
  Version version;
  std::vector<std::string> where;  // files it was read from (under the root), newest first
};
using Stack = std::map<std::string, Found, std::less<>>;  // by component name

struct DoctorOptions {
  std::string root = "/";
  std::vector<std::string> python_prefixes;  // e.g. a virtual environment's directory
};
// Never fails: what cannot be read is not found. `unreadable`, when given, gets "PATH: why" for
// each version file that exists but could not be read or parsed (a driver file readable only by
// root, say), so that the report says "unknown", not "absent".
Stack FindStack(base::Env& env, const DoctorOptions& options,
                std::vector<std::string>* unreadable = nullptr);
// The Python environments a user means by default: $VIRTUAL_ENV and $CONDA_PREFIX, when set.
std::vector<std::string> DefaultPythonPrefixes(base::Env& env);

struct Problem {
  std::string id, symptom, fix, source;
  std::vector<std::string> when;
};
// The compiled-in table's text, and a parse that checks every clause (errors name file, line, key).
std::string_view KnownProblemsYaml();
base::StatusOr<std::vector<Problem>> ParseKnownProblems(std::string_view yaml,
                                                        const std::string& file);

// Whether the row's every clause holds on the stack; `because` gets each clause with the
// versions it compared ("cudnn 8.7.0 == 8.7.0").
bool Matches(const Problem& problem, const Stack& stack, std::vector<std::string>* because);

struct DoctorReport {
  Stack stack;
  std::vector<std::pair<const Problem*, std::vector<std::string>>> matched;
  bool driver = false;                  // an NVIDIA driver was found
  bool cuda_libraries = false;          // a CUDA runtime, cuDNN, cuBLAS or NCCL library was found
  std::vector<std::string> unreadable;  // FindStack's: files present but not read
};
DoctorReport Diagnose(const Stack& stack, const std::vector<Problem>& table,
                      std::vector<std::string> unreadable = {});
// {summary, driver_found, cuda_libraries_found, components: [{component, version, where}],
// problems: [{id, because, symptom, fix, source}]}; the summary says plainly when there is no
// driver (GPU programs cannot run) or no GPU software at all.
base::Report DoctorToReport(const DoctorReport& report);

}  // namespace seedance::probe
