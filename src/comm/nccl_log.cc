#include "seedance/comm/nccl_log.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "seedance/base/civil_time.h"
#include "seedance/base/parse.h"

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
  const std::string_view ts = line.substr(1, close - 1);
  double seconds = -1;
  if (const std::optional<int64_t> civil = base::ParseCivilSeconds(ts)) {
    // "YYYY-MM-DD HH:MM:SS" with an optional fraction of a second.
    const std::string_view frac = ts.substr(19);
    if (frac.empty()) {
      seconds = static_cast<double>(*civil);
    } else if (frac[0] == '.' && frac.size() > 1 &&
               frac.find_first_not_of("0123456789", 1) == std::string_view::npos) {
      seconds = static_cast<double>(*civil) +
                base::ParseFiniteDouble("0" + std::string(frac)).value_or(0.0);
    }
  } else if (auto v = base::ParseFiniteDouble(ts); v && *v >= 0) {
    seconds = *v;  // seconds since some start, as some launchers print them
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

// The message patterns below are read by hand, left to right, in time linear in the line: a
// regular-expression engine that backtracks by recursion ran out of stack on real 8,192-rank
// ring lines. Each helper consumes from `s` only when it matches.

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHex(char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

bool Eat(std::string_view& s, std::string_view literal) {
  if (!s.starts_with(literal)) return false;
  s.remove_prefix(literal.size());
  return true;
}

// Leading decimal digits as a string (empty when there are none).
std::string_view Digits(std::string_view& s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  const std::string_view out = s.substr(0, n);
  s.remove_prefix(n);
  return out;
}

// "0x" and lowercase hex digits, e.g. a communicator address.
std::string_view HexAddress(std::string_view& s) {
  if (!s.starts_with("0x")) return {};
  size_t n = 2;
  while (n < s.size() && IsHex(s[n])) ++n;
  if (n == 2) return {};
  const std::string_view out = s.substr(0, n);
  s.remove_prefix(n);
  return out;
}

// A number that must fit the field it fills; out of range is an error that names the line.
base::StatusOr<int64_t> Number(std::string_view digits, int64_t max, std::string_view what,
                               const std::string& where) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || v > max) {
    return base::InvalidArgumentError(
        std::string(what) + " '" + std::string(digits.substr(0, 40)) + "' is out of range", where);
  }
  return v;
}

constexpr int64_t kMaxRanks = int64_t{1} << 24;  // NCCL's rank and channel numbers are ints
constexpr int64_t kMaxCount = int64_t{1} << 55;  // elements: bytes stay below 2^58

// "host:pid:tid [dev] NCCL INFO msg": host may itself hold ':'; the last two ':' fields are the
// pid and the thread id.
bool SplitPrefix(std::string_view line, std::string& process, std::string_view& msg) {
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return false;
  const std::string_view id = line.substr(0, space);
  const size_t c2 = id.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return false;
  const size_t c1 = id.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos || c1 == 0) return false;
  std::string_view pid = id.substr(c1 + 1, c2 - c1 - 1), tid = id.substr(c2 + 1);
  if (Digits(pid).empty() || !pid.empty() || Digits(tid).empty() || !tid.empty()) return false;
  std::string_view rest = line.substr(space + 1);
  if (!Eat(rest, "[") || Digits(rest).empty() || !Eat(rest, "] NCCL INFO ")) return false;
  process = std::string(id.substr(0, c2));
  msg = rest;
  return true;
}

}  // namespace

base::StatusOr<base::Report> AnalyzeNcclLog(std::string_view text, const std::string& file) {
  base::Report r;
  r["file"] = file;
  std::string version;
  std::map<std::string, base::Report> comms;  // comm address -> description
  std::map<int64_t, std::string> rings;       // channel -> rank order (first seen)
  int64_t channels = 0, trees = 0;
  std::map<std::string, int64_t> transports;  // transport -> connections
  std::vector<Collective> colls;
  int nccl_lines = 0, line_no = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view raw =
        text.substr(pos, nl == std::string_view::npos ? text.size() - pos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (raw.ends_with('\r')) raw.remove_suffix(1);  // logs copied from Windows tools
    const double ts = Timestamp(raw);
    std::string process;
    std::string_view msg;
    if (!SplitPrefix(raw, process, msg)) continue;
    ++nccl_lines;
    const std::string where = file + ":" + std::to_string(line_no);
    std::string_view x = msg;
    if (Eat(x, "NCCL version ")) {
      version = std::string(x.substr(0, x.find(' ')));
      continue;
    }
    // "comm 0x55aa rank 0 nranks 4 cudaDev 0 ... Init COMPLETE"
    if (const size_t at = msg.find("comm 0x");
        at != std::string_view::npos && msg.find("Init COMPLETE", at) != std::string_view::npos) {
      std::string_view c = msg.substr(at + 5);
      const std::string_view comm = HexAddress(c);
      std::string_view rank, nranks, dev;
      if (!comm.empty() && Eat(c, " rank ") && !(rank = Digits(c)).empty() && Eat(c, " nranks ") &&
          !(nranks = Digits(c)).empty() && Eat(c, " cudaDev ") && !(dev = Digits(c)).empty()) {
        SEEDANCE_ASSIGN_OR_RETURN(int64_t rank_v, Number(rank, kMaxRanks, "rank", where));
        SEEDANCE_ASSIGN_OR_RETURN(int64_t nranks_v, Number(nranks, kMaxRanks, "nranks", where));
        SEEDANCE_ASSIGN_OR_RETURN(int64_t dev_v, Number(dev, kMaxRanks, "cudaDev", where));
        comms[std::string(comm) + "@" + process] = {{"comm", std::string(comm)},
                                                    {"process", process},
                                                    {"rank", rank_v},
                                                    {"nranks", nranks_v},
                                                    {"cuda_dev", dev_v}};
        continue;
      }
    }
    if (Eat(x, "Channel ") || Eat(x, "Ring ")) {
      const bool channel = msg.starts_with("Channel ");
      const std::string_view ch = Digits(x);
      std::string_view total;
      if (!ch.empty() && Eat(x, "/")) total = Digits(x);
      // "Channel 00/02 :    0   1   2   3": the ring's rank order.
      std::string_view order = x;
      if (channel && !total.empty() && Eat(order, " :")) {
        std::string squeezed;
        bool ranks_only = !order.empty();
        for (char c : order) {
          if (c == ' ' || c == '\t') {
            if (!squeezed.empty() && squeezed.back() != ' ') squeezed += ' ';
          } else if (IsDigit(c)) {
            squeezed += c;
          } else {
            ranks_only = false;
            break;
          }
        }
        if (ranks_only && !squeezed.empty()) {
          if (squeezed.back() == ' ') squeezed.pop_back();
          SEEDANCE_ASSIGN_OR_RETURN(int64_t ch_v, Number(ch, kMaxRanks, "channel", where));
          SEEDANCE_ASSIGN_OR_RETURN(int64_t total_v, Number(total, kMaxRanks, "channels", where));
          channels = std::max(channels, total_v);
          rings.emplace(ch_v, std::move(squeezed));
          continue;
        }
      }
      // "Channel 00/0 : 0[18000] -> 1[3b000] via P2P/IPC/read": one connection.
      std::string_view c = x;
      if (!ch.empty() && Eat(c, " : ") && !Digits(c).empty()) {
        if (Eat(c, "[")) c.remove_prefix(std::min(c.size(), c.find(']') + 1));
        if (Eat(c, " -> ") && !Digits(c).empty()) {
          const size_t via = c.rfind(" via ");
          if (via != std::string_view::npos) {
            std::string_view t = c.substr(via + 5);
            t = t.substr(0, t.find(' '));
            if (!t.empty()) {
              ++transports[std::string(t)];
              continue;
            }
          }
        }
      }
    }
    if (msg.starts_with("Trees [")) {
      ++trees;
      continue;
    }
    // "AllReduce: opCount 0 ... count 1048576 datatype 7 ... comm 0x55aa [nranks=4] ..."
    {
      std::string_view c = msg;
      size_t n = 0;
      while (n < c.size() && (std::isalnum(static_cast<unsigned char>(c[n])) || c[n] == '_')) ++n;
      const std::string_view op = c.substr(0, n);
      c.remove_prefix(n);
      if (op.empty() || !Eat(c, ": opCount ")) continue;
      size_t h = 0;
      while (h < c.size() && IsHex(c[h])) ++h;
      if (h == 0 || h >= c.size() || c[h] != ' ') continue;
      const size_t count_at = c.rfind(" count ");
      const size_t comm_at = c.rfind(" comm 0x");
      if (count_at == std::string_view::npos || comm_at == std::string_view::npos) continue;
      std::string_view cnt = c.substr(count_at + 7);
      const std::string_view count = Digits(cnt);
      std::string_view dtype;
      if (count.empty() || !Eat(cnt, " datatype ") || (dtype = Digits(cnt)).empty()) continue;
      std::string_view cm = c.substr(comm_at + 6);
      const std::string_view comm = HexAddress(cm);
      std::string_view nranks;
      if (comm.empty() || !Eat(cm, " [nranks=") || (nranks = Digits(cm)).empty() || !Eat(cm, "]")) {
        continue;
      }
      Collective coll;
      coll.op = std::string(op);
      coll.process = process;
      coll.comm = std::string(comm);
      SEEDANCE_ASSIGN_OR_RETURN(coll.count, Number(count, kMaxCount, "count", where));
      SEEDANCE_ASSIGN_OR_RETURN(int64_t dtype_v, Number(dtype, 255, "datatype", where));
      coll.bytes = coll.count * DataTypeBytes(static_cast<int>(dtype_v));
      SEEDANCE_ASSIGN_OR_RETURN(int64_t nranks_v, Number(nranks, kMaxRanks, "nranks", where));
      coll.nranks = static_cast<int>(nranks_v);
      coll.line = line_no;
      coll.time = ts;
      colls.push_back(coll);
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
