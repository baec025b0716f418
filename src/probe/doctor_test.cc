#include "seedance/probe/doctor.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "seedance/base/fake_env.h"

namespace seedance::probe {
namespace {

Version V(const std::string& text) { return ParseVersion(text).value(); }

TEST(DoctorTest, VersionsParseAndCompareComponentByComponent) {
  EXPECT_EQ(V("535.104.05").parts, (std::vector<int>{535, 104, 5}));
  EXPECT_EQ(V("2.13.0+cpu").text, "2.13.0");
  EXPECT_EQ(V("12").parts, std::vector<int>{12});
  EXPECT_FALSE(ParseVersion("v12").has_value());
  EXPECT_FALSE(ParseVersion("").has_value());
  EXPECT_EQ(V("8.").text, "8");
  // Exhaustively over small versions: the comparison on n components is the lexicographic
  // order of the first n components, missing ones 0.
  for (int a = 0; a < 27; ++a) {
    for (int b = 0; b < 27; ++b) {
      const Version x =
          V(std::to_string(a / 9) + "." + std::to_string(a / 3 % 3) + "." + std::to_string(a % 3));
      const Version y = V(std::to_string(b / 9) + "." + std::to_string(b / 3 % 3));
      for (size_t n = 1; n <= 3; ++n) {
        std::vector<int> px(x.parts.begin(), x.parts.begin() + static_cast<long>(n));
        std::vector<int> py = y.parts;
        py.resize(n, 0);
        const int want = px < py ? -1 : (px == py ? 0 : 1);
        EXPECT_EQ(CompareVersions(x, y, n), want) << x.text << " " << y.text << " " << n;
      }
    }
  }
}

Problem Row(const std::string& when) {
  auto rows = ParseKnownProblems(
      "problems:\n  - {id: r, when: \"" + when + "\", symptom: s, fix: f, source: x}\n", "t.yaml");
  EXPECT_TRUE(rows.ok()) << rows.status().ToString();
  return rows.ok() ? rows->at(0) : Problem{};
}

Stack Of(std::initializer_list<std::pair<const char*, const char*>> found) {
  Stack s;
  for (const auto& [name, version] : found) s[name] = Found{V(version), {"somewhere"}};
  return s;
}

TEST(DoctorTest, ClausesCompareOnTheirPrecision) {
  const Stack s = Of({{"driver", "470.199.02"},
                      {"cuda_runtime", "12.2.140"},
                      {"cudnn", "8.7.0"},
                      {"torch_cudnn", "9.1.0.70"},
                      {"cublas", "12.1.3.1"}});
  std::vector<std::string> because;
  EXPECT_TRUE(Matches(Row("cuda_runtime.major == 12 and driver < 525"), s, &because));
  EXPECT_EQ(because,
            (std::vector<std::string>{"cuda_runtime 12.2.140 == 12", "driver 470.199.02 < 525"}));
  EXPECT_FALSE(Matches(Row("cuda_runtime.major == 13 and driver < 580"), s, nullptr));
  EXPECT_TRUE(Matches(Row("cudnn == 8.7"), s, nullptr));  // any 8.7.x
  EXPECT_TRUE(Matches(Row("cudnn == 8.7.0"), s, nullptr));
  EXPECT_FALSE(Matches(Row("cudnn == 8.7.1"), s, nullptr));
  EXPECT_TRUE(Matches(Row("cudnn.major != torch_cudnn.major"), s, &because));
  EXPECT_EQ(because, std::vector<std::string>{"cudnn 8.7.0 != torch_cudnn 9.1.0.70"});
  EXPECT_TRUE(Matches(Row("cublas.minor < cuda_runtime.minor"), s, nullptr));
  EXPECT_FALSE(Matches(Row("nccl.minor < cuda_runtime.minor"), s, nullptr));  // nccl not found
  EXPECT_TRUE(Matches(Row("nccl missing and driver present"), s, &because));
  EXPECT_EQ(because, (std::vector<std::string>{"nccl missing", "driver 470.199.02 present"}));
}

TEST(DoctorTest, TheTableIsCheckedWithFileLineAndKey) {
  ASSERT_TRUE(ParseKnownProblems(KnownProblemsYaml(), "known_problems.yaml").ok());
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"problems:\n  - {id: a, when: \"cudnn ~ 8\", symptom: s, fix: f, source: x}\n",
       "t.yaml:2: problems[0].when"},
      {"problems:\n  - {id: a, when: \"cudn == 8\", symptom: s, fix: f, source: x}\n", "cudn"},
      {"problems:\n  - {id: a, when: \"cudnn == eight\", symptom: s, fix: f, source: x}\n",
       "eight"},
      {"problems:\n  - {id: a, when: \"cudnn\", symptom: s, fix: f, source: x}\n", "COMPONENT"},
      {"problems:\n  - {id: a, when: \"cudnn present\", symptom: s, fix: f}\n", "source"},
      {"problems:\n  - {id: a, when: \"cudnn present\", symptom: s, fix: f, source: x, why: y}\n",
       "why"},
      {"problems:\n  - {id: a, when: \"cudnn present\", symptom: s, fix: f, source: x}\n"
       "  - {id: a, when: \"nccl present\", symptom: s, fix: f, source: x}\n",
       "used twice"},
  };
  for (const auto& [yaml, want] : bad) {
    auto r = ParseKnownProblems(yaml, "t.yaml");
    ASSERT_FALSE(r.ok()) << yaml;
    EXPECT_NE(r.status().ToString().find(want), std::string::npos) << r.status().ToString();
  }
}

// A fake machine: the driver, CUDA 12.2 libraries with the versions in their names, cuDNN's
// header, a virtual environment with a CUDA build of torch and its cuDNN wheel.
void FakeGpuMachine(base::FakeEnv& env, const std::string& root, const std::string& driver) {
  env.SetFile(root + "/proc/driver/nvidia/version",
              "NVRM version: NVIDIA UNIX x86_64 Kernel Module  " + driver +
                  "  Sat Aug 19 01:15:15 UTC 2023\nGCC version:  gcc version 12.2.0\n");
  const std::string lib = root + "/usr/local/cuda/lib64/";
  for (const char* f : {"libcudart.so.12", "libcudart.so.12.2.140", "libcublas.so.12.2.5.6",
                        "libcublasLt.so.12.2.5.6", "libcudnn.so.8", "libcudnn_ops_infer.so.8"}) {
    env.SetFile(lib + f, "");
  }
  env.SetFile(root + "/usr/include/cudnn_version.h",
              "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 7\n#define CUDNN_PATCHLEVEL 0\n");
  env.SetFile(root + "/usr/lib/x86_64-linux-gnu/libnccl.so.2.18.3", "");
  const std::string sp = root + "/venv/lib/python3.11/site-packages/";
  env.SetFile(sp + "torch-2.1.0.dist-info/METADATA",
              "Metadata-Version: 2.1\nName: torch\n"
              "Version: 2.1.0+cu121\n\nlong text\n");
  env.SetFile(sp + "torch/version.py",
              "__version__ = '2.1.0+cu121'\ncuda: Optional[str] = '12.1'\n");
  env.SetFile(sp + "nvidia_cudnn_cu12-8.9.2.26.dist-info/METADATA",
              "Name: nvidia-cudnn-cu12\nVersion: 8.9.2.26\n");
  env.SetFile(sp + "nvidia_nccl_cu12-2.18.1.dist-info/METADATA",
              "Name: nvidia-nccl-cu12\nVersion: 2.18.1\n");
}

TEST(DoctorTest, FindsAFakeStackAndTheNotesProblem) {
  base::FakeEnv env;
  FakeGpuMachine(env, "/fake", "535.104.05");
  DoctorOptions o;
  o.root = "/fake";
  o.python_prefixes = {"/venv"};
  const Stack s = FindStack(env, o);
  auto at = [&](const char* c) { return s.count(c) ? s.at(c).version.text : "-"; };
  EXPECT_EQ(at("driver"), "535.104.05");
  EXPECT_EQ(at("cuda_runtime"), "12.2.140");
  EXPECT_EQ(at("cublas"), "12.2.5.6");
  EXPECT_EQ(at("cudnn"), "8.7.0");  // the header is more precise than libcudnn.so.8
  EXPECT_EQ(s.at("cudnn").where.size(), 2U);
  EXPECT_EQ(at("nccl"), "2.18.3");
  EXPECT_EQ(at("torch"), "2.1.0");
  EXPECT_EQ(at("torch_cuda"), "12.1");
  EXPECT_EQ(at("torch_cudnn"), "8.9.2.26");
  EXPECT_EQ(at("transformers"), "-");
  const auto table = ParseKnownProblems(KnownProblemsYaml(), "known_problems.yaml").value();
  const DoctorReport d = Diagnose(s, table);
  std::vector<std::string> ids;
  for (const auto& [p, because] : d.matched) ids.push_back(p->id);
  EXPECT_EQ(ids, std::vector<std::string>{"notes-cudnn-8.7.0"});
  const base::Report r = DoctorToReport(d);
  EXPECT_TRUE(r["driver_found"].get<bool>());
  EXPECT_EQ(r["summary"].get<std::string>().rfind("1 known problem matches", 0), 0U);
}

TEST(DoctorTest, AnOldDriverUnderCuda12IsNamed) {
  base::FakeEnv env;
  FakeGpuMachine(env, "", "470.199.02");
  DoctorOptions o;
  o.python_prefixes = {"/venv"};
  const auto table = ParseKnownProblems(KnownProblemsYaml(), "known_problems.yaml").value();
  const DoctorReport d = Diagnose(FindStack(env, o), table);
  std::vector<std::string> ids;
  for (const auto& [p, because] : d.matched) ids.push_back(p->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"driver-too-old-for-cuda-12",
                                           "torch-cuda-12-driver-too-old", "notes-cudnn-8.7.0"}));
}

TEST(DoctorTest, AMachineWithoutAGpuStackSaysSoAndMatchesNothing) {
  base::FakeEnv env;
  env.SetFile("/venv/lib/python3.11/site-packages/torch-2.13.0.dist-info/METADATA",
              "Name: torch\nVersion: 2.13.0+cpu\n");
  env.SetFile("/venv/lib/python3.11/site-packages/torch/version.py",
              "__version__ = '2.13.0+cpu'\ncuda: Optional[str] = None\n");
  DoctorOptions o;
  o.python_prefixes = {"/venv"};
  const auto table = ParseKnownProblems(KnownProblemsYaml(), "known_problems.yaml").value();
  const DoctorReport d = Diagnose(FindStack(env, o), table);
  EXPECT_FALSE(d.driver);
  EXPECT_FALSE(d.cuda_libraries);
  EXPECT_TRUE(d.matched.empty());
  const std::string summary = DoctorToReport(d)["summary"].get<std::string>();
  EXPECT_NE(summary.find("no GPU software stack on this machine"), std::string::npos) << summary;
  EXPECT_NE(summary.find("PyTorch 2.13.0 is a CPU build"), std::string::npos) << summary;
  // A build machine: the CUDA toolkit's libraries, no driver.
  env.SetFile("/usr/local/cuda/lib64/libcudart.so.13", "");
  const DoctorReport build = Diagnose(FindStack(env, o), table);
  EXPECT_FALSE(build.driver);
  EXPECT_TRUE(build.cuda_libraries);
  const std::string said = DoctorToReport(build)["summary"].get<std::string>();
  EXPECT_NE(said.find("no NVIDIA driver on this machine"), std::string::npos) << said;
  EXPECT_NE(said.find("CUDA libraries only: CUDA runtime 13"), std::string::npos) << said;
}

// A driver version file that exists but cannot be read, or does not hold a version, makes the
// driver "unknown", never "no driver".
TEST(DoctorTest, AnUnreadableDriverFileIsUnknownNotAbsent) {
  const auto table = ParseKnownProblems(KnownProblemsYaml(), "known_problems.yaml").value();
  DoctorOptions o;
  {
    base::FakeEnv env;
    env.SetFile("/proc/driver/nvidia/version", "NVRM version: ...");
    env.FailPath("/proc/driver/nvidia/version",
                 base::IoError("cannot open: Permission denied", "/proc/driver/nvidia/version"));
    std::vector<std::string> unreadable;
    const Stack s = FindStack(env, o, &unreadable);
    ASSERT_EQ(unreadable.size(), 1U);
    EXPECT_NE(unreadable[0].find("Permission denied"), std::string::npos);
    const DoctorReport d = Diagnose(s, table, unreadable);
    EXPECT_FALSE(d.driver);
    const base::Report r = DoctorToReport(d);
    const std::string summary = r["summary"].get<std::string>();
    EXPECT_NE(summary.find("an NVIDIA driver is installed but its version is unknown"),
              std::string::npos)
        << summary;
    EXPECT_EQ(summary.find("no NVIDIA driver"), std::string::npos) << summary;
    EXPECT_EQ(r["unreadable"].size(), 1U);
  }
  {
    base::FakeEnv env;
    env.SetFile("/sys/module/nvidia/version", "garbage\n");
    std::vector<std::string> unreadable;
    const Stack s = FindStack(env, o, &unreadable);
    const DoctorReport d = Diagnose(s, table, unreadable);
    const std::string summary = DoctorToReport(d)["summary"].get<std::string>();
    EXPECT_NE(summary.find("version is unknown (/sys/module/nvidia/version: not a driver version)"),
              std::string::npos)
        << summary;
  }
}

}  // namespace
}  // namespace seedance::probe
