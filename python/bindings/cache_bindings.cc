// seedance._core.TieredCache (feature CTRL-7): the tiered sample cache that
// seedance.torch.CachedDataset reads through. Values cross as bytes; the GIL is released
// inside get and put (they may wait for the lock or read a disk tier). Pickling reopens the
// cache by its path, so DataLoader workers started by spawn attach to the same shared state
// (forked workers inherit the mapping).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include "python/bindings/raise.h"
#include "seedance/control/tiered_cache.h"

namespace py = pybind11;

namespace seedance::python {
namespace {

using Tier = std::tuple<std::string, std::string, uint64_t>;  // name, dir ("" = host), records

std::shared_ptr<control::TieredCache> Open(const std::string& path) {
  return std::shared_ptr<control::TieredCache>(ValueOrRaise(control::TieredCache::Open(path)));
}

py::dict TierDict(const control::CacheTierStats& t) {
  py::dict d;
  d["name"] = t.name;
  d["capacity"] = t.capacity;
  d["entries"] = t.entries;
  d["hits"] = t.hits;
  d["admitted"] = t.admitted;
  d["evictions"] = t.evictions;
  d["scanning"] = t.scanning;
  d["latency_buckets"] = t.latency_buckets;
  d["latency_sum_s"] = t.latency_sum_s;
  return d;
}

}  // namespace

void BindCache(py::module_& m) {
  py::class_<control::TieredCache, std::shared_ptr<control::TieredCache>>(m, "TieredCache")
      .def_static(
          "create",
          [](const std::string& path, uint64_t record_bytes, const std::vector<Tier>& tiers,
             bool detect_scans) {
            control::TieredCacheOptions o;
            o.path = path;
            o.record_bytes = record_bytes;
            o.detect_scans = detect_scans;
            for (const auto& [name, dir, records] : tiers) o.tiers.push_back({name, dir, records});
            return std::shared_ptr<control::TieredCache>(
                ValueOrRaise(control::TieredCache::Create(o)));
          },
          py::arg("path"), py::arg("record_bytes"), py::arg("tiers"),
          py::arg("detect_scans") = true)
      .def(py::init(&Open), py::arg("path"))  // attaches to an existing cache
      .def(
          "get",
          [](control::TieredCache& c, uint64_t key) -> py::object {
            std::string out;
            base::StatusOr<int> tier = [&] {
              py::gil_scoped_release release;
              return c.Get(key, &out);
            }();
            if (ValueOrRaise(std::move(tier)) < 0) return py::none();
            return py::bytes(out);
          },
          py::arg("key"))
      .def(
          "put",
          [](control::TieredCache& c, uint64_t key, const py::bytes& value) {
            std::string data = value;  // a copy: the GIL is released below
            base::StatusOr<int> tier = [&] {
              py::gil_scoped_release release;
              return c.Put(key, data);
            }();
            return ValueOrRaise(std::move(tier));
          },
          py::arg("key"), py::arg("value"))
      .def("pin", &control::TieredCache::Pin, py::arg("key"))
      .def("unpin", &control::TieredCache::Unpin, py::arg("key"))
      .def("stats",
           [](const control::TieredCache& c) {
             const control::TieredCacheStats s = c.Stats();
             py::dict d;
             py::list tiers;
             for (const auto& t : s.tiers) tiers.append(TierDict(t));
             d["tiers"] = tiers;
             d["misses"] = s.misses;
             d["miss_latency_buckets"] = s.miss_latency_buckets;
             d["miss_latency_sum_s"] = s.miss_latency_sum_s;
             d["resets"] = s.resets;
             d["latency_bounds_s"] = control::CacheLatencyBuckets();
             return d;
           })
      .def("render_prometheus", &control::TieredCache::RenderPrometheus)
      .def("check", &control::TieredCache::Check)
      .def("remove", [](control::TieredCache& c) { RaiseIfError(c.Remove()); })
      .def_property_readonly("path", &control::TieredCache::path)
      .def_property_readonly("record_bytes", &control::TieredCache::record_bytes)
      .def(py::pickle([](const control::TieredCache& c) { return py::make_tuple(c.path()); },
                      [](const py::tuple& t) { return Open(t[0].cast<std::string>()); }));
}

}  // namespace seedance::python
