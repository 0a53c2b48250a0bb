// The two sides of the OFI benchmark: weft's OFI plugin in a ping-pong between two processes,
// and libfabric's own fi_pingpong on the same provider, run as a pair of child processes.
#pragma once

#include <cstddef>
#include <string>

namespace weft::bench {

// One ping-pong run: `iters` round trips of `bytes` each way, after a warm-up of iters/10.
struct PingPong {
  double seconds = 0;
  int iters = 0;
  size_t bytes = 0;
  // fi_pingpong's figures: payload moved both ways per second, and half a round trip.
  double megabytesPerSecond() const { return 2.0 * static_cast<double>(bytes) * iters / seconds / 1e6; }
  double microsecondsPerTransfer() const { return seconds / (2.0 * iters) * 1e6; }
};

// The plugin at `path` (loaded by weft's loader, ABI v11) between two forked processes. Each side
// polls test() without yielding, as fi_pingpong polls its completion queue; with `yield` it calls
// sched_yield() after each test() that finds the request not done (as the socket benchmark and
// a proxy thread sharing its core do).
PingPong pluginPingPong(const std::string& path, size_t bytes, int iters, bool yield);

// fi_pingpong -p PROVIDER -e rdm -m tagged -d DOMAIN: a server and a client on 127.0.0.1,
// parsed from the client's output line.
PingPong fiPingPong(const std::string& provider, const std::string& domain, size_t bytes, int iters);

}  // namespace weft::bench
