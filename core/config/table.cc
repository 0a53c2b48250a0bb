// The rows of the settings table. Defaults and meanings are NCCL 2.28's
// (reference/nccl-facts.md §6.2, net-plugin-ecosystem.md §4.1); WEFT_* rows are weft's own.
// docs/settings.md is generated from these rows (`weft info --config --format markdown`).
#include "core/config/table.h"

namespace weft::config {
namespace {

constexpr IntRange kFlag{0, 1};
constexpr IntRange kNonNegative{0};
constexpr IntRange kTriState{0, 2};  // 0 off, 1 on, 2 auto

std::vector<SettingDef> topologyRows() {
  return {
      {.name = "NCCL_TOPO_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "Topology XML that detection completes (unset: /var/run/nvidia-topologyd/virtualTopology.xml if present)",
       .module = "topo"},
      {.name = "NCCL_TOPO_DUMP_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "Write the fused topology XML to this file", .module = "topo"},
      {.name = "NCCL_TOPO_DUMP_FILE_RANK", .type = Type::kInt, .defaultValue = "0",
       .doc = "Rank that writes NCCL_TOPO_DUMP_FILE", .module = "topo", .range = kNonNegative},
      {.name = "NCCL_GRAPH_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "Load graphs from this XML instead of searching", .module = "topo/search"},
      {.name = "NCCL_GRAPH_DUMP_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "Write the searched graphs to this file", .module = "topo/search"},
      {.name = "NCCL_GRAPH_DUMP_FILE_RANK", .type = Type::kInt, .defaultValue = "0",
       .doc = "Rank that writes NCCL_GRAPH_DUMP_FILE", .module = "topo/search", .range = kNonNegative},
      {.name = "NCCL_CROSS_NIC", .type = Type::kInt, .defaultValue = "2",
       .doc = "0: same NIC at both ends of a ring, 1: allow different NICs, 2: try without then with",
       .module = "topo/search", .range = kTriState},
      {.name = "NCCL_MIN_NCHANNELS", .aliases = {"NCCL_MIN_NRINGS"}, .type = Type::kInt, .defaultValue = "-2",
       .doc = "Minimum number of channels (auto: 0); the new name wins over NCCL_MIN_NRINGS",
       .module = "topo/search, connect", .range = {0, std::numeric_limits<int64_t>::max(), true}},
      {.name = "NCCL_MAX_NCHANNELS", .aliases = {"NCCL_MAX_NRINGS"}, .type = Type::kInt, .defaultValue = "-2",
       .doc = "Maximum number of channels (auto: 64); the new name wins over NCCL_MAX_NRINGS",
       .module = "topo/search, connect", .range = {1, std::numeric_limits<int64_t>::max(), true}},
      {.name = "NCCL_MIN_CTAS", .type = Type::kInt, .defaultValue = "",
       .doc = "Fewest channels (CTAs) a communicator runs (unset: 1; 0 or less is ignored, as NCCL does; "
              "capped at 64 and at NCCL_MAX_CTAS)",
       .module = "connect"},
      {.name = "NCCL_MAX_CTAS", .type = Type::kInt, .defaultValue = "",
       .doc = "Most channels (CTAs) a communicator runs (unset: 64; 0 or less is ignored, as NCCL does; "
              "capped at 64)",
       .module = "connect"},
      {.name = "NCCL_NVLS_NCHANNELS", .type = Type::kInt, .defaultValue = "",
       .doc = "NVLS channels (config.nvlsCTAs; unset, 0 or less: 16 before sm100, on sm100 24 within one "
              "node and 32 across nodes), kept within NCCL_MIN_CTAS..NCCL_MAX_CTAS",
       .module = "connect"},
      {.name = "NCCL_NETDEVS_POLICY", .type = Type::kNetDevsPolicy, .defaultValue = "AUTO",
       .doc = "NICs each GPU may use: AUTO, ALL or MAX:n", .module = "topo"},
      {.name = "NCCL_IGNORE_CPU_AFFINITY", .type = Type::kInt, .defaultValue = "0",
       .doc = "1: use the GPU's NUMA affinity instead of the process CPU mask", .module = "topo",
       .range = kFlag},
      {.name = "NCCL_HOSTID", .type = Type::kString, .defaultValue = "",
       .doc = "String hashed to identify the host (unset: host name + boot id)", .module = "topo/detect, bootstrap"},
      {.name = "NCCL_NET_MERGE_LEVEL", .type = Type::kString, .defaultValue = "PORT",
       .doc = "How close NIC ports must be to be merged into one virtual NIC", .module = "topo"},
      {.name = "NCCL_NET_FORCE_MERGE", .type = Type::kString, .defaultValue = "",
       .doc = "NIC names to merge into one virtual NIC regardless of distance", .module = "topo"},
  };
}

std::vector<SettingDef> pathRows() {
  return {
      {.name = "NCCL_P2P_LEVEL", .type = Type::kPathLevel, .defaultValue = "",
       .doc = "Highest path type for GPU peer-to-peer (unset: PXB)", .module = "topo/paths"},
      {.name = "NCCL_P2P_DISABLE", .type = Type::kInt, .defaultValue = "",
       .doc = "1 disables GPU peer-to-peer (P2P level LOC)", .module = "topo/paths", .range = kFlag},
      {.name = "NCCL_SHM_DISABLE", .type = Type::kInt, .defaultValue = "0",
       .doc = "1 disables the shared-memory transport", .module = "topo/paths, transport", .range = kFlag},
      {.name = "WEFT_SHM_SINGLE_COPY", .type = Type::kInt, .defaultValue = "2",
       .doc = "Host memory: a shared-memory receiver copies large allgather and broadcast steps straight from the "
              "sender's buffer (process_vm_readv) instead of through the slots: 1 always, 2 (auto) where the host's "
              "ranks do not outnumber the process's CPUs, 0 never",
       .module = "transport", .range = kTriState},
      {.name = "NCCL_NET_GDR_LEVEL", .type = Type::kPathLevel, .defaultValue = "",
       .doc = "Highest GPU-NIC path type for GPU Direct RDMA (unset: PXB)", .module = "topo/paths"},
      {.name = "NCCL_NET_GDR_READ", .type = Type::kInt, .defaultValue = "-2",
       .doc = "GPU Direct RDMA on the send side (auto: sm80 and newer, or NVLink present)",
       .module = "topo/paths", .range = {0, 1, true}},
      {.name = "NCCL_NET_GDR_C2C", .type = Type::kInt, .defaultValue = "1",
       .doc = "Allow GPU Direct RDMA through C2C-attached NICs", .module = "topo/paths", .range = kFlag},
      {.name = "NCCL_PXN_DISABLE", .type = Type::kInt, .defaultValue = "0",
       .doc = "1 disables PXN (sending through a peer GPU's NIC)", .module = "topo/paths", .range = kFlag},
      {.name = "NCCL_PXN_C2C", .type = Type::kInt, .defaultValue = "1",
       .doc = "Allow PXN through C2C-attached NICs", .module = "topo/paths", .range = kFlag},
      {.name = "NCCL_P2P_PXN_LEVEL", .type = Type::kInt, .defaultValue = "2",
       .doc = "PXN use for send/recv: 0 never, 1 only when needed, 2 always when faster",
       .module = "topo/paths", .range = kTriState},
      {.name = "NCCL_NVB_DISABLE", .type = Type::kInt, .defaultValue = "0",
       .doc = "1 disables NVLink paths through an intermediate GPU", .module = "topo/paths", .range = kFlag},
      {.name = "NCCL_IGNORE_DISABLED_P2P", .type = Type::kInt, .defaultValue = "0",
       .doc = "Ignore the peer-to-peer status NVML reports", .module = "topo/paths", .range = kNonNegative},
      {.name = "NCCL_NET_DISABLE_INTRA", .type = Type::kInt, .defaultValue = "0",
       .doc = "1: never use the network between GPUs of one node", .module = "topo/paths", .range = kFlag},
  };
}

std::vector<SettingDef> featureRows() {
  return {
      {.name = "NCCL_NVLS_ENABLE", .type = Type::kInt, .defaultValue = "2",
       .doc = "NVLink SHARP: 0 off (no NVLS graph even with --patterns nvls), 1 on, 2 auto",
       .module = "topo/search", .range = kTriState},
      {.name = "NCCL_COLLNET_ENABLE", .type = Type::kInt, .defaultValue = "0",
       .doc = "1 enables CollNet (in-network reductions) where a CollNet plugin is loaded; weft search: "
              "--patterns collnet",
       .module = "topo/search", .range = kFlag},
      {.name = "NCCL_COLLNET_NODE_THRESHOLD", .type = Type::kInt, .defaultValue = "2",
       .doc = "Fewest nodes for which CollNet is used", .module = "connect", .range = kNonNegative},
      {.name = "NCCL_MNNVL_ENABLE", .type = Type::kInt, .defaultValue = "2",
       .doc = "Multi-node NVLink: 0 off, 1 on, 2 auto", .module = "topo", .range = kTriState},
      {.name = "NCCL_MNNVL_SCATTER_NETS_ENABLE", .type = Type::kInt, .defaultValue = "1",
       .doc = "Spread NICs across the GPUs of a multi-node NVLink domain", .module = "topo", .range = kFlag},
      {.name = "NCCL_MNNVL_RAIL_PER_HOST", .type = Type::kInt, .defaultValue = "0",
       .doc = "Multi-node NVLink: one rail per host", .module = "topo", .range = kFlag},
      {.name = "NCCL_ALGO", .type = Type::kAlgoList, .defaultValue = "",
       .doc = "Algorithms allowed, per collective (unset: all, chosen by the tuner)", .module = "tune"},
      {.name = "WEFT_HOST_ALGO", .type = Type::kEnum, .defaultValue = "auto",
       .doc = "CPU endpoints, allreduce: auto picks ring, tree or recursive doubling by weft's cost model "
              "(core/coll/host_cost.h, shown offline by `weft tune --cpu`); nccl keeps NCCL's ring and tree rule; "
              "doubling always runs recursive doubling. NCCL_ALGO or a tuner plugin, when set, decide instead; "
              "emulated devices take NCCL's decision",
       .module = "coll", .choices = {"auto", "nccl", "doubling"}},
      {.name = "NCCL_PROTO", .type = Type::kProtoList, .defaultValue = "",
       .doc = "Protocols allowed, per collective (unset: all; LL128 where NCCL enables it)", .module = "tune"},
      {.name = "NCCL_TUNER_PLUGIN", .type = Type::kString, .defaultValue = "",
       .doc = "Tuner plugin name or file (NAME, libnccl-tuner-NAME.so or path; unset: libnccl-tuner.so, then "
              "the net plugin's library; none: no tuner plugin; weft: weft's YAML rule tuner)",
       .module = "plugin"},
      {.name = "WEFT_TUNER_FALLBACK", .type = Type::kEnum, .defaultValue = "allow",
       .doc = "allow: a tuner plugin that is not found, has no known symbol or fails init is dropped with a "
              "WARN; deny: fail",
       .module = "plugin", .choices = {"allow", "deny"}},
      {.name = "WEFT_TUNER_RULES_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "YAML file whose TUNER_RULES list the weft tuner plugin reads (unset: NCCL_TUNER_CONFIG_FILE, "
              "then the YAML policy file)",
       .module = "plugins/tuner-yaml"},
      {.name = "WEFT_TUNER_GPU_ARCH", .type = Type::kInt, .defaultValue = "",
       .doc = "GPU architecture (sm number, 90 for Hopper) the weft tuner plugin's arch rules match (unset: the CUDA "
              "driver's current device)",
       .module = "plugins/tuner-yaml", .range = {0, 1000}},
      {.name = "NCCL_TUNER_CONFIG_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "NVIDIA ext-tuner CSV rule file (nccl_tuner.conf format), read by the weft tuner plugin when set",
       .module = "plugins/tuner-yaml"},
  };
}

std::vector<SettingDef> tuneRows() {
  return {
      {.name = "NCCL_NTHREADS", .type = Type::kInt, .defaultValue = "-2",
       .doc = "Threads per block of the LL and Simple kernels: a multiple of 32, 64-512 (auto: 512; 256 for a "
              "ring under 12 GB/s)",
       .module = "tune"},
      {.name = "NCCL_LL128_NTHREADS", .type = Type::kInt, .defaultValue = "-2",
       .doc = "Threads per block of the LL128 kernels: a multiple of 32, 160-640 (auto: 640)", .module = "tune"},
      {.name = "NCCL_PAT_ENABLE", .type = Type::kInt, .defaultValue = "2",
       .doc = "PAT algorithm for AllGather/ReduceScatter: 0 off, 1 on, 2 auto (one GPU per node, no net offload)",
       .module = "tune"},
      {.name = "NCCL_NET_OVERHEAD", .type = Type::kInt, .defaultValue = "-2",
       .doc = "Network post overhead in ns added per inter-node ring step (auto: 2000 on AMD x86, else 1000)",
       .module = "tune"},
      {.name = "NCCL_LL128_C2C", .type = Type::kInt, .defaultValue = "1",
       .doc = "Not 0: LL128 stays on over PXN and C2C paths on sm90+; 0: only up to PXB", .module = "tune"},
      {.name = "NCCL_THREAD_THRESHOLDS", .type = Type::kString, .defaultValue = "",
       .doc = "Bytes per thread before more threads and channels are used: up to six integers, Tree LL LL128 "
              "Simple then Ring LL LL128 Simple (negative: default)",
       .module = "tune"},
      {.name = "NCCL_MIN_P2P_NCHANNELS", .type = Type::kInt, .defaultValue = "1",
       .doc = "Fewest channels for point-to-point operations", .module = "tune", .range = {1, 64}},
      {.name = "NCCL_MAX_P2P_NCHANNELS", .type = Type::kInt, .defaultValue = "64",
       .doc = "Most channels for point-to-point operations", .module = "tune", .range = {1, 64}},
      {.name = "NCCL_NCHANNELS_PER_NET_PEER", .type = Type::kInt, .defaultValue = "",
       .doc = "Channels per remote peer for point-to-point operations (unset or <= 0: 2, fewer at scale, at "
              "least one per NIC needed for the GPU's bandwidth)",
       .module = "tune"},
  };
}

std::vector<SettingDef> netRows() {
  return {
      {.name = "NCCL_NET", .type = Type::kString, .defaultValue = "",
       .doc = "Net plugin to use, by its name (IB, Socket, AWS Libfabric, …); unset: the first that has devices",
       .module = "plugin"},
      {.name = "NCCL_NET_PLUGIN", .type = Type::kList, .defaultValue = "",
       .doc = "Net plugin libraries to try in order (name, libnccl-net-NAME.so or path; weft's own: weft-socket, "
              "weft-ofi, weft-ib); none: no external plugin",
       .module = "plugin"},
      {.name = "WEFT_NET_FALLBACK", .type = Type::kEnum, .defaultValue = "allow",
       .doc = "allow: fall back to the next plugin when one fails to load or has no devices (NCCL); deny: fail",
       .module = "plugin", .choices = {"allow", "deny"}},
      {.name = "WEFT_OFI_PROVIDER", .type = Type::kList, .defaultValue = "",
       .doc = "libfabric providers the ofi plugin may use, in order (efa, cxi, tcp, …); unset: libfabric's choice",
       .module = "plugins/net-ofi"},
      {.name = "WEFT_OFI_MR", .type = Type::kEnum, .defaultValue = "auto",
       .doc = "auto: register memory with fi_mr_reg only when the provider needs it; always: every buffer",
       .module = "plugins/net-ofi", .choices = {"auto", "always"}},
      {.name = "WEFT_OFI_CONNECT_TIMEOUT", .type = Type::kInt, .defaultValue = "60",
       .doc = "Seconds the ofi plugin's connect waits for the listener to take the connection",
       .module = "plugins/net-ofi", .range = {1, 86400}},
      {.name = "NCCL_IB_DISABLE", .type = Type::kInt, .defaultValue = "0",
       .doc = "1 disables the InfiniBand/RoCE plugin", .module = "plugins/net-ib", .range = kFlag},
      {.name = "NCCL_IB_HCA", .type = Type::kIfList, .defaultValue = "",
       .doc = "HCAs to use: [^][=]dev[:port],… (^ exclude, = exact name; prefix match otherwise)",
       .module = "plugins/net-ib"},
      {.name = "NCCL_IB_GID_INDEX", .type = Type::kInt, .defaultValue = "-1",
       .doc = "RoCE GID index (-1: auto-select)", .module = "plugins/net-ib", .range = {-1, 255}},
      {.name = "NCCL_IB_ROCE_VERSION_NUM", .type = Type::kInt, .defaultValue = "2",
       .doc = "RoCE version used when auto-selecting the GID", .module = "plugins/net-ib", .range = {1, 2}},
      {.name = "NCCL_IB_ADDR_FAMILY", .type = Type::kEnum, .defaultValue = "AF_INET",
       .doc = "Address family of the RoCE GIDs auto-selection prefers", .module = "plugins/net-ib",
       .choices = {"AF_INET", "AF_INET6"}, .caseSensitive = true},
      {.name = "NCCL_IB_TIMEOUT", .type = Type::kInt, .defaultValue = "20",
       .doc = "IB verbs timeout exponent: 4.096 us * 2^n", .module = "plugins/net-ib", .range = {1, 31}},
      {.name = "NCCL_IB_RETRY_CNT", .type = Type::kInt, .defaultValue = "7",
       .doc = "IB verbs retry count", .module = "plugins/net-ib", .range = {0, 7}},
      {.name = "NCCL_SOCKET_IFNAME", .type = Type::kIfList, .defaultValue = "",
       .doc = "Interfaces to use: [^][=]name,… (unset: ib*, then any but docker/lo/virbr, then docker, then lo)",
       .module = "plugins/net-socket, bootstrap"},
      {.name = "NCCL_SOCKET_FAMILY", .type = Type::kEnum, .defaultValue = "",
       .doc = "Address family of the interfaces used (unset: any)", .module = "plugins/net-socket, bootstrap",
       .choices = {"AF_INET", "AF_INET6"}, .caseSensitive = true},
      {.name = "NCCL_SOCKET_NTHREADS", .type = Type::kInt, .defaultValue = "-2",
       .doc = "Helper threads per socket connection (auto: 2 on AWS, 4 on GCP, else 0)",
       .module = "plugins/net-socket", .range = {0, 16, true}},
      {.name = "NCCL_NSOCKS_PERTHREAD", .type = Type::kInt, .defaultValue = "-2",
       .doc = "Sockets per helper thread (auto: 8 on AWS, else 1); threads x sockets <= 64",
       .module = "plugins/net-socket", .range = {0, 64, true}},
  };
}

std::vector<SettingDef> runtimeRows() {
  return {
      {.name = "NCCL_COMM_ID", .type = Type::kString, .defaultValue = "",
       .doc = "Bootstrap root as host:port, [ipv6]:port or name:port: every process gets the same unique id "
              "and rank 0 runs the root there (unset: a random id from weft_get_unique_id)",
       .module = "bootstrap"},
      {.name = "NCCL_BUFFSIZE", .type = Type::kInt, .defaultValue = "4194304",
       .doc = "Bytes of the Simple protocol's buffer per connection: NCCL_STEPS (8) slots of BUFFSIZE/8",
       .module = "transport", .range = {65536, int64_t{1} << 30}},
      {.name = "NCCL_COMM_BLOCKING", .type = Type::kInt, .defaultValue = "",
       .doc = "Overrides config.blocking: 0 makes init return weftInProgress", .module = "comm", .range = kFlag},
      {.name = "WEFT_INIT_TIMEOUT", .type = Type::kInt, .defaultValue = "120",
       .doc = "Seconds a communicator's init waits for all ranks; the error names the ranks that never arrived",
       .module = "bootstrap", .range = {1, 86400}},
      {.name = "WEFT_PEER_TIMEOUT", .type = Type::kInt, .defaultValue = "30",
       .doc = "Seconds a rank's ring neighbours wait for its heartbeat before declaring it failed (stopped, frozen "
              "or cut off); the process sends them, not the caller, so a busy rank is never dropped; 0: no heartbeats",
       .module = "bootstrap", .range = {0, 86400}},
      {.name = "WEFT_OP_TIMEOUT", .type = Type::kInt, .defaultValue = "0",
       .doc = "Seconds a collective or send/recv may go without progress before it fails, naming the ranks, channel "
              "and step it waits for (the communicator must then be aborted); 0: wait as long as the peers live",
       .module = "comm", .range = {0, 86400}},
      {.name = "WEFT_STATUS_DIR", .type = Type::kString, .defaultValue = "",
       .doc = "Where each process's `weft status` socket lives (read from the environment; empty: "
              "$XDG_RUNTIME_DIR/weft, else /tmp/weft-<uid>); a directory only its user may enter",
       .module = "comm"},
      {.name = "WEFT_DEVICE", .type = Type::kInt, .defaultValue = "",
       .doc = "The GPU (dev= in NCCL_TOPO_FILE) this rank plays without a GPU (unset: its index among its "
              "host's ranks)",
       .module = "comm", .range = kNonNegative},
  };
}

std::vector<SettingDef> debugAndConfigRows() {
  return {
      {.name = "NCCL_DEBUG", .type = Type::kEnum, .defaultValue = "",
       .doc = "Log level (unset: none)", .module = "log",
       .choices = {"VERSION", "WARN", "INFO", "ABORT", "TRACE"}},
      {.name = "NCCL_DEBUG_SUBSYS", .type = Type::kSubsysList, .defaultValue = "INIT,BOOTSTRAP,ENV",
       .doc = "Subsystems logged at INFO: [^]name,… (^ inverts)", .module = "log"},
      {.name = "NCCL_DEBUG_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "Log file instead of stdout (%h host name, %p pid)", .module = "log"},
      {.name = "NCCL_CONF_FILE", .type = Type::kString, .defaultValue = "",
       .doc = "NCCL conf file read instead of ~/.nccl.conf (/etc/nccl.conf is read too)",
       .module = "config", .scope = Scope::kEnvOnly},
      {.name = "WEFT_CONFIG", .type = Type::kString, .defaultValue = "",
       .doc = "YAML policy file (unset: ~/.config/weft/weft.yaml, else /etc/weft.yaml)",
       .module = "config", .scope = Scope::kEnvOnly},
      {.name = "WEFT_DOT", .type = Type::kString, .defaultValue = "",
       .doc = "Graphviz program that renders weft's pictures (unset: dot on PATH; naming nothing: the DOT text "
              "is written instead, with how to render it)",
       .module = "tools/weft", .scope = Scope::kEnvOnly},
      {.name = "WEFT_DOT_TIMEOUT", .type = Type::kInt, .defaultValue = "60",
       .doc = "Seconds Graphviz may take to render one picture; past them it is stopped and the error says what "
              "to draw less of",
       .module = "tools/weft", .range = {1, 86400}, .scope = Scope::kEnvOnly},
  };
}

std::vector<SettingDef> buildTable() {
  std::vector<SettingDef> rows;
  for (auto part : {topologyRows, pathRows, featureRows, tuneRows, netRows, runtimeRows, debugAndConfigRows}) {
    for (SettingDef& d : part()) rows.push_back(std::move(d));
  }
  return rows;
}

}  // namespace

const std::vector<SettingDef>& table() {
  static const std::vector<SettingDef> kTable = buildTable();
  return kTable;
}

}  // namespace weft::config
