#include "seedance/control/decision_record.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace seedance::control {
namespace {

Decision GrowDecision(int64_t step, bool applied) {
  Decision d;
  d.time_s = 1764720000.5;
  d.step = step;
  d.controller = "batch";
  d.action = "grow";
  d.applied = applied;
  d.reason = "memory 0.41 < 0.65 for 3 steps: 16 -> 32";
  d.inputs = {{"memory_share", 0.41}, {"samples_per_s", std::nan("")}};
  return d;
}

TEST(DecisionRecordTest, JsonLineHasTheFieldsInOrder) {
  const std::string line = DecisionJsonLine(GrowDecision(120, true));
  ASSERT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1);  // one line
  EXPECT_EQ(line.rfind("{\"time\":1764720000.5,\"step\":120,\"controller\":\"batch\"", 0), 0U);
  const auto j = nlohmann::json::parse(line);
  EXPECT_EQ(j["action"], "grow");
  EXPECT_EQ(j["applied"], true);
  EXPECT_DOUBLE_EQ(j["inputs"]["memory_share"].get<double>(), 0.41);
  EXPECT_TRUE(j["inputs"]["samples_per_s"].is_null());  // NaN is not JSON
}

TEST(DecisionRecordTest, AppendsLinesFromManyThreadsWhole) {
  const std::string path = ::testing::TempDir() + "/decisions_" + std::to_string(getpid());
  std::remove(path.c_str());
  {
    auto recorder = DecisionRecorder::Open(path);
    ASSERT_TRUE(recorder.ok());
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 100; ++i) {
          ASSERT_TRUE((*recorder)->Record(GrowDecision(t * 1000 + i, t % 2 == 0)).ok());
        }
      });
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ((*recorder)->recorded(), 400);
  }
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    ++lines;
  }
  EXPECT_EQ(lines, 400);
  // Reopening appends.
  ASSERT_TRUE((*DecisionRecorder::Open(path))->Record(GrowDecision(1, true)).ok());
  std::ifstream again(path);
  std::stringstream all;
  all << again.rdbuf();
  const std::string text = all.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 401);
  std::remove(path.c_str());
}

TEST(DecisionRecordTest, PrometheusCountsDecisionsAndSettings) {
  auto recorder = *DecisionRecorder::Open("");
  ASSERT_TRUE(recorder->Record(GrowDecision(1, true)).ok());
  ASSERT_TRUE(recorder->Record(GrowDecision(2, true)).ok());
  ASSERT_TRUE(recorder->Record(GrowDecision(3, false)).ok());
  ASSERT_TRUE(recorder->SetSetting("batch", "size", 32).ok());
  ASSERT_TRUE(recorder->SetSetting("checkpoint", "interval_steps", 100).ok());
  const std::string text = recorder->RenderPrometheus();
  EXPECT_NE(text.find("seedance_control_decisions_total{controller=\"batch\",action=\"grow\","
                      "applied=\"true\"} 2\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("applied=\"false\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("seedance_control_setting{controller=\"batch\",setting=\"size\"} 32\n"),
            std::string::npos);
  EXPECT_NE(text.find("# TYPE seedance_control_setting gauge\n"), std::string::npos);
}

TEST(DecisionRecordTest, RejectsNamesThatWouldNeedEscaping) {
  auto recorder = *DecisionRecorder::Open("");
  Decision d = GrowDecision(1, true);
  d.controller = "Batch\"x";
  EXPECT_FALSE(recorder->Record(d).ok());
  EXPECT_FALSE(recorder->SetSetting("batch", "", 1).ok());
  EXPECT_EQ(recorder->recorded(), 0);
  EXPECT_FALSE(DecisionRecorder::Open("/nonexistent-dir/x.jsonl").ok());
}

}  // namespace
}  // namespace seedance::control
