// Reading an NCCL_DEBUG=INFO log (feature COMM-5): `seedancectl comm nccl-log`.
//
// Recognised lines (anything else is ignored: NCCL's output is usually mixed
// with the application's):
//   host:pid:tid [dev] NCCL INFO NCCL version 2.18.1+cuda12.1
//   ... NCCL INFO comm 0x.. rank 0 nranks 8 cudaDev 0 ... - Init COMPLETE
//   ... NCCL INFO Channel 00/02 :    0   1   2   3        (a ring, in rank order)
//   ... NCCL INFO Channel 00/0 : 0[1000] -> 1[2000] via P2P/IPC/read
//   ... NCCL INFO Ring 00 : 0 -> 1 [send] via NET/IB/0/GDRDMA   (older NCCL)
//   ... NCCL INFO Trees [0] 1/-1/-1->0->-1 [1] ...
//   ... NCCL INFO AllReduce: opCount 3 sendbuff .. count 1048576 datatype 7 op 0
//       root 0 comm 0x.. [nranks=8] stream ..      (NCCL_DEBUG_SUBSYS=COLL)
// A line may start with a bracketed timestamp ("[2024-05-01 10:00:00.123456]"
// or "[12.345]" seconds); with timestamps the time from one collective to the
// next one of the same process and communicator is reported as an upper
// bound of its duration ("slowest"); without them collectives are ranked by bytes.
//
// Thread safety: pure functions.
#pragma once

#include <string_view>

#include "seedance/base/report.h"
#include "seedance/base/status.h"

namespace seedance::comm {

// The report: version, communicators, channels (count and the rings), tree
// count, transports (connections per transport), collectives (per type:
// calls and bytes), and the slowest (or largest) ten collectives.
base::StatusOr<base::Report> AnalyzeNcclLog(std::string_view text, const std::string& file);

}  // namespace seedance::comm
