#include "seedance/control/batch_scaler.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <numeric>

namespace seedance::control {
namespace {

// printf into a std::string (the reasons are short).
[[gnu::format(printf, 1, 2)]] std::string Printf(const char* format, ...) {
  char buf[256];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buf, sizeof buf, format, args);
  va_end(args);
  return buf;
}

}  // namespace

const char* BatchActionName(BatchAction action) {
  switch (action) {
    case BatchAction::kKeep:
      return "keep";
    case BatchAction::kGrow:
      return "grow";
    case BatchAction::kShrink:
      return "shrink";
    case BatchAction::kStopGrowth:
      return "stop_growth";
  }
  return "keep";
}

base::Status ValidateBatchScalerSettings(const BatchScalerSettings& s) {
  if (s.min_size < 1) return base::InvalidArgumentError("must be >= 1", "min_size");
  if (s.initial_size < s.min_size || s.initial_size > s.max_size) {
    return base::InvalidArgumentError("must lie in [min_size, max_size]", "initial_size");
  }
  if (s.step < 1) return base::InvalidArgumentError("must be >= 1", "step");
  if (!(s.low >= 0 && s.low < s.high && s.high <= 1)) {
    return base::InvalidArgumentError("need 0 <= low < high <= 1", "low, high");
  }
  if (s.readings < 1) return base::InvalidArgumentError("must be >= 1", "readings");
  if (!std::isfinite(s.min_gain)) return base::InvalidArgumentError("must be finite", "min_gain");
  return base::OkStatus();
}

BatchScaler::BatchScaler(BatchScalerSettings settings)
    : settings_(settings),
      size_(std::clamp(settings.initial_size, std::max<int64_t>(settings.min_size, 1),
                       std::max(settings.max_size, std::max<int64_t>(settings.min_size, 1)))) {}

double BatchScaler::MeanThroughput() const {
  const size_t n = std::min<size_t>(throughput_.size(), std::max(settings_.readings, 1));
  if (n == 0) return 0;
  return std::accumulate(throughput_.end() - static_cast<std::ptrdiff_t>(n), throughput_.end(),
                         0.0) /
         static_cast<double>(n);
}

BatchDecision BatchScaler::StepBack(const std::string& why, bool halve) {
  BatchDecision d;
  const int64_t floor = std::max<int64_t>(settings_.min_size, 1);
  if (size_ <= floor) {
    d.size = size_;
    d.reason =
        Printf("%s: already at the smallest size %lld", why.c_str(), static_cast<long long>(size_));
    return d;
  }
  int64_t next = halve ? size_ / 2 : size_ - settings_.step;
  if (!previous_.empty()) {
    next = previous_.back();
    previous_.pop_back();
    previous_mean_.pop_back();
  }
  next = std::clamp(next, floor, size_ - 1);
  ceiling_ = size_;
  d.action = BatchAction::kShrink;
  d.reason = Printf("%s: %lld -> %lld", why.c_str(), static_cast<long long>(size_),
                    static_cast<long long>(next));
  size_ = next;
  d.size = next;
  low_count_ = 0;
  throughput_.clear();
  return d;
}

BatchDecision BatchScaler::Observe(double memory_share, double samples_per_s) {
  if (samples_per_s > 0) throughput_.push_back(samples_per_s);
  if (memory_share > settings_.high) {
    return StepBack(Printf("memory %.2f > %.2f", memory_share, settings_.high), false);
  }
  BatchDecision d;
  d.size = size_;
  if (memory_share >= settings_.low) {
    low_count_ = 0;
    return d;
  }
  if (++low_count_ < settings_.readings || growth_stopped_) return d;
  low_count_ = 0;
  const double mean = MeanThroughput();
  if (settings_.min_gain >= 0 && !previous_mean_.empty() &&
      mean < previous_mean_.back() * (1 + settings_.min_gain)) {
    growth_stopped_ = true;
    d.action = BatchAction::kStopGrowth;
    if (mean < previous_mean_.back()) {
      const int64_t back = previous_.back();
      d.reason =
          Printf("throughput %.1f/s at %lld below %.1f/s at %lld: %lld -> %lld", mean,
                 static_cast<long long>(size_), previous_mean_.back(), static_cast<long long>(back),
                 static_cast<long long>(size_), static_cast<long long>(back));
      previous_.pop_back();
      previous_mean_.pop_back();
      size_ = back;
      d.size = back;
      throughput_.clear();
    } else {
      d.reason = Printf("throughput %.1f/s at %lld under %.0f%% above %.1f/s at %lld: kept", mean,
                        static_cast<long long>(size_), settings_.min_gain * 100,
                        previous_mean_.back(), static_cast<long long>(previous_.back()));
    }
    return d;
  }
  const int64_t next = size_ + settings_.step;
  if (next > settings_.max_size || (ceiling_ > 0 && next >= ceiling_)) return d;
  previous_.push_back(size_);
  previous_mean_.push_back(mean);
  d.action = BatchAction::kGrow;
  d.reason =
      Printf("memory %.2f < %.2f for %d steps: %lld -> %lld", memory_share, settings_.low,
             settings_.readings, static_cast<long long>(size_), static_cast<long long>(next));
  size_ = next;
  d.size = next;
  throughput_.clear();
  return d;
}

BatchDecision BatchScaler::OutOfMemory() { return StepBack("out of memory", true); }

}  // namespace seedance::control
