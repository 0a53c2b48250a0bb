// weft_bench_net_ofi: weft's OFI plugin against libfabric's own fi_pingpong, on the same
// provider (tcp by default) over 127.0.0.1, measured alternately in the same run: 4 MiB and
// 8-byte ping-pong between two processes. Prints a table like fi_pingpong's figures (payload
// per second both ways, half a round trip). See bench/README.md.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/net_ofi/pingpong.h"

namespace weft::bench {
namespace {

struct Args {
  std::string plugin = std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-ofi.so";
  std::string provider = "tcp";
  std::string domain = "lo";
  int repeats = 5;
  int largeIters = 200;    // 4 MiB round trips per run
  int smallIters = 10000;  // 8-byte round trips per run
  bool yield = false;      // weft's side only: fi_pingpong cannot yield
};

struct Stats {
  double median, min, max;
};
Stats stats(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return {v[v.size() / 2], v.front(), v.back()};
}

void row(size_t bytes, const std::vector<PingPong>& weft, const std::vector<PingPong>& base) {
  std::vector<double> wb, bb, wl, bl;
  for (const PingPong& p : weft) wb.push_back(p.megabytesPerSecond()), wl.push_back(p.microsecondsPerTransfer());
  for (const PingPong& p : base) bb.push_back(p.megabytesPerSecond()), bl.push_back(p.microsecondsPerTransfer());
  Stats w = stats(wb), b = stats(bb), x = stats(wl), y = stats(bl);
  double ratio = w.median / b.median;
  std::printf(" %8zu  %9.2f [%9.2f-%9.2f]  %9.2f [%9.2f-%9.2f]  %5.2f  %s   %9.2f  %9.2f\n", bytes, w.median, w.min,
              w.max, b.median, b.min, b.max, ratio, ratio >= 0.9 ? ">= 0.90 met    " : ">= 0.90 NOT MET", x.median,
              y.median);
}

int run(const Args& a) {
  // Both sides use the provider on the loopback interface only.
  setenv("FI_PROVIDER", a.provider.c_str(), 1);
  if (a.provider == "tcp") setenv("FI_TCP_IFACE", a.domain.c_str(), 1);
  double load[3] = {0, 0, 0};
  (void)!getloadavg(load, 3);
  const char* line = "------------------------------------------------------------------------------------------------------------";
  std::printf("%s\n weft OFI plugin vs fi_pingpong (-e rdm -m tagged), provider %s on %s (127.0.0.1): median of %d runs\n"
              " [min-max], run alternately; MB/s = payload both ways per second, us = half round trip\n"
              " plugin: %s\n weft polls test() %s; fi_pingpong spins on fi_cq_read\n"
              " host: %ld CPUs, load average %.2f at start\n%s\n",
              line, a.provider.c_str(), a.domain.c_str(), a.repeats, a.plugin.c_str(),
              a.yield ? "with sched_yield() between calls (--yield)" : "without yielding",
              sysconf(_SC_NPROCESSORS_ONLN), load[0], line);
  std::printf(" %8s  %-31s  %-31s  %5s  %-15s   %9s  %9s\n", "#bytes", "weft MB/s", "fi_pingpong MB/s", "ratio", "target",
              "weft us", "fi_pp us");
  for (size_t bytes : {size_t{4} << 20, size_t{8}}) {
    int iters = bytes >= 4096 ? a.largeIters : a.smallIters;
    std::vector<PingPong> weft, base;
    for (int r = 0; r < a.repeats; ++r) {
      weft.push_back(pluginPingPong(a.plugin, bytes, iters, a.yield));
      base.push_back(fiPingPong(a.provider, a.domain, bytes, iters));
    }
    row(bytes, weft, base);
  }
  std::printf("%s\n", line);
  return 0;
}

}  // namespace
}  // namespace weft::bench

int main(int argc, char** argv) {
  weft::bench::Args a;
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    if (k == "--yield") {
      a.yield = true;
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "usage: %s [--plugin PATH] [--provider tcp] [--domain lo] [--repeats 5] "
                   "[--large-iters 200] [--small-iters 10000] [--yield]\n", argv[0]);
      return 2;
    }
    std::string v = argv[++i];
    if (k == "--plugin") a.plugin = v;
    else if (k == "--provider") a.provider = v;
    else if (k == "--domain") a.domain = v;
    else if (k == "--repeats") a.repeats = std::atoi(v.c_str());
    else if (k == "--large-iters") a.largeIters = std::atoi(v.c_str());
    else if (k == "--small-iters") a.smallIters = std::atoi(v.c_str());
    else {
      std::fprintf(stderr, "%s: unknown option %s\n", argv[0], k.c_str());
      return 2;
    }
  }
  if (a.repeats < 1 || a.largeIters < 1 || a.smallIters < 1) {
    std::fprintf(stderr, "%s: repeats and iterations must be positive\n", argv[0]);
    return 2;
  }
  try {
    return weft::bench::run(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argv[0], e.what());
    return 1;
  }
}
