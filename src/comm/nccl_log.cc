#include "seedance/comm/nccl_log.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include "seedance/base/civil_time.h"

namespace seedance::comm {
namespace {

// Bytes per element of ncclDataType_t values (nccl.h).
int DataTypeBytes(int t) {
  switch (t) {
    case 0:   // ncclInt8
    case 1:   // ncclUint8
    case 10:  // ncclFloat8e4m3
    case 11:  // ncclFloat8e5m2
      return 1;
    case 6:  // ncclFloat16
    case 9:  // ncclBfloat16
      return 2;
    case 2:  // ncclInt32
    case 3:  // ncclUint32
    case 7:  // ncclFloat32
      return 4;
    case 4:  // ncclInt64
    case 5:  // ncclUint64
    case 8:  // ncclFloat64
      return 8;
    default:
      return 0;
  }
}

// Seconds from a leading "[...]" timestamp; negative when there is none.
double Timestamp(std::string_view& line) {
  if (line.empty() || line[0] != '[') return -1;
  const size_t close = line.find(']');
  if (close == std::string_view::npos) return -1;
  const std::string ts(line.substr(1, close - 1));
  double seconds = -1;
  int y, mo, d, h, mi;
  double s;
  if (std::sscanf(ts.c_str(), "%d-%d-%d %d:%d:%lf", &y, &mo, &d, &h, &mi, &s) == 6) {
    seconds = static_cast<double>(base::UnixSeconds(y, mo, d, h, mi, 0)) + s;
  } else {
    char* end = nullptr;
    const double v = std::strtod(ts.c_str(), &end);
    if (end && *end == '\0' && !ts.empty()) seconds = v;
  }
  if (seconds >= 0) {
    line.remove_prefix(close + 1);
    while (!line.empty() && line[0] == ' ') line.remove_prefix(1);
  }
  return seconds;
}

struct Collective {
  std::string op;
  std::string process;  // host:pid
  std::string comm;
  int64_t bytes = 0;
  int64_t count = 0;
  int nranks = 0;
  int line = 0;
  double time = -1;
  double gap = -1;  // seconds to the next collective of the same process and comm
};

}  // namespace

base::StatusOr<base::Report> AnalyzeNcclLog(std::string_view text, const std::string& file) {
  static const std::regex kPrefix(R"(^(\S+?):(\d+):(\d+) \[(\d+)\] NCCL INFO (.*)$)");
  static const std::regex kVersion(R"(^NCCL version (\S+))");
  static const std::regex kInit(
      R"(comm (0x[0-9a-f]+) rank (\d+) nranks (\d+) cudaDev (\d+).*Init COMPLETE)");
  static const std::regex kRing(R"(^Channel (\d+)/(\d+) :((?:\s+\d+)+)\s*$)");
  static const std::regex kConnection(
      R"(^(?:Channel|Ring) (\d+)(?:/\d+)? : (\d+)(?:\[[0-9a-f]+\])? -> (\d+)(?:\[[0-9a-f]+\])?.* via (\S+))");
  static const std::regex kTrees(R"(^Trees((?: \[\d+\] \S+)+))");
  static const std::regex kColl(
      R"(^(\w+): opCount ([0-9a-f]+) .*count (\d+) datatype (\d+) .*comm (0x[0-9a-f]+) \[nranks=(\d+)\])");

  base::Report r;
  r["file"] = file;
  std::string version;
  std::map<std::string, base::Report> comms;  // comm address -> description
  std::map<int, std::string> rings;           // channel -> rank order (first seen)
  int channels = 0, trees = 0;
  std::map<std::string, int64_t> transports;  // transport -> connections
  std::vector<Collective> colls;
  int nccl_lines = 0, line_no = 0;
  size_t pos = 0;
  std::smatch m;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const double ts = Timestamp(raw);
    const std::string line(raw);
    if (!std::regex_match(line, m, kPrefix)) continue;
    ++nccl_lines;
    const std::string process = m[1].str() + ":" + m[2].str();
    const std::string msg = m[5].str();
    std::smatch x;
    if (std::regex_search(msg, x, kVersion)) {
      version = x[1].str();
    } else if (std::regex_search(msg, x, kInit)) {
      comms[x[1].str() + "@" + process] = {{"comm", x[1].str()},
                                           {"process", process},
                                           {"rank", std::stoi(x[2].str())},
                                           {"nranks", std::stoi(x[3].str())},
                                           {"cuda_dev", std::stoi(x[4].str())}};
    } else if (std::regex_match(msg, x, kRing)) {
      const int ch = std::stoi(x[1].str());
      channels = std::max(channels, std::stoi(x[2].str()));
      std::string order = x[3].str();
      order.erase(0, order.find_first_not_of(' '));
      std::string squeezed;
      for (char c : order) {
        if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
      }
      rings.emplace(ch, squeezed);
    } else if (std::regex_search(msg, x, kConnection)) {
      ++transports[x[4].str()];
    } else if (std::regex_search(msg, x, kTrees)) {
      ++trees;
    } else if (std::regex_search(msg, x, kColl)) {
      Collective c;
      c.op = x[1].str();
      c.process = process;
      c.comm = x[5].str();
      c.count = std::stoll(x[3].str());
      c.bytes = c.count * DataTypeBytes(std::stoi(x[4].str()));
      c.nranks = std::stoi(x[6].str());
      c.line = line_no;
      c.time = ts;
      colls.push_back(c);
    }
  }
  if (nccl_lines == 0) {
    return base::InvalidArgumentError(
        "no 'NCCL INFO' lines (was the job run with NCCL_DEBUG=INFO?)", file);
  }
  // Gaps between consecutive collectives of one process and communicator.
  std::map<std::string, size_t> last;
  bool timed = false;
  for (size_t i = 0; i < colls.size(); ++i) {
    const std::string key = colls[i].process + "/" + colls[i].comm;
    if (auto it = last.find(key);
        it != last.end() && colls[i].time >= 0 && colls[it->second].time >= 0) {
      colls[it->second].gap = colls[i].time - colls[it->second].time;
      timed = true;
    }
    last[key] = i;
  }
  r["nccl_version"] = version.empty() ? base::Report(nullptr) : base::Report(version);
  r["nccl_lines"] = nccl_lines;
  r["communicators"] = base::Report::array();
  for (auto& [_, c] : comms) r["communicators"].push_back(c);
  r["channels"] = channels;
  r["rings"] = base::Report::array();
  for (const auto& [ch, order] : rings) r["rings"].push_back({{"channel", ch}, {"ranks", order}});
  r["trees"] = trees;
  r["transports"] = base::Report::object();
  for (const auto& [t, n] : transports) r["transports"][t] = n;
  std::map<std::string, std::pair<int64_t, int64_t>> per_op;  // calls, bytes
  for (const auto& c : colls) {
    per_op[c.op].first += 1;
    per_op[c.op].second += c.bytes;
  }
  r["collectives"] = base::Report::array();
  for (const auto& [op, v] : per_op) {
    r["collectives"].push_back({{"op", op}, {"calls", v.first}, {"bytes", v.second}});
  }
  std::vector<const Collective*> ranked;
  for (const auto& c : colls) {
    if (!timed || c.gap >= 0) ranked.push_back(&c);
  }
  std::stable_sort(ranked.begin(), ranked.end(), [&](const Collective* a, const Collective* b) {
    return timed ? a->gap > b->gap : a->bytes > b->bytes;
  });
  r["ranked_by"] = timed ? "gap_to_next_ms (an upper bound of the duration)" : "bytes";
  base::Report top = base::Report::array();
  for (size_t i = 0; i < ranked.size() && i < 10; ++i) {
    const Collective& c = *ranked[i];
    base::Report e = {{"op", c.op},        {"line", c.line},   {"process", c.process},
                      {"comm", c.comm},    {"count", c.count}, {"bytes", c.bytes},
                      {"nranks", c.nranks}};
    if (timed) e["gap_to_next_ms"] = c.gap * 1e3;
    top.push_back(e);
  }
  r[timed ? "slowest" : "largest"] = top;
  return r;
}

}  // namespace seedance::comm
