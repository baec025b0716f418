// Readers for the cluster traces in ../shared/data (feature SCHED-1). Every
// reader is strict: the header must be exactly the documented one, every
// field is checked, and an error names the file, the line and the column.
//
//   Alibaba 2023 nodes   sn,cpu_milli,memory_mib,gpu,model
//   Alibaba 2023 pods    name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
//                        creation_time,deletion_time,scheduled_time
//                        (the multigpu* files: the first five columns only)
//   Philly jobs          timestamp,duration,num_gpus,gpu_time,cluster
//   PAI 2020 machines    machine,gpu_type,cap_cpu,cap_mem,cap_gpu (cores, GB)
//   job utilization      id,gpu_util_pct (event mode's --job-util: a job's mean GPU
//                        utilization, 0..100, of what it is allocated; ids as the
//                        event mode names jobs: Alibaba pod names, philly-N for the
//                        Philly job on data line N+1)
//
// Thread safety: pure functions.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "seedance/base/status.h"
#include "seedance/sched/model.h"

namespace seedance::sched {

base::StatusOr<std::vector<Node>> ReadAlibabaNodes(std::string_view text, const std::string& file);
base::StatusOr<std::vector<Pod>> ReadAlibabaPods(std::string_view text, const std::string& file);
base::StatusOr<std::vector<Job>> ReadPhillyJobs(std::string_view text, const std::string& file);
base::StatusOr<std::vector<Node>> ReadPaiMachines(std::string_view text, const std::string& file);
base::StatusOr<std::map<std::string, double>> ReadJobUtilization(std::string_view text,
                                                                 const std::string& file);

}  // namespace seedance::sched
