#include "src/sched/spot_capacity.h"

namespace seedance::sched {

SpotCapacity::SpotCapacity(const std::vector<Node>& nodes, const SpotOptions& options)
    : options_(options),
      spot_(nodes.size(), 0),
      down_(nodes.size(), 0),
      rng_(options.seed ^ 0x5b07ull),
      gap_(options.interruptions_per_day > 0 ? options.interruptions_per_day / 86400.0 : 1.0) {
  for (size_t n = 0; n < nodes.size(); ++n) {
    spot_[n] = nodes[n].spot;
    any_ |= nodes[n].spot;
  }
}

double SpotCapacity::NextGap() { return gap_(rng_); }

namespace {

class SpotFilter final : public FilterPlugin {
 public:
  explicit SpotFilter(const SpotCapacity* spot) : spot_(spot) {}
  std::string_view name() const override { return "spot"; }
  bool Filter(const Cluster&, const Pod&, int node) const override {
    const auto n = static_cast<size_t>(node);
    if (spot_->down(n)) return false;
    return !spot_->spot_only() || spot_->is_spot(n);
  }

 private:
  const SpotCapacity* spot_;
};

}  // namespace

std::unique_ptr<FilterPlugin> MakeSpotFilter(const SpotCapacity* spot) {
  return std::make_unique<SpotFilter>(spot);
}

}  // namespace seedance::sched
