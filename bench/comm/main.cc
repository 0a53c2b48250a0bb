// weft_bench_comm: see comm_bench.h and bench/README.md ("Communicator: init, send/recv").
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/comm/comm_bench.h"
#include "bench/comm/util.h"

namespace weft::bench::comm {
namespace {

constexpr const char* kUsage =
    "usage: weft_bench_comm init [--ranks 2,4,8] [--reps 7] [--warmup 1] [--max-failures 10] [--timeout S]\n"
    "       weft_bench_comm p2p  [--rank R] [--sizes 4M,16M,64M,256M] [--reps 3] [--bytes-per-rep 1G]\n"
    "                            [--min-iters 4] [--lat-iters 10000] [--lat-warmup 1000] [--label weft]\n"
    "                            [--timeout S]\n"
    "       weft_bench_comm coll [--op allreduce|allgather|reducescatter|broadcast] [--ranks 2,4] [--sizes 8,64K,1M,16M,64M]\n"
    "                            [--reps 3] [--bytes-per-rep 128M] [--min-iters 5] [--max-iters 1000]\n"
    "                            [--label weft] [--memcpy 0|1] [--hwm 0|1] [--timeout S]\n"
    "                            [--rank R --nranks N]\n"
    "init: N-rank communicators of forked processes on this host, time of weft_comm_init_rank.\n"
    "p2p: send/recv between two ranks: 8-byte ping-pong latency, then one-way streaming bandwidth.\n"
    "     Without --rank both ranks are forked here; with --rank this process is that rank and\n"
    "     the id comes from NCCL_COMM_ID=host:port (set the same for both ranks).\n"
    "coll: allreduce or reducescatter (float sum), allgather or broadcast (bytes, root 0) of N forked\n"
    "      ranks, nccl-tests' method; size is the whole buffer as in nccl-tests (allreduce's, allgather's\n"
    "      output, reducescatter's input, broadcast's); --memcpy 1 first times a single-thread memcpy;\n"
    "      --hwm 1 ends with every rank's peak resident memory (VmHWM) beside its largest buffers;\n"
    "      with --rank R --nranks N this process is rank R of N (started anywhere, e.g. one per\n"
    "      network namespace) and the id comes from NCCL_COMM_ID=host:port, as in p2p.\n"
    "Forked ranks are not bound to CPUs; WEFT_BENCH_BIND=auto binds them as mpirun does by default\n"
    "(one CPU each for 2 ranks or fewer, unbound above), =core always one CPU each (round robin).\n"
    "Prints `RESULT key=value ...` lines (bench/comm/run.sh makes the tables).\n";

// Flags after the mode, as name -> value (every flag takes a value).
struct Flags {
  std::vector<std::pair<std::string, std::string>> items;
  Flags(int argc, char** argv, int first) {
    for (int i = first; i < argc; i += 2) {
      if (std::strncmp(argv[i], "--", 2) != 0 || i + 1 >= argc)
        throw std::invalid_argument(std::string("bad argument: ") + argv[i]);
      items.emplace_back(argv[i] + 2, argv[i + 1]);
    }
  }
};

// This process is one rank of a job whose ranks were started apart (one per network namespace):
// the id comes from NCCL_COMM_ID, which every rank sets alike. An alarm bounds the whole run, even
// if a peer never comes.
int runOneRank(std::chrono::seconds timeout, const std::function<int(const weft_unique_id_t&)>& fn) {
  alarm(static_cast<unsigned>(timeout.count()));
  if (std::getenv("NCCL_COMM_ID") == nullptr) throw std::invalid_argument("--rank needs NCCL_COMM_ID=host:port");
  weft_unique_id_t id;
  if (weft_get_unique_id(&id) != weftSuccess) {
    std::fprintf(stderr, "weft_get_unique_id: %s\n", weft_last_error());
    return 1;
  }
  int rc = fn(id);
  std::fflush(stdout);
  return rc;
}

int mainInit(const Flags& f) {
  InitOptions o;
  for (const auto& [k, v] : f.items) {
    if (k == "ranks") {
      o.ranks.clear();
      for (const std::string& r : splitCommas(v)) o.ranks.push_back(std::stoi(r));
    } else if (k == "reps") o.reps = std::stoi(v);
    else if (k == "warmup") o.warmup = std::stoi(v);
    else if (k == "max-failures") o.maxFailures = std::stoi(v);
    else if (k == "timeout") o.timeout = std::chrono::seconds(std::stoi(v));
    else throw std::invalid_argument("unknown flag --" + k);
  }
  return runInit(o);
}

int mainP2p(const Flags& f) {
  P2pOptions o;
  int rank = -1;
  for (const auto& [k, v] : f.items) {
    if (k == "rank") rank = std::stoi(v);
    else if (k == "sizes") {
      o.sizes.clear();
      for (const std::string& s : splitCommas(v)) o.sizes.push_back(parseSize(s));
    } else if (k == "reps") o.reps = std::stoi(v);
    else if (k == "bytes-per-rep") o.bytesPerRep = parseSize(v);
    else if (k == "min-iters") o.minIters = std::stoi(v);
    else if (k == "lat-iters") o.latIters = std::stoi(v);
    else if (k == "lat-warmup") o.latWarmup = std::stoi(v);
    else if (k == "label") o.label = v;
    else if (k == "timeout") o.timeout = std::chrono::seconds(std::stoi(v));
    else throw std::invalid_argument("unknown flag --" + k);
  }
  if (rank < 0) {
    std::string failed = runRanks(2, o.timeout, [&](int r, const weft_unique_id_t& id) { return p2pRank(o, r, id); });
    if (!failed.empty()) std::fprintf(stderr, "p2p job failed: %s\n", failed.c_str());
    return failed.empty() ? 0 : 1;
  }
  if (rank > 1) throw std::invalid_argument("--rank must be 0 or 1");
  return runOneRank(o.timeout, [&](const weft_unique_id_t& id) { return p2pRank(o, rank, id); });
}

int mainColl(const Flags& f) {
  CollOptions o;
  std::vector<int> ranks{2, 4};
  bool memcpyToo = false;
  int rank = -1, nranks = 0;
  for (const auto& [k, v] : f.items) {
    if (k == "op") o.op = v;
    else if (k == "rank") rank = std::stoi(v);
    else if (k == "nranks") nranks = std::stoi(v);
    else if (k == "ranks") {
      ranks.clear();
      for (const std::string& r : splitCommas(v)) ranks.push_back(std::stoi(r));
    } else if (k == "sizes") {
      o.sizes.clear();
      for (const std::string& s : splitCommas(v)) o.sizes.push_back(parseSize(s));
    } else if (k == "reps") o.reps = std::stoi(v);
    else if (k == "bytes-per-rep") o.bytesPerRep = parseSize(v);
    else if (k == "min-iters") o.minIters = std::stoi(v);
    else if (k == "max-iters") o.maxIters = std::stoi(v);
    else if (k == "label") o.label = v;
    else if (k == "memcpy") memcpyToo = std::stoi(v) != 0;
    else if (k == "hwm") o.hwm = std::stoi(v) != 0;
    else if (k == "timeout") o.timeout = std::chrono::seconds(std::stoi(v));
    else throw std::invalid_argument("unknown flag --" + k);
  }
  if (o.op != "allreduce" && o.op != "allgather" && o.op != "reducescatter" && o.op != "broadcast")
    throw std::invalid_argument("--op must be allreduce, allgather, reducescatter or broadcast");
  auto checkSizes = [&](int n) {
    for (size_t b : o.sizes)
      if (b == 0 || b % sizeQuantum(o.op, n) != 0)
        throw std::invalid_argument("sizes must be multiples of 4 (allreduce), of the ranks (allgather) or of 4 x the "
                                    "ranks (reducescatter)");
  };
  if ((rank >= 0) != (nranks > 0)) throw std::invalid_argument("--rank and --nranks go together");
  if (rank >= 0) {
    if (rank >= nranks) throw std::invalid_argument("--rank must be below --nranks");
    checkSizes(nranks);
    if (memcpyToo) throw std::invalid_argument("--memcpy 1 runs without --rank only");
    return runOneRank(o.timeout, [&](const weft_unique_id_t& id) { return collRank(o, nranks, rank, id); });
  }
  if (memcpyToo) memcpyBandwidth(o);
  int rc = 0;
  for (int n : ranks) {
    checkSizes(n);
    std::string failed =
        runRanks(n, o.timeout, [&](int r, const weft_unique_id_t& id) { return collRank(o, n, r, id); });
    if (!failed.empty()) {
      std::fprintf(stderr, "coll job (%s, %d ranks) failed: %s\n", o.op.c_str(), n, failed.c_str());
      rc = 1;
    }
  }
  return rc;
}

}  // namespace
}  // namespace weft::bench::comm

int main(int argc, char** argv) {
  using namespace weft::bench::comm;
  if (argc < 2 || std::strcmp(argv[1], "--help") == 0 || std::strcmp(argv[1], "-h") == 0) {
    std::fputs(kUsage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  try {
    Flags f(argc, argv, 2);
    if (std::strcmp(argv[1], "init") == 0) return mainInit(f);
    if (std::strcmp(argv[1], "p2p") == 0) return mainP2p(f);
    if (std::strcmp(argv[1], "coll") == 0) return mainColl(f);
    throw std::invalid_argument(std::string("unknown mode: ") + argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "weft_bench_comm: %s\n%s", e.what(), kUsage);
    return 2;
  }
}
