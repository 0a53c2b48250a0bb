// The processes of the socket benchmark. Each role runs in a child the orchestrator forks, and
// talks to its peer only through the plugin (or plain TCP for the baseline); pipes carry the
// listen handle and the result.
#pragma once

#include <cstddef>
#include <string>

namespace weft::bench {

struct Measure {
  double seconds = 0;  // time of the measured part
  size_t bytes = 0;    // bytes moved in it (throughput), or round trips (latency)
};

// Plugin throughput: 4 MiB messages, `window` in flight. The receiver times from its first
// completion to its last, so connection setup and the first message are not counted.
Measure pluginReceiver(const std::string& plugin, size_t msgBytes, int messages, int window, int handleOut);
void pluginSender(const std::string& plugin, size_t msgBytes, int messages, int window, int handleIn);

// Plugin ping-pong: `iters` round trips of `bytes`; the initiator times them.
Measure pluginPingInitiator(const std::string& plugin, size_t bytes, int iters, int handleIn, int handleOut);
void pluginPingResponder(const std::string& plugin, size_t bytes, int iters, int handleIn, int handleOut);

// The baseline: blocking send/recv over one TCP_NODELAY loopback connection.
Measure tcpPingInitiator(int port, size_t bytes, int iters);
void tcpPingResponder(int listenFd, size_t bytes, int iters);

}  // namespace weft::bench
