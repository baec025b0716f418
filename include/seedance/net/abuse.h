// Abusive clients, as checks: each one plays a hostile or broken client against an HTTP endpoint
// on 127.0.0.1 and says whether the endpoint held the server's guarantees (http_server.h). Every
// endpoint of the library (the probe's exporter, `kv serve`, the Kubernetes extender) runs them
// in its tests, so a guarantee of the one server is checked where it is used, not assumed.
//
// Each returns OK, or FailedPrecondition saying what the client saw. `path` is a route that
// answers GET with 200. Timeouts are the endpoint's configured ones; the checks allow scheduling
// slack on top.
//
// Thread safety: the functions are independent; each opens its own sockets.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "seedance/base/status.h"

namespace seedance::net::abuse {

// The raw client the checks are made of, for tests that need to misbehave by hand.
int Connect(int port);  // to 127.0.0.1:port; -1 if refused
// The same with SO_RCVBUF set before the handshake, so the window it advertises stays small (set
// later, it stalls the sender on the persist timer instead).
int ConnectWithReceiveBuffer(int port, int bytes);
bool SendAll(int fd, std::string_view data);  // false once the peer stops taking bytes
// Reads until EOF, an error or `timeout`; `closed` (when given) says whether the peer closed.
std::string ReadUntilClosed(int fd, std::chrono::milliseconds timeout, bool* closed = nullptr);

// One well-behaved GET on a fresh connection: the status code, or an error.
base::StatusOr<int> Get(int port, const std::string& path);

// A request sent one byte every 50 ms is closed within about request_timeout.
base::Status Slowloris(int port, const std::string& path,
                       std::chrono::milliseconds request_timeout);

// `count` connections that send nothing are closed within about request_timeout, and a GET is
// answered while they are open.
base::Status IdleSockets(int port, const std::string& path, int count,
                         std::chrono::milliseconds request_timeout);

// A head of 64 KiB of fields is refused with 431 and the connection closed.
base::Status HugeHeaders(int port, const std::string& path);

// `count` GETs in one write, the last with "Connection: close", are all answered 200, in order.
base::Status Pipelining(int port, const std::string& path, int count);

// `count` connections open at once (raising this process's descriptor limit if it must), and
// a GET on a fresh one is still answered.
base::Status ManyConnections(int port, const std::string& path, int count);

}  // namespace seedance::net::abuse
