// weft_bench_net_socket: the socket plugin between two processes over 127.0.0.1, against
// kernel-TCP baselines measured in the same run: 4 MiB-message bandwidth vs iperf3 with the
// same number of TCP streams, and 8-byte ping-pong half round trip vs a plain TCP_NODELAY
// ping-pong. Prints a table like ib_write_bw's. See bench/README.md.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/common/processes.h"
#include "bench/net_socket/roles.h"

namespace weft::bench {
namespace {

struct Args {
  std::string plugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-socket.so";
  std::vector<int> streams = {1, 2, 4};
  int repeats = 3;
  int messages = 1500;  // 4 MiB each: about 3 s at loopback speeds here
  int seconds = 3;      // iperf3 -t
  int iters = 20000;    // ping-pong round trips
  int threads = -1;     // helper threads per side; -1: 0 for one stream, else 1
};

Measure readMeasure(int fd) {
  Measure m;
  if (read(fd, &m, sizeof(m)) != static_cast<ssize_t>(sizeof(m))) throw std::runtime_error("no result from a role");
  return m;
}

// The data streams of a connection. Without helper threads the caller's thread moves every
// byte on the control socket (NCCL's default for a NIC it does not know): one stream. With
// helpers, `streams` data sockets split over them carry every message above 128 bytes.
void setStreams(int streams, int threads) {
  if (threads < 0) threads = streams == 1 ? 0 : 1;
  if (threads > streams) threads = streams;
  setenv("NCCL_SOCKET_NTHREADS", std::to_string(threads).c_str(), 1);
  setenv("NCCL_NSOCKS_PERTHREAD", std::to_string(threads == 0 ? 1 : streams / threads).c_str(), 1);
}

double weftBandwidth(const Args& a, int streams) {
  setStreams(streams, a.threads);
  Pipe handle, result;
  const size_t bytes = size_t{4} << 20;
  pid_t rx = forkRole([&] {
    Measure m = pluginReceiver(a.plugin, bytes, a.messages, 8, handle.fd[1]);
    (void)!write(result.fd[1], &m, sizeof(m));
  });
  pid_t tx = forkRole([&] { pluginSender(a.plugin, bytes, a.messages, 8, handle.fd[0]); });
  waitOk(rx);
  waitOk(tx);
  Measure m = readMeasure(result.fd[0]);
  return static_cast<double>(m.bytes) / m.seconds / 1e9;
}

// Whether something listens on 127.0.0.1:port, from /proc/net/tcp (no probe connection, which
// iperf3 would count as a client).
bool listening(int port) {
  std::ifstream f("/proc/net/tcp");
  std::string line;
  char want[32];
  std::snprintf(want, sizeof(want), "0100007F:%04X", port);
  while (std::getline(f, line))
    if (line.find(want) != std::string::npos && line.find(" 0A ") != std::string::npos) return true;
  return false;
}

// The one-off server (-1) exits after its test; give it 2 s before SIGTERM.
void stopServer(pid_t server) {
  for (int i = 0; i < 200; ++i) {
    if (waitpid(server, nullptr, WNOHANG) == server) return;
    usleep(10000);
  }
  kill(server, SIGTERM);
  waitpid(server, nullptr, 0);
}

double iperfBandwidth(const Args& a, int streams) {
  int port = freePort();
  std::string p = std::to_string(port);
  int devnull = open("/dev/null", O_WRONLY);
  pid_t server = spawn({"iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", p}, devnull, devnull);
  close(devnull);
  while (!listening(port)) {
    if (waitpid(server, nullptr, WNOHANG) == server) throw std::runtime_error("iperf3 server exited");
    sched_yield();
  }
  Pipe out;
  pid_t client = spawn({"iperf3", "-c", "127.0.0.1", "-p", p, "-P", std::to_string(streams), "-t",
                        std::to_string(a.seconds), "-J"}, out.fd[1]);
  close(out.fd[1]);
  out.fd[1] = -1;
  std::string json;
  char buf[4096];
  ssize_t n;
  while ((n = read(out.fd[0], buf, sizeof(buf))) > 0) json.append(buf, static_cast<size_t>(n));
  waitpid(client, nullptr, 0);
  stopServer(server);
  size_t at = json.find("\"sum_received\"");
  at = at == std::string::npos ? at : json.find("\"bits_per_second\"", at);
  if (at == std::string::npos) throw std::runtime_error("iperf3 gave no sum_received: " + json.substr(0, 200));
  return std::strtod(json.c_str() + json.find(':', at) + 1, nullptr) / 8 / 1e9;
}

// Half round trip in microseconds.
double weftLatency(const Args& a) {
  setStreams(1, 0);
  Pipe toInit, toResp, result;
  pid_t resp = forkRole([&] { pluginPingResponder(a.plugin, 8, a.iters, toResp.fd[0], toInit.fd[1]); });
  pid_t init = forkRole([&] {
    Measure m = pluginPingInitiator(a.plugin, 8, a.iters, toInit.fd[0], toResp.fd[1]);
    (void)!write(result.fd[1], &m, sizeof(m));
  });
  waitOk(init);
  waitOk(resp);
  Measure m = readMeasure(result.fd[0]);
  return m.seconds / static_cast<double>(m.bytes) / 2 * 1e6;
}

double tcpLatency(const Args& a) {
  int lfd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(lfd, 1) != 0) {
    throw std::runtime_error("tcp listen failed");
  }
  getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len);
  Pipe result;
  pid_t resp = forkRole([&] { tcpPingResponder(lfd, 8, a.iters); });
  pid_t init = forkRole([&] {
    Measure m = tcpPingInitiator(ntohs(addr.sin_port), 8, a.iters);
    (void)!write(result.fd[1], &m, sizeof(m));
  });
  waitOk(init);
  waitOk(resp);
  close(lfd);
  Measure m = readMeasure(result.fd[0]);
  return m.seconds / static_cast<double>(m.bytes) / 2 * 1e6;
}

struct Stats {
  double median, min, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

void row(const char* test, size_t bytes, int streams, const char* unit, Stats w, const char* base, Stats b,
         bool higherIsBetter, double target) {
  double ratio = w.median / b.median;
  bool met = higherIsBetter ? ratio >= target : ratio <= target;
  std::printf(" %-9s %8zu %7d   %7.2f %-4s [%6.2f-%6.2f]   %-6s %7.2f %-4s [%6.2f-%6.2f]   %5.2f  %s %.2f  %s\n", test,
              bytes, streams, w.median, unit, w.min, w.max, base, b.median, unit, b.min, b.max, ratio,
              higherIsBetter ? ">=" : "<=", target, met ? "met" : "NOT MET");
}

}  // namespace

int run(const Args& a) {
  setenv("NCCL_SOCKET_IFNAME", "=lo", 1);  // loopback only
  setenv("NCCL_SOCKET_FAMILY", "AF_INET", 1);
  const char* line = "--------------------------------------------------------------------------------------------------------------";
  double load[3] = {0, 0, 0};
  (void)!getloadavg(load, 3);
  std::printf("%s\n weft socket plugin vs kernel TCP on 127.0.0.1: median of %d runs [min-max], baselines run alternately\n"
              " plugin: %s\n host: %ld CPUs, load average %.2f at start\n%s\n",
              line, a.repeats, a.plugin.c_str(), sysconf(_SC_NPROCESSORS_ONLN), load[0], line);
  std::printf(" %-9s %8s %7s   %-31s   %-31s   %5s  %s\n", "test", "#bytes", "streams", "weft", "baseline", "ratio", "target");
  for (int s : a.streams) {
    std::vector<double> w, b;
    for (int r = 0; r < a.repeats; ++r) {
      w.push_back(weftBandwidth(a, s));
      b.push_back(iperfBandwidth(a, s));
    }
    row("bandwidth", size_t{4} << 20, s, "GB/s", stats(w), "iperf3", stats(b), true, 0.9);
  }
  std::vector<double> w, b;
  for (int r = 0; r < a.repeats; ++r) {
    w.push_back(weftLatency(a));
    b.push_back(tcpLatency(a));
  }
  row("latency", 8, 1, "us", stats(w), "tcp", stats(b), false, 1.25);
  std::printf("%s\n", line);
  return 0;
}

}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return argv[++i];
    };
    try {
      if (k == "--plugin") a.plugin = next();
      else if (k == "--repeats") a.repeats = std::stoi(next());
      else if (k == "--messages") a.messages = std::stoi(next());
      else if (k == "--seconds") a.seconds = std::stoi(next());
      else if (k == "--iters") a.iters = std::stoi(next());
      else if (k == "--threads") a.threads = std::stoi(next());
      else if (k == "--streams") {
        a.streams.clear();
        std::stringstream ss(next());
        for (std::string t; std::getline(ss, t, ',');) a.streams.push_back(std::stoi(t));
      } else {
        std::fprintf(stderr,
                     "usage: %s [--plugin PATH] [--streams 1,2,4] [--repeats 3] [--messages 1500] [--seconds 3] [--iters 20000] [--threads N]\n",
                     argv[0]);
        return 2;
      }
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
      return 2;
    }
  }
  try {
    return weft::bench::run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
