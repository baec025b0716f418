#include "seedance/probe/gpu.h"

#include <algorithm>
#include <nlohmann/json.hpp>

namespace seedance::probe {

namespace {

class NvmlSource final : public GpuSource {
 public:
  explicit NvmlSource(std::unique_ptr<port::Nvml> nvml) : nvml_(std::move(nvml)) {}
  std::vector<port::NvmlReading> Read() override {
    std::vector<port::NvmlReading> out;
    out.reserve(static_cast<size_t>(std::max(0, nvml_->device_count())));
    for (int i = 0; i < nvml_->device_count(); ++i) out.push_back(nvml_->Read(i));
    for (const auto& [index, xid] : nvml_->PollXidEvents()) {
      if (index >= 0 && static_cast<size_t>(index) < out.size())
        out[index].xid_errors.push_back(xid);
    }
    return out;
  }
  std::string note() const override {
    return nvml_->device_count() == 0 ? "NVML loaded but reports no GPUs" : "";
  }
  std::string driver_version() const override { return nvml_->driver_version(); }

 private:
  std::unique_ptr<port::Nvml> nvml_;
};

class NoGpus final : public GpuSource {
 public:
  explicit NoGpus(std::string why) : why_(std::move(why)) {}
  std::vector<port::NvmlReading> Read() override { return {}; }
  std::string note() const override { return why_ + ": no GPU metrics"; }
  std::string driver_version() const override { return ""; }

 private:
  std::string why_;
};

class FixtureSource final : public GpuSource {
 public:
  FixtureSource(std::vector<port::NvmlReading> gpus, std::vector<port::NvmlReading> per_read,
                std::string driver)
      : gpus_(std::move(gpus)), per_read_(std::move(per_read)), driver_(std::move(driver)) {}
  std::vector<port::NvmlReading> Read() override {
    for (size_t i = 0; i < gpus_.size() && i < per_read_.size(); ++i) {
      auto bump = [](std::optional<uint64_t>& v, const std::optional<uint64_t>& d) {
        if (v && d) *v += *d;
      };
      bump(gpus_[i].energy_millijoules, per_read_[i].energy_millijoules);
      bump(gpus_[i].nvlink_tx_bytes, per_read_[i].nvlink_tx_bytes);
      bump(gpus_[i].nvlink_rx_bytes, per_read_[i].nvlink_rx_bytes);
    }
    return gpus_;
  }
  std::string note() const override { return ""; }
  std::string driver_version() const override { return driver_; }

 private:
  std::vector<port::NvmlReading> gpus_, per_read_;
  std::string driver_;
};

base::StatusOr<port::NvmlReading> ParseReading(const nlohmann::json& j, const std::string& where) {
  if (!j.is_object()) return base::InvalidArgumentError("expected an object", where);
  port::NvmlReading r;
  for (const auto& item : j.items()) {
    // Named, not structured bindings: lambdas cannot capture those before C++20's P1091 (clang 14).
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    const std::string at = where + "." + key;
    auto num = [&](auto& field) -> base::Status {
      if (!value.is_number() || value.get<double>() < 0) {
        return base::InvalidArgumentError("expected a non-negative number", at);
      }
      using T = typename std::remove_reference_t<decltype(field)>::value_type;
      field = value.get<T>();
      return base::OkStatus();
    };
    auto str = [&](std::string& field) -> base::Status {
      if (!value.is_string()) return base::InvalidArgumentError("expected a string", at);
      field = value.get<std::string>();
      return base::OkStatus();
    };
    base::Status s;
    if (key == "index") {
      if (!value.is_number_integer()) return base::InvalidArgumentError("expected an integer", at);
      r.index = value.get<int>();
    } else if (key == "name") {
      s = str(r.name);
    } else if (key == "uuid") {
      s = str(r.uuid);
    } else if (key == "pci_address") {
      s = str(r.pci_address);
    } else if (key == "gpu_util_pct") {
      s = num(r.gpu_util_pct);
    } else if (key == "memory_util_pct") {
      s = num(r.memory_util_pct);
    } else if (key == "memory_used_bytes") {
      s = num(r.memory_used_bytes);
    } else if (key == "memory_total_bytes") {
      s = num(r.memory_total_bytes);
    } else if (key == "power_watts") {
      s = num(r.power_watts);
    } else if (key == "power_limit_watts") {
      s = num(r.power_limit_watts);
    } else if (key == "energy_millijoules") {
      s = num(r.energy_millijoules);
    } else if (key == "temperature_celsius") {
      s = num(r.temperature_celsius);
    } else if (key == "sm_clock_mhz") {
      s = num(r.sm_clock_mhz);
    } else if (key == "memory_clock_mhz") {
      s = num(r.memory_clock_mhz);
    } else if (key == "pcie_tx_bytes_per_s") {
      s = num(r.pcie_tx_bytes_per_s);
    } else if (key == "pcie_rx_bytes_per_s") {
      s = num(r.pcie_rx_bytes_per_s);
    } else if (key == "nvlink_tx_bytes") {
      s = num(r.nvlink_tx_bytes);
    } else if (key == "nvlink_rx_bytes") {
      s = num(r.nvlink_rx_bytes);
    } else if (key == "ecc_uncorrected_errors") {
      s = num(r.ecc_uncorrected_errors);
    } else if (key == "xid_errors") {
      if (!value.is_array()) return base::InvalidArgumentError("expected a list of XIDs", at);
      for (const auto& x : value) {
        if (!x.is_number_unsigned()) return base::InvalidArgumentError("expected XID numbers", at);
        r.xid_errors.push_back(x.get<uint64_t>());
      }
    } else {
      return base::InvalidArgumentError("unknown field", at);
    }
    if (!s.ok()) return s;
  }
  return r;
}

}  // namespace

std::unique_ptr<GpuSource> NewNvmlGpuSource() {
  auto nvml = port::Nvml::Load();
  if (!nvml.ok()) return std::make_unique<NoGpus>(std::string(nvml.status().message()));
  return std::make_unique<NvmlSource>(std::move(*nvml));
}

base::StatusOr<std::unique_ptr<GpuSource>> NewFixtureGpuSource(base::Env& env,
                                                               const std::string& file) {
  auto text = env.ReadFile(file);
  if (!text.ok()) return text.status().Annotate("cannot read the GPU fixture");
  nlohmann::json j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return base::InvalidArgumentError("not a JSON object", file);
  }
  auto list = [&](const char* key) -> base::StatusOr<std::vector<port::NvmlReading>> {
    std::vector<port::NvmlReading> out;
    if (!j.contains(key)) return out;
    if (!j[key].is_array())
      return base::InvalidArgumentError("expected an array", file + ": " + key);
    for (size_t i = 0; i < j[key].size(); ++i) {
      auto r = ParseReading(j[key][i], file + ": " + key + "[" + std::to_string(i) + "]");
      if (!r.ok()) return r.status();
      out.push_back(*r);
    }
    return out;
  };
  auto gpus = list("gpus");
  if (!gpus.ok()) return gpus.status();
  auto per_read = list("per_read");
  if (!per_read.ok()) return per_read.status();
  std::string driver;
  if (j.contains("driver_version")) {
    if (!j["driver_version"].is_string()) {
      return base::InvalidArgumentError("expected a string", file + ": driver_version");
    }
    driver = j["driver_version"].get<std::string>();
  }
  return std::unique_ptr<GpuSource>(
      std::make_unique<FixtureSource>(std::move(*gpus), std::move(*per_read), std::move(driver)));
}

}  // namespace seedance::probe
