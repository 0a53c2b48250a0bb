// Communicators across hosts. Emulated GPUs: every rank plays a GPU of a topology file, hosts are
// told apart by NCCL_HOSTID and talk through the socket plugin over loopback; each rank's Ring,
// Trees and Tree lines (and rank 0's channel list) must equal `weft search`'s for that rank.
// Real hosts: network namespaces made by the test, joined by veth pairs to a bridge in a switch
// namespace, one NCCL_HOSTID each, over the socket and the OFI (tcp) plugins.
// Every byte received is checked; every job runs under a deadline.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/ranks.h"
#include "tests/support/tool.h"

namespace weft::testing {
namespace {

constexpr const char* kTopology = WEFT_SOURCE_DIR "/examples/topologies/hgx-h100-8gpu.xml";
constexpr int kGpusPerHost = 8;  // GPUs of kTopology


// Each rank sends `bytes` to next and receives them from prev, in one group; checks every byte.
int exchange(weft_comm_t* comm, int rank, int next, int prev, size_t bytes, int msg) {
  std::vector<uint8_t> s(bytes), r(bytes, 0);
  for (size_t i = 0; i < bytes; ++i) s[i] = pattern(rank, msg, i);
  RANK_OK(weft_group_start());
  RANK_OK(weft_send(s.data(), bytes, weftUint8, next, comm, nullptr));
  RANK_OK(weft_recv(r.data(), bytes, weftUint8, prev, comm, nullptr));
  RANK_OK(weft_group_end());
  for (size_t i = 0; i < bytes; ++i)
    RANK_CHECK(r[i] == pattern(prev, msg, i), "rank %d, message %d: byte %zu of %zu from rank %d is wrong", rank, msg,
               i, bytes, prev);
  return 0;
}

// A float allreduce of `count` elements (enough to use every channel) checked element by element:
// small integers, so the sum is exact in any order.
int allreduceCheck(weft_comm_t* comm, int rank, int n, size_t count) {
  std::vector<float> in(count), out(count, -1);
  for (size_t i = 0; i < count; ++i) in[i] = static_cast<float>(i % 7 + static_cast<size_t>(rank));
  RANK_OK(weft_allreduce(in.data(), out.data(), count, weftFloat32, weftSum, comm, nullptr));
  for (size_t i = 0; i < count; ++i) {
    float want = static_cast<float>(static_cast<size_t>(n) * (i % 7) + static_cast<size_t>(n * (n - 1) / 2));
    RANK_CHECK(out[i] == want, "rank %d: allreduce element %zu is %g, expected %g", rank, i, static_cast<double>(out[i]),
               static_cast<double>(want));
  }
  return 0;
}

std::vector<std::string> splitLines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The per-rank graph lines `weft search` prints: Ring, Trees, Tree and rank 0's channel list
// ("Channel 00/16 :  0  7  6 …", not the connection lines "Channel 00/0 : 1[1] -> 0[0] via …").
bool isGraphLine(const std::string& text) {
  static const std::regex channelList("Channel [0-9]+/[0-9]+ :( +[0-9]+)+");
  return text.rfind("Ring ", 0) == 0 || text.rfind("Trees ", 0) == 0 || text.rfind("Tree ", 0) == 0 ||
         std::regex_match(text, channelList);
}

// The text after "NCCL INFO " of every graph line in a rank's output (NCCL's prefix
// "host:pid:tid [dev] NCCL INFO ", or weft search's "[rank] NCCL INFO ").
std::vector<std::string> graphLines(const std::string& output) {
  const std::string marker = " NCCL INFO ";
  std::vector<std::string> out;
  for (const std::string& line : splitLines(output)) {
    size_t at = line.find(marker);
    if (at == std::string::npos) continue;
    std::string text = line.substr(at + marker.size());
    if (isGraphLine(text)) out.push_back(text);
  }
  return out;
}

// The lines of `output` that contain `needle`.
std::vector<std::string> linesWith(const std::string& output, const std::string& needle) {
  std::vector<std::string> out;
  for (const std::string& line : splitLines(output))
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

// stdout of a shell command and its exit status.
struct CommandResult {
  int status = -1;
  std::string output;
};

CommandResult runCommand(const std::string& command) {
  CommandResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (p == nullptr) return r;
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) r.output.append(buf, n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// `weft search kTopology --nodes N --rank R`'s graph lines for every rank.
std::vector<std::vector<std::string>> searchLines(int nodes) {
  std::vector<std::vector<std::string>> out;
  for (int r = 0; r < nodes * kGpusPerHost; ++r) {
    CommandResult c = runCommand(std::string(WEFT_TOOL) + " search " + kTopology + " --nodes " + std::to_string(nodes) +
                                 " --rank " + std::to_string(r));
    EXPECT_EQ(c.status, 0) << c.output;
    out.push_back(graphLines(c.output));
  }
  return out;
}

// ring[c][r]: rank r's next rank on channel c, from the "Ring cc : prev -> r -> next" lines.
using Rings = std::vector<std::vector<int>>;

Rings ringsOf(const std::vector<std::vector<std::string>>& lines) {
  static const std::regex ring("Ring ([0-9]+) : (-?[0-9]+) -> ([0-9]+) -> (-?[0-9]+)");
  Rings rings;
  for (size_t r = 0; r < lines.size(); ++r) {
    for (const std::string& l : lines[r]) {
      std::smatch m;
      if (!std::regex_match(l, m, ring)) continue;
      size_t c = std::stoul(m[1]);
      if (rings.size() <= c) rings.resize(c + 1, std::vector<int>(lines.size(), -1));
      rings[c][r] = std::stoi(m[4]);
    }
  }
  return rings;
}

// The distinct rings (a channel's ring that an earlier channel has is left out).
Rings distinctRings(const Rings& rings) {
  std::set<std::vector<int>> seen;
  Rings out;
  for (const std::vector<int>& next : rings)
    if (seen.insert(next).second) out.push_back(next);
  return out;
}

int prevOf(const std::vector<int>& next, int rank) {
  for (size_t r = 0; r < next.size(); ++r)
    if (next[r] == rank) return static_cast<int>(r);
  return -1;
}

// ---------------------------------------------------------------------------------------------
// Emulated devices: hosts on loopback.

struct EmulatedCase {
  int hosts;
  std::string algo;  // NCCL_ALGO, "" for the default
  bool tuner = false;  // weft's YAML tuner with a rule for the 400 KB allreduce
};
void PrintTo(const EmulatedCase& c, std::ostream* os) {
  *os << c.hosts << " hosts " << c.algo << (c.tuner ? " tuner" : "");
}

class EmulatedHosts : public ::testing::TestWithParam<EmulatedCase> {};

TEST_P(EmulatedHosts, GraphLinesEqualWeftSearchAndRingsCarryEveryByte) {
  const int hosts = GetParam().hosts;
  const int n = hosts * kGpusPerHost;
  std::vector<std::vector<std::string>> expected = searchLines(hosts);
  for (int r = 0; r < n; ++r) {
    const std::vector<std::string>& lines = expected[static_cast<size_t>(r)];
    auto count = [&lines](const char* start) {
      return std::count_if(lines.begin(), lines.end(),
                           [start](const std::string& l) { return l.rfind(start, 0) == 0; });
    };
    // Rank 0 lists every channel's ring; the others print none.
    ASSERT_GT(count("Ring "), 0) << "weft search printed no Ring line for rank " << r;
    ASSERT_EQ(count("Trees "), 1) << "rank " << r;
    ASSERT_EQ(count("Channel "), r == 0 ? count("Ring ") : 0) << "rank " << r;
  }
  Rings rings = distinctRings(ringsOf(expected));
  for (const std::vector<int>& next : rings)
    for (int r = 0; r < n; ++r) ASSERT_GE(prevOf(next, r), 0) << "a ring of weft search does not reach rank " << r;

  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(240);  // 16 processes on a small machine
  spec.env[-1] = {{"NCCL_TOPO_FILE", kTopology},
                  {"NCCL_DEBUG", "INFO"},
                  {"NCCL_DEBUG_SUBSYS", "INIT,GRAPH,TUNING"},
                  {"NCCL_SOCKET_IFNAME", "lo"},
                  {"NCCL_NET", "Socket"}};
  if (!GetParam().algo.empty()) spec.env[-1]["NCCL_ALGO"] = GetParam().algo;
  std::string rules = ::testing::TempDir() + "weft-hosts-tuner-" + std::to_string(getpid()) + ".yaml";
  if (GetParam().tuner) {
    std::ofstream(rules) << "TUNER_RULES:\n  - {coll: allreduce, size: 300K-500K, algo: ring, proto: simple, channels: 2}\n";
    spec.env[-1]["NCCL_TUNER_PLUGIN"] = "weft";
    spec.env[-1]["WEFT_TUNER_RULES_FILE"] = rules;
  }
  for (int r = 0; r < n; ++r) spec.env[r]["NCCL_HOSTID"] = r < kGpusPerHost ? "hostA" : "hostB";
  auto out = runJob(spec, [n, &rings](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
    int dev = -1;
    RANK_OK(weft_comm_cu_device(comm, &dev));
    RANK_CHECK(dev == rank % kGpusPerHost, "rank %d plays device %d", rank, dev);
    int msg = 0;
    if (exchange(comm, rank, (rank + 1) % n, (rank - 1 + n) % n, (4 << 20) + 3, ++msg) != 0) return 1;
    for (const std::vector<int>& next : rings)
      if (exchange(comm, rank, next[static_cast<size_t>(rank)], prevOf(next, rank), 2 << 20, ++msg) != 0) return 1;
    // 16 MiB: one channel per 512 KiB, so every channel the search built carries a part (over
    // its ring, or with NCCL_ALGO=Tree its tree: tree 0 and tree 1 alternate). Then 400 KB: Tree
    // by default across hosts.
    if (allreduceCheck(comm, rank, n, (16 << 20) / sizeof(float)) != 0) return 1;
    if (allreduceCheck(comm, rank, n, 100003) != 0) return 1;
    return closeComm(comm);
  });
  std::remove(rules.c_str());
  ASSERT_EQ(failures(out), "");
  for (int r = 0; r < n; ++r) {
    const std::string& output = out[static_cast<size_t>(r)].output;
    EXPECT_EQ(graphLines(output), expected[static_cast<size_t>(r)])
        << "rank " << r << "'s lines differ from `weft search " << kTopology << " --nodes " << hosts << " --rank " << r
        << "`";
    EXPECT_EQ(linesWith(output, " NCCL WARN "), std::vector<std::string>()) << "rank " << r;
    size_t netLines = hosts > 1 ? 1 : 0;  // one host: every peer over shared memory, no net plugin
    if (r == 0) {
      // NCCL's per-operation TUNING line: its model's choice among the host path's Ring and Tree
      // (from `weft tune … --nodes 2 --explain`: Ring/LL128 at 16 MiB once NVLSTree is out,
      // Tree/LL128 at 400 KB), over NCCL's channel budget.
      bool tree = GetParam().algo == "Tree";
      std::string big = tree ? "AllReduce: 16777216 Bytes -> Algo TREE proto " : "AllReduce: 16777216 Bytes -> Algo RING proto LL128";
      EXPECT_EQ(linesWith(output, big).size(), 1u) << output;
      if (GetParam().tuner) {
        // The rule's cell and channel budget: 400012 bytes in 2 channels of 25 and 24 cells.
        EXPECT_EQ(linesWith(output, "AllReduce: 400012 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}").size(), 1u)
            << output;
        EXPECT_EQ(linesWith(output, "TUNER/weft: AllReduce 400012 bytes: rule " + rules + ":2").size(), 1u) << output;
      } else if (hosts > 1) {
        EXPECT_EQ(linesWith(output, "AllReduce: 400012 Bytes -> Algo TREE proto LL128 channel{Lo..Hi}={0..").size(), 1u)
            << output;
      }
    }
    size_t treeLines = (hosts > 1 && !GetParam().tuner) || GetParam().algo == "Tree" ? 1 : 0;
    EXPECT_EQ(linesWith(output, "NCCL INFO Connected all trees").size(), treeLines) << "rank " << r;
    EXPECT_EQ(linesWith(output, "NCCL INFO Using network Socket").size(), netLines) << "rank " << r << ":\n" << output;
  }
}

INSTANTIATE_TEST_SUITE_P(Hgx8Gpu, EmulatedHosts,
                         ::testing::Values(EmulatedCase{1, ""}, EmulatedCase{2, ""}, EmulatedCase{2, "Tree"},
                                           EmulatedCase{2, "", true}),
                         [](const auto& p) {
                           return std::to_string(p.param.hosts) + "hosts" + p.param.algo + (p.param.tuner ? "YamlTuner" : "");
                         });

// CPU endpoints on two hosts (loopback, NCCL_HOSTID) with weft's YAML tuner: its rules override
// weft's size rule (Tree below 512 KiB across hosts, else Ring) one way and the other, and the
// sizes no rule matches keep the size rule; every result is checked.
TEST(CpuHostsTuner, YamlRulesOverrideTheSizeRule) {
  const int n = 2;
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(120);
  std::string rules = ::testing::TempDir() + "weft-cpu-tuner-" + std::to_string(getpid()) + ".yaml";
  std::ofstream(rules) << "TUNER_RULES:\n"
                          "  - {coll: allreduce, size: 1M-2M, algo: tree}\n"
                          "  - {coll: allreduce, size: 8-64K, algo: ring}\n";
  spec.env[-1] = {{"NCCL_SOCKET_IFNAME", "lo"}, {"NCCL_NET", "Socket"},       {"NCCL_DEBUG", "INFO"},
                  {"NCCL_DEBUG_SUBSYS", "INIT,TUNING"}, {"NCCL_TUNER_PLUGIN", "weft"}, {"WEFT_TUNER_RULES_FILE", rules}};
  for (int r = 0; r < n; ++r) spec.env[r]["NCCL_HOSTID"] = "cpu-tuner-host" + std::to_string(r);
  auto out = runJob(spec, [](int rank, const weft_unique_id_t& id) {
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
    for (size_t bytes : {size_t{16} << 10, size_t{256} << 10, size_t{1} << 20, size_t{4} << 20})
      if (allreduceCheck(comm, rank, n, bytes / sizeof(float)) != 0) return 1;
    return closeComm(comm);
  });
  std::remove(rules.c_str());
  ASSERT_EQ(failures(out), "");
  const std::string& output = out[0].output;
  EXPECT_EQ(linesWith(output, "AllReduce: 16384 Bytes -> Algo RING proto SIMPLE").size(), 1u) << output;   // rule 2
  EXPECT_EQ(linesWith(output, "AllReduce: 262144 Bytes -> Algo TREE proto SIMPLE").size(), 1u) << output;  // size rule
  EXPECT_EQ(linesWith(output, "AllReduce: 1048576 Bytes -> Algo TREE proto SIMPLE").size(), 1u) << output; // rule 1
  EXPECT_EQ(linesWith(output, "AllReduce: 4194304 Bytes -> Algo RING proto SIMPLE").size(), 1u) << output; // size rule
  EXPECT_EQ(linesWith(output, "TUNER/weft: AllReduce 1048576 bytes: rule " + rules + ":2").size(), 1u) << output;
  for (const RankOutcome& o : out) EXPECT_EQ(linesWith(o.output, " NCCL WARN "), std::vector<std::string>()) << o.output;
}

// ---------------------------------------------------------------------------------------------
// Hosts in network namespaces.

constexpr const char* kNetnsPrefix = "weft-hosts-";

// Removes the namespaces that a test process killed before its destructors ran (a ctest
// timeout) left behind: "weft-hosts-<pid>-…" of a pid that no longer runs.
void removeStaleNetns() {
  static const std::regex ours(std::string(kNetnsPrefix) + "([0-9]+)-[0-9]+-(sw|h[0-9]+)");
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/var/run/netns", ec)) {
    std::string name = e.path().filename().string();
    std::smatch m;
    if (!std::regex_match(name, m, ours)) continue;
    if (std::filesystem::exists("/proc/" + m[1].str(), ec)) continue;
    runCommand("ip netns delete " + name);
  }
}

// Network namespaces "weft-hosts-<pid>-<n>-sw" (a bridge) and "…-h<i>" (host i, interface
// veth<i> with 10.77.0.<i+1>/24, its peer on the bridge), removed with everything in them on
// destruction, whatever happened in between.
class NetnsLab {
 public:
  explicit NetnsLab(int hosts) {
    static int instance = 0;
    removeStaleNetns();
    prefix_ = kNetnsPrefix + std::to_string(getpid()) + "-" + std::to_string(++instance);
    if (!add(prefix_ + "-sw")) return;
    std::string sw = prefix_ + "-sw";
    if (!run("ip -n " + sw + " link set lo up") ||
        !run("ip -n " + sw + " link add br0 type bridge forward_delay 0 stp_state 0") ||
        !run("ip -n " + sw + " link set br0 up"))
      return;
    for (int i = 0; i < hosts; ++i) {
      std::string h = host(i);
      std::string veth = ifname(i);
      std::string port = "p" + std::to_string(i);
      if (!add(h) || !run("ip -n " + h + " link set lo up") ||
          !run("ip -n " + h + " link add " + veth + " type veth peer name " + port + " netns " + sw) ||
          !run("ip -n " + sw + " link set " + port + " master br0 up") ||
          !run("ip -n " + h + " addr add " + address(i) + "/24 dev " + veth) ||
          !run("ip -n " + h + " link set " + veth + " up"))
        return;
    }
    // A veth reports its carrier (LOWER_UP) asynchronously, up to a second after `link set up`:
    // wait for every host's link, with a deadline, so the ranks start on a network that passes
    // packets.
    for (int i = 0; i < hosts; ++i)
      if (!waitForCarrier(host(i), ifname(i))) return;
    ready_ = true;
  }

  ~NetnsLab() {
    for (auto it = made_.rbegin(); it != made_.rend(); ++it) {
      CommandResult r = runCommand("ip netns delete " + *it);
      if (r.status != 0) ADD_FAILURE() << "could not remove network namespace " << *it << ": " << r.output;
    }
  }

  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  bool ready() const { return ready_; }
  bool couldNotCreate() const { return made_.empty(); }
  const std::string& error() const { return error_; }
  std::string host(int i) const { return prefix_ + "-h" + std::to_string(i); }
  static std::string ifname(int i) { return "veth" + std::to_string(i); }
  static std::string address(int i) { return "10.77.0." + std::to_string(i + 1); }

 private:
  bool add(const std::string& name) {
    if (!run("ip netns add " + name)) return false;
    made_.push_back(name);
    return true;
  }

  bool waitForCarrier(const std::string& ns, const std::string& itf) {
    std::string command = "ip -n " + ns + " -o link show " + itf;
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    CommandResult r;
    while (std::chrono::steady_clock::now() < deadline) {
      r = runCommand(command);
      if (r.status == 0 && r.output.find("LOWER_UP") != std::string::npos) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    error_ = itf + " in " + ns + " had no carrier (LOWER_UP) 10 s after it was set up: " + r.output;
    return false;
  }

  bool run(const std::string& command) {
    CommandResult r = runCommand(command);
    if (r.status == 0) return true;
    error_ = "`" + command + "` failed: " + r.output;
    while (!error_.empty() && error_.back() == '\n') error_.pop_back();
    return false;
  }

  std::string prefix_;
  std::vector<std::string> made_;
  std::string error_;
  bool ready_ = false;
};

// Moves the calling (single-threaded, forked) process into network namespace `name`.
int enterNetns(const std::string& name) {
  std::string path = "/var/run/netns/" + name;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  RANK_CHECK(fd >= 0, "open %s: %s", path.c_str(), std::strerror(errno));
  int rc = setns(fd, CLONE_NEWNET);
  int err = errno;
  close(fd);
  RANK_CHECK(rc == 0, "setns %s: %s", path.c_str(), std::strerror(err));
  return 0;
}

struct NetnsCase {
  int hosts;
  int ranksPerHost;
  std::string plugin;  // "Socket" or "OFI", as the plugins name themselves
  std::string algo;    // NCCL_ALGO, "" for the default
};

void PrintTo(const NetnsCase& c, std::ostream* os) {
  *os << c.hosts << " hosts x " << c.ranksPerHost << " ranks over " << c.plugin << (c.algo.empty() ? "" : ", " + c.algo);
}

class NetnsHosts : public ::testing::TestWithParam<NetnsCase> {};

// Every rank: ring exchanges in rank order (1 B to 3 MiB), then 64 MiB to the same local rank of
// the next host (every message crosses a host).
int netnsRank(int rank, int n, int ranksPerHost) {
  weft_unique_id_t id;
  RANK_OK(weft_get_unique_id(&id));  // NCCL_COMM_ID: the same id everywhere, no side channel
  weft_comm_t* comm = nullptr;
  RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
  int msg = 0;
  for (size_t bytes : {size_t{1}, size_t{4097}, size_t{3} << 20})
    if (exchange(comm, rank, (rank + 1) % n, (rank - 1 + n) % n, bytes, ++msg) != 0) return 1;
  if (exchange(comm, rank, (rank + ranksPerHost) % n, (rank - ranksPerHost + n) % n, size_t{64} << 20, ++msg) != 0)
    return 1;
  // 8 MiB on every channel (Ring by default), then 400 KB (Tree by default across hosts).
  if (allreduceCheck(comm, rank, n, (8 << 20) / sizeof(float)) != 0) return 1;
  if (allreduceCheck(comm, rank, n, 100003) != 0) return 1;
  return closeComm(comm);
}

TEST_P(NetnsHosts, RingsAnd64MiBCrossHostsThroughThePlugin) {
  const NetnsCase& tc = GetParam();
  if (tc.plugin == "OFI" && !std::filesystem::exists(WEFT_PLUGIN_OUTPUT_DIR "/libweft-net-ofi.so"))
    GTEST_SKIP() << "the OFI plugin is not built (WEFT_WITH_OFI=OFF)";
#if defined(__SANITIZE_ADDRESS__)
  // Under ASan each OFI case takes 25-95 s (libfabric's tcp provider copies through instrumented
  // memcpy): CI's sanitizer stage runs 3hostsOf1OverOFI, the case that once hung there (2026-11-25;
  // not reproduced since: 8 runs then, 4 runs of all three cases on 2026-11-28, one under a full
  // test load; the job's 240 s deadline turns a hang into a failure naming the ranks), and leaves
  // the 2x2 cases to the plain build unless WEFT_ASAN_OFI=1.
  if (tc.plugin == "OFI" && tc.hosts != 3 && std::getenv("WEFT_ASAN_OFI") == nullptr)
    GTEST_SKIP() << "the 2x2 OFI cases run in the plain build (and under AddressSanitizer with WEFT_ASAN_OFI=1); "
                    "3hostsOf1OverOFI runs here";
#endif
  NetnsLab lab(tc.hosts);
  if (lab.couldNotCreate()) GTEST_SKIP() << "cannot create network namespaces: " << lab.error();
  ASSERT_TRUE(lab.ready()) << lab.error();

  const int n = tc.hosts * tc.ranksPerHost;
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(240);
  spec.shareId = false;
  // A fixed port: the namespace is the test's own.
  spec.env[-1] = {{"NCCL_COMM_ID", NetnsLab::address(0) + ":29500"},
                  {"NCCL_DEBUG", "INFO"},
                  {"NCCL_DEBUG_SUBSYS", "INIT,NET"},
                  {"NCCL_NET", tc.plugin}};
  if (!tc.algo.empty()) spec.env[-1]["NCCL_ALGO"] = tc.algo;
  if (tc.plugin == "OFI") {
    spec.env[-1]["NCCL_NET_PLUGIN"] = "weft-ofi";
    spec.env[-1]["WEFT_OFI_PROVIDER"] = "tcp";
  }
  std::vector<std::string> netns;
  for (int r = 0; r < n; ++r) {
    int h = r / tc.ranksPerHost;
    netns.push_back(lab.host(h));
    spec.env[r]["NCCL_HOSTID"] = "netns-host" + std::to_string(h);
    spec.env[r]["NCCL_SOCKET_IFNAME"] = NetnsLab::ifname(h);
    // libfabric's own knob for the tcp provider's interface (1.17 still lists lo as a domain).
    if (tc.plugin == "OFI") spec.env[r]["FI_TCP_IFACE"] = NetnsLab::ifname(h);
  }
  const int perHost = tc.ranksPerHost;
  auto out = runJob(spec, [&netns, n, perHost](int rank, const weft_unique_id_t&) {
    if (enterNetns(netns[static_cast<size_t>(rank)]) != 0) return 1;
    return netnsRank(rank, n, perHost);
  });
  ASSERT_EQ(failures(out), "");
  for (int r = 0; r < n; ++r) {
    const std::string& output = out[static_cast<size_t>(r)].output;
    EXPECT_EQ(linesWith(output, "NCCL INFO Using network " + tc.plugin).size(), 1u) << "rank " << r << ":\n" << output;
    EXPECT_FALSE(linesWith(output, " via NET/" + tc.plugin + "/").empty()) << "rank " << r << ":\n" << output;
    // The 400 KB allreduce crossed hosts over the trees (connected at their first use).
    EXPECT_EQ(linesWith(output, "NCCL INFO Connected all trees").size(), 1u) << "rank " << r;
    EXPECT_EQ(linesWith(output, " NCCL WARN "), std::vector<std::string>()) << "rank " << r;
  }
}

INSTANTIATE_TEST_SUITE_P(Veth, NetnsHosts,
                         ::testing::Values(NetnsCase{2, 2, "Socket", ""}, NetnsCase{3, 1, "Socket", ""},
                                           NetnsCase{2, 2, "Socket", "Tree"}, NetnsCase{3, 1, "Socket", "Tree"},
                                           NetnsCase{2, 2, "OFI", ""}, NetnsCase{3, 1, "OFI", ""},
                                           NetnsCase{2, 2, "OFI", "Tree"}),
                         [](const auto& p) {
                           return std::to_string(p.param.hosts) + "hostsOf" + std::to_string(p.param.ranksPerHost) +
                                  "Over" + p.param.plugin + p.param.algo;
                         });

// Two hosts call allreduces of the same size but another datatype (float32 against int32): the
// signature that rides on the first step through the plugin makes a rank fail naming both calls
// at once, and the other learns it from the watch ring; nobody waits, nobody sums garbage.
class NetnsMismatch : public ::testing::TestWithParam<std::string> {};

TEST_P(NetnsMismatch, ADatatypeOfTheSameSizeFailsAcrossHosts) {
  const std::string plugin = GetParam();
  if (plugin == "OFI" && !std::filesystem::exists(WEFT_PLUGIN_OUTPUT_DIR "/libweft-net-ofi.so"))
    GTEST_SKIP() << "the OFI plugin is not built (WEFT_WITH_OFI=OFF)";
#if defined(__SANITIZE_ADDRESS__)
  if (plugin == "OFI" && std::getenv("WEFT_ASAN_OFI") == nullptr)
    GTEST_SKIP() << "OFI across namespaces is not run under AddressSanitizer unless WEFT_ASAN_OFI=1 (see NetnsHosts)";
#endif
  NetnsLab lab(2);
  if (lab.couldNotCreate()) GTEST_SKIP() << "cannot create network namespaces: " << lab.error();
  ASSERT_TRUE(lab.ready()) << lab.error();
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(90);
  spec.shareId = false;
  spec.env[-1] = {{"NCCL_COMM_ID", NetnsLab::address(0) + ":29500"}, {"NCCL_NET", plugin}, {"WEFT_PEER_TIMEOUT", "0"}};
  if (plugin == "OFI") {
    spec.env[-1]["NCCL_NET_PLUGIN"] = "weft-ofi";
    spec.env[-1]["WEFT_OFI_PROVIDER"] = "tcp";
  }
  std::vector<std::string> netns;
  for (int r = 0; r < 2; ++r) {
    netns.push_back(lab.host(r));
    spec.env[r]["NCCL_HOSTID"] = "netns-host" + std::to_string(r);
    spec.env[r]["NCCL_SOCKET_IFNAME"] = NetnsLab::ifname(r);
    if (plugin == "OFI") spec.env[r]["FI_TCP_IFACE"] = NetnsLab::ifname(r);
  }
  SharedCounters found(1);
  auto out = runJob(spec, [&netns, &found](int rank, const weft_unique_id_t&) {
    if (enterNetns(netns[static_cast<size_t>(rank)]) != 0) return 1;
    weft_unique_id_t id;
    RANK_OK(weft_get_unique_id(&id));
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    std::vector<float> buf(1024, 1.0f);
    RANK_OK(weft_allreduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm, nullptr));
    auto t0 = std::chrono::steady_clock::now();
    weft_result_t rc = weft_allreduce(buf.data(), buf.data(), buf.size(), rank == 0 ? weftFloat32 : weftInt32, weftSum,
                                      comm, nullptr);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const char* why = weft_last_error();
    RANK_CHECK(rc != weftSuccess, "rank %d: the mismatched allreduce succeeded", rank);
    RANK_CHECK(s < 10, "rank %d: failed only after %.1f s: %s", rank, s, why);
    // The rank that found it says so; its peer learns it from the watch ring, reason included.
    if (std::strstr(why, "mismatched calls") != nullptr && std::strstr(why, "(passed on by") == nullptr) {
      RANK_CHECK(rc == weftInvalidUsage && std::strstr(why, "Float32") != nullptr && std::strstr(why, "Int32") != nullptr &&
                     std::strstr(why, "the datatype differs") != nullptr,
                 "rank %d: %d: %s", rank, static_cast<int>(rc), why);
      found.add(0);
    } else {
      RANK_CHECK(std::strstr(why, ("rank " + std::to_string(1 - rank)).c_str()) != nullptr,
                 "rank %d: the error names neither the mismatch nor the peer: %s", rank, why);
    }
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
  EXPECT_GE(found.get(0), 1) << "no rank reported the mismatched calls";
}

INSTANTIATE_TEST_SUITE_P(Veth, NetnsMismatch, ::testing::Values("Socket", "OFI"),
                         [](const auto& p) { return "Over" + p.param; });

// A link taken down in the middle of collectives (no FIN reaches anyone: a cut cable, a
// partition): every rank fails naming a peer within the heartbeat timeout, none hangs.
TEST(NetnsFaults, LinkTakenDownMidCollectiveFailsEveryRankWithinThePeerTimeout) {
  NetnsLab lab(2);
  if (lab.couldNotCreate()) GTEST_SKIP() << "cannot create network namespaces: " << lab.error();
  ASSERT_TRUE(lab.ready()) << lab.error();
  const int n = 2;
  constexpr int kTimeout = 3;
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(90);
  spec.shareId = false;
  spec.env[-1] = {{"NCCL_COMM_ID", NetnsLab::address(0) + ":29500"}, {"NCCL_NET", "Socket"},
                  {"WEFT_PEER_TIMEOUT", std::to_string(kTimeout)}};
  std::vector<std::string> netns;
  for (int r = 0; r < n; ++r) {
    netns.push_back(lab.host(r));
    spec.env[r]["NCCL_HOSTID"] = "netns-host" + std::to_string(r);
    spec.env[r]["NCCL_SOCKET_IFNAME"] = NetnsLab::ifname(r);
  }
  auto out = runJob(spec, [&netns](int rank, const weft_unique_id_t&) {
    if (enterNetns(netns[static_cast<size_t>(rank)]) != 0) return 1;
    weft_unique_id_t id;
    RANK_OK(weft_get_unique_id(&id));
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    std::vector<float> buf(size_t{4} << 20, 1.0f);
    RANK_OK(weft_allreduce(buf.data(), buf.data(), 1024, weftFloat32, weftSum, comm, nullptr));
    if (rank == 1) {
      // This host's only link goes down while the collectives below run.
      std::thread cut([] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        if (std::system(("ip link set " + NetnsLab::ifname(1) + " down").c_str()) != 0) std::fprintf(stderr, "ip link failed\n");
      });
      cut.detach();
    }
    auto t0 = std::chrono::steady_clock::now();
    weft_result_t rc = weftSuccess;
    for (int i = 0; i < 1000 && rc == weftSuccess; ++i)
      rc = weft_allreduce(buf.data(), buf.data(), buf.size(), weftFloat32, weftSum, comm, nullptr);
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    RANK_CHECK(rc == weftRemoteError, "rank %d: returned %d after %.1f s: %s", rank, static_cast<int>(rc), s, weft_last_error());
    RANK_CHECK(std::strstr(weft_last_error(), ("rank " + std::to_string(1 - rank)).c_str()) != nullptr,
               "rank %d: the error does not name the peer: %s", rank, weft_last_error());
    RANK_CHECK(s < 2 * kTimeout + 10, "rank %d: failed only after %.1f s", rank, s);
    std::fprintf(stderr, "rank %d: failed after %.1f s: %s\n", rank, s, weft_last_error());
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  EXPECT_EQ(failures(out), "");
}

// A lossy, slow link (the lab's stand-in for `tc netem`, which this kernel lacks): on each host
// nftables drops a share of the outgoing packets at random and a token bucket (tbf) holds the veth
// to 200 Mbit/s, its queue adding up to 50 ms of delay. Over the socket and the OFI plugins the job
// runs slower but every byte arrives right, and nobody fails: loss and delay are not a dead peer.
class NetnsImpaired : public ::testing::TestWithParam<std::string> {};

TEST_P(NetnsImpaired, LossAndASlowLinkSlowTheJobButNeverCorruptIt) {
  const std::string plugin = GetParam();
  if (plugin == "OFI" && !std::filesystem::exists(WEFT_PLUGIN_OUTPUT_DIR "/libweft-net-ofi.so"))
    GTEST_SKIP() << "the OFI plugin is not built (WEFT_WITH_OFI=OFF)";
  if (runCommand("command -v nft").status != 0) GTEST_SKIP() << "nft (nftables) is not installed";
  NetnsLab lab(2);
  if (lab.couldNotCreate()) GTEST_SKIP() << "cannot create network namespaces: " << lab.error();
  ASSERT_TRUE(lab.ready()) << lab.error();
  constexpr int kLossPercent = 2;
  for (int h = 0; h < 2; ++h) {
    std::string ns = "ip netns exec " + lab.host(h) + " ";
    CommandResult r = runCommand(ns + "nft add table inet weftlab && " + ns +
                                 "nft add chain inet weftlab out '{ type filter hook output priority 0; }' && " + ns +
                                 "nft add rule inet weftlab out oifname " + NetnsLab::ifname(h) + " numgen random mod 100 '<' " +
                                 std::to_string(kLossPercent) + " counter drop && " + ns + "tc qdisc add dev " +
                                 NetnsLab::ifname(h) + " root tbf rate 200mbit burst 64kb latency 50ms");
    ASSERT_EQ(r.status, 0) << "could not impair host " << h << ": " << r.output;
  }
  const int n = 2;
  JobSpec spec;
  spec.nranks = n;
  spec.deadline = std::chrono::seconds(240);
  spec.shareId = false;
  spec.env[-1] = {{"NCCL_COMM_ID", NetnsLab::address(0) + ":29500"}, {"NCCL_NET", plugin}, {"WEFT_PEER_TIMEOUT", "20"}};
  if (plugin == "OFI") {
    spec.env[-1]["NCCL_NET_PLUGIN"] = "weft-ofi";
    spec.env[-1]["WEFT_OFI_PROVIDER"] = "tcp";
  }
  std::vector<std::string> netns;
  for (int r = 0; r < n; ++r) {
    netns.push_back(lab.host(r));
    spec.env[r]["NCCL_HOSTID"] = "netns-host" + std::to_string(r);
    spec.env[r]["NCCL_SOCKET_IFNAME"] = NetnsLab::ifname(r);
    if (plugin == "OFI") spec.env[r]["FI_TCP_IFACE"] = NetnsLab::ifname(r);
  }
  auto out = runJob(spec, [&netns, n](int rank, const weft_unique_id_t&) {
    if (enterNetns(netns[static_cast<size_t>(rank)]) != 0) return 1;
    weft_unique_id_t id;
    RANK_OK(weft_get_unique_id(&id));
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, n, id, rank));
    int msg = 0;
    for (size_t bytes : {size_t{1}, size_t{4097}, size_t{3} << 20})
      if (exchange(comm, rank, (rank + 1) % n, (rank - 1 + n) % n, bytes, ++msg) != 0) return 1;
    for (int round = 0; round < 3; ++round) {
      if (allreduceCheck(comm, rank, n, (4 << 20) / sizeof(float)) != 0) return 1;
      if (allreduceCheck(comm, rank, n, 100003) != 0) return 1;
    }
    return closeComm(comm);
  });
  EXPECT_EQ(failures(out), "");
  // The impairment was real: packets were dropped on both hosts and the token bucket held some back.
  for (int h = 0; h < 2; ++h) {
    CommandResult drops = runCommand("ip netns exec " + lab.host(h) + " nft list table inet weftlab");
    std::smatch m;
    static const std::regex counter("counter packets ([0-9]+)");
    ASSERT_TRUE(std::regex_search(drops.output, m, counter)) << drops.output;
    EXPECT_GT(std::stoll(m[1].str()), 0) << "host " << h << " dropped nothing: " << drops.output;
    CommandResult tbf = runCommand("tc -n " + lab.host(h) + " -s qdisc show dev " + NetnsLab::ifname(h));
    static const std::regex overlimits("overlimits ([0-9]+)");
    std::smatch o;
    ASSERT_TRUE(tbf.output.find("tbf") != std::string::npos && std::regex_search(tbf.output, o, overlimits)) << tbf.output;
    EXPECT_GT(std::stoll(o[1].str()), 0) << "host " << h << "'s token bucket never held a packet back: " << tbf.output;
    std::printf("host %d: %s\n%s", h, m[0].str().c_str(), tbf.output.c_str());
  }
}

INSTANTIATE_TEST_SUITE_P(Lab, NetnsImpaired, ::testing::Values("Socket", "OFI"),
                         [](const auto& p) { return "Over" + p.param; });

// `weft status` on a partitioned job: host 1's link is down (no FIN, and the heartbeat timeout is
// long), and asked on host 0 weft status still answers within a second and names the rank it
// cannot reach.
TEST(NetnsFaults, WeftStatusOnAPartitionedJobNamesTheUnreachableRank) {
  NetnsLab lab(2);
  if (lab.couldNotCreate()) GTEST_SKIP() << "cannot create network namespaces: " << lab.error();
  ASSERT_TRUE(lab.ready()) << lab.error();
  char tmpl[] = "/tmp/weft-status-test-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  SharedCounters sync(3);
  JobSpec spec;
  spec.nranks = 2;
  spec.deadline = std::chrono::seconds(90);
  spec.shareId = false;
  spec.env[-1] = {{"NCCL_COMM_ID", NetnsLab::address(0) + ":29500"}, {"NCCL_NET", "Socket"},
                  {"WEFT_PEER_TIMEOUT", "120"}, {"WEFT_STATUS_DIR", dir}};
  std::vector<std::string> netns;
  for (int r = 0; r < 2; ++r) {
    netns.push_back(lab.host(r));
    spec.env[r]["NCCL_HOSTID"] = "netns-host" + std::to_string(r);
    spec.env[r]["NCCL_SOCKET_IFNAME"] = NetnsLab::ifname(r);
  }
  auto out = runJob(spec, [&](int rank, const weft_unique_id_t&) {
    if (enterNetns(netns[static_cast<size_t>(rank)]) != 0) return 1;
    weft_unique_id_t id;
    RANK_OK(weft_get_unique_id(&id));
    weft_comm_t* comm = nullptr;
    RANK_OK(weft_comm_init_rank(&comm, 2, id, rank));
    int v = 1;
    RANK_OK(weft_allreduce(&v, &v, 1, weftInt32, weftSum, comm, nullptr));
    RANK_CHECK(sync.arriveAndWait(0, 2, std::chrono::seconds(30)), "barrier");
    if (rank == 1) {
      RANK_CHECK(std::system(("ip link set " + NetnsLab::ifname(1) + " down").c_str()) == 0, "ip link set down failed");
      sync.add(1);
      RANK_CHECK(sync.waitFor(2, 1, std::chrono::seconds(30)), "rank 0 never asked");
    } else {
      RANK_CHECK(sync.waitFor(1, 1, std::chrono::seconds(30)), "rank 1 never cut its link");
      auto t0 = std::chrono::steady_clock::now();
      test::ToolOutcome o = test::runCommand("WEFT_STATUS_DIR=" + dir + " " + test::weftTool() + " status --format json");
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      sync.add(2);
      std::fprintf(stderr, "%s\n", o.out.c_str());
#if defined(__SANITIZE_ADDRESS__)
      constexpr double kLimit = 3.0;  // a sanitizer build's `weft` starts slower
#else
      constexpr double kLimit = 1.5;
#endif
      RANK_CHECK(o.rc == 0 && s < kLimit, "weft status: exit %d after %.2f s: %s", o.rc, s, o.out.c_str());
      RANK_CHECK(o.out.find("\"noAnswer\":[1]") != std::string::npos, "%s", o.out.c_str());
    }
    RANK_OK(weft_comm_abort(comm));
    return 0;
  });
  (void)std::system(("rm -rf " + dir).c_str());
  EXPECT_EQ(failures(out), "");
}

}  // namespace
}  // namespace weft::testing
