// C ABI of communicators and point-to-point transfers (include/weft/comm.h) over core/runtime.
#include <unistd.h>

#include <climits>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "core/api/comm_registry.h"
#include "core/api/group.h"
#include "core/api/last_error.h"
#include "core/device/comm_device.h"
#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/config/loader.h"
#include "core/runtime/comm.h"
#include "core/runtime/p2p.h"
#include "weft/weft.h"

namespace weft::api {
namespace {

using runtime::Comm;

// The settings of a new communicator: every source read and checked again (a process may change
// its environment between communicators, a forked child often does); the effective values are
// logged once per process, as NCCL does.
Result<config::Settings> commSettings() {
  WEFT_ASSIGN_OR_RETURN(config::Policy policy, config::Policy::load(config::Inputs::fromProcess()));
  config::Settings s = policy.resolve({});
  static std::once_flag logged;
  std::call_once(logged, [&] { config::logEffective(s); });
  return s;
}

// NCCL's checks of the fields weft accepts but does not act on (host memory has no CTAs,
// CGA clusters, NVLS or CollNet): a value NCCL refuses is refused here too.
Status checkConfigFields(const weft_config_t& c) {
  auto defined = [](int v) { return v != WEFT_CONFIG_UNDEF_INT; };
  auto flag = [&](const char* name, int v) -> Status {
    if (defined(v) && v != 0 && v != 1) return invalidArgument(strprintf("config.%s = %d: expected 0 or 1", name, v));
    return Status::ok();
  };
  if (defined(c.cga_cluster_size) && c.cga_cluster_size < 0)
    return invalidArgument(strprintf("config.cga_cluster_size = %d: expected >= 0", c.cga_cluster_size));
  WEFT_TRY(flag("split_share", c.split_share));
  WEFT_TRY(flag("collnet_enable", c.collnet_enable));
  WEFT_TRY(flag("shrink_share", c.shrink_share));
  WEFT_TRY(flag("nvlink_centric_sched", c.nvlink_centric_sched));
  if (defined(c.cta_policy) && (c.cta_policy < 0 || c.cta_policy > 2))
    return invalidArgument(strprintf("config.cta_policy = %d: expected 0 (default), 1 (efficiency) or 2 (zero)", c.cta_policy));
  if (defined(c.nvls_ctas) && c.nvls_ctas <= 0)
    return invalidArgument(strprintf("config.nvls_ctas = %d: expected > 0", c.nvls_ctas));
  // 64: NCCL's MAXCHANNELS.
  if (defined(c.n_channels_per_net_peer) && (c.n_channels_per_net_peer <= 0 || c.n_channels_per_net_peer > 64))
    return invalidArgument(strprintf("config.n_channels_per_net_peer = %d: expected 1..64", c.n_channels_per_net_peer));
  return Status::ok();
}

Result<runtime::CommOptions> parseConfig(const weft_config_t* config, const config::Settings& settings,
                                          const runtime::CommOptions* inherit) {
  runtime::CommOptions o = inherit != nullptr ? *inherit : runtime::CommOptions{};
  if (config != nullptr) {
    if (config->magic != WEFT_CONFIG_MAGIC)
      return invalidArgument("weft_config_t argument not initialized via WEFT_CONFIG_INITIALIZER (bad magic)");
    weft_config_t c = WEFT_CONFIG_INITIALIZER;
    std::memcpy(&c, config, std::min(config->size, sizeof(c)));
    if (c.blocking != WEFT_CONFIG_UNDEF_INT) {
      if (c.blocking != 0 && c.blocking != 1) return invalidArgument(strprintf("config.blocking = %d: expected 0 or 1", c.blocking));
      o.blocking = c.blocking == 1;
    }
    WEFT_TRY(checkConfigFields(c));
    if (c.min_ctas != WEFT_CONFIG_UNDEF_INT) o.minCTAs = c.min_ctas;
    if (c.max_ctas != WEFT_CONFIG_UNDEF_INT) o.maxCTAs = c.max_ctas;
    if (o.minCTAs <= 0 || o.maxCTAs <= 0 || o.minCTAs > o.maxCTAs)
      return invalidArgument(strprintf("config.min_ctas = %d, max_ctas = %d: expected 0 < min_ctas <= max_ctas", o.minCTAs,
                                       o.maxCTAs));
    if (c.net_name != nullptr) o.netName = c.net_name;
    if (c.device != WEFT_CONFIG_UNDEF_INT) {
      if (c.device < 0) return invalidArgument(strprintf("config.device = %d: expected a device number >= 0", c.device));
      o.device = c.device;
    }
  }
  // NCCL's envConfigOverride.
  if (auto v = settings.integerIfSet("NCCL_COMM_BLOCKING")) o.blocking = *v != 0;
  if (auto v = settings.integerIfSet("NCCL_MIN_CTAS"); v && *v > 0) o.minCTAs = static_cast<int>(std::min<int64_t>(*v, 64));
  if (auto v = settings.integerIfSet("NCCL_MAX_CTAS"); v && *v > 0) o.maxCTAs = static_cast<int>(std::min<int64_t>(*v, 64));
  if (o.minCTAs > o.maxCTAs) o.minCTAs = o.maxCTAs;
  if (settings.isSet("NCCL_NET")) o.netName = settings.string("NCCL_NET");
  return o;
}

runtime::BootstrapHandle handleOf(const weft_unique_id_t& id) {
  runtime::BootstrapHandle h;
  std::memcpy(&h, id.internal, sizeof(h));
  return h;
}

void finishInit(Comm& c, Status s) {
  if (s.isOk()) {
    c.state.store(0);
    return;
  }
  if (c.stop.load()) s = c.stoppedStatus("initializing");
  c.fail(s, c.rank);
}

Status initRank(weft_comm_t** out, int nranks, const weft_unique_id_t& id, int rank, const weft_config_t* config) {
  if (out == nullptr) return invalidArgument("weft_comm_init_rank: comm is NULL");
  *out = nullptr;
  if (nranks < 1) return invalidArgument(strprintf("weft_comm_init_rank: nranks = %d: expected at least 1", nranks));
  if (rank < 0 || rank >= nranks) return invalidArgument(strprintf("Invalid rank requested : %d/%d", rank, nranks));
  runtime::BootstrapHandle h = handleOf(id);
  if (h.magic == 0 || (h.addr.family() != AF_INET && h.addr.family() != AF_INET6))
    return invalidArgument("weft_comm_init_rank: the unique id holds no root address (not from weft_get_unique_id?)");
  WEFT_ASSIGN_OR_RETURN(config::Settings settings, commSettings());
  WEFT_ASSIGN_OR_RETURN(runtime::CommOptions options, parseConfig(config, settings, nullptr));
  auto* c = new weft_comm();
  c->impl.apiHandle = c;
  c->impl.options = options;
  c->impl.settings = std::move(settings);
  c->impl.rank = rank;
  c->impl.nranks = nranks;
  registry().add(c);
  *out = c;
  if (options.blocking) {
    Status s = runtime::initComm(c->impl, h, nranks, rank);
    finishInit(c->impl, s);
    return s.isOk() ? s : c->impl.stoppedStatus("initializing");
  }
  c->impl.initThread = std::thread([c, h, nranks, rank] {
    Status s = runtime::initComm(c->impl, h, nranks, rank);
    finishInit(c->impl, s);
  });
  return Status(Code::kInProgress, "initializing in the background (config.blocking = 0)");
}

void teardown(weft_comm* c, bool abort) {
  Comm& comm = c->impl;
  if (abort) comm.stopAll(comm.rank, "it aborted its communicator");  // peers waiting on this rank stop at once
  if (comm.initThread.joinable()) comm.initThread.join();
  // A root this process runs for an init that never completed stops now, not at its deadline.
  if (comm.state.load() != 0 && comm.jobMagic != 0) runtime::stopRoot(comm.jobMagic);
  while (comm.activeCalls.load() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  registry().remove(c);
  delete c;
}

}  // namespace
}  // namespace weft::api

using weft::Status;
using weft::api::guard;
using weft::api::registry;
namespace rt = weft::runtime;

extern "C" {

WEFT_API size_t weft_datatype_size(weft_datatype_t t) {
  switch (t) {
    case weftInt8: case weftUint8: case weftFloat8e4m3: case weftFloat8e5m2: return 1;
    case weftFloat16: case weftBfloat16: return 2;
    case weftInt32: case weftUint32: case weftFloat32: return 4;
    case weftInt64: case weftUint64: case weftFloat64: return 8;
    default: return 0;
  }
}

WEFT_API weft_result_t weft_get_unique_id(weft_unique_id_t* id) {
  return guard("weft_get_unique_id", [&]() -> Status {
    if (id == nullptr) return weft::invalidArgument("weft_get_unique_id: id is NULL");
    WEFT_ASSIGN_OR_RETURN(weft::config::Settings s, weft::api::commSettings());
    rt::BootstrapHandle h;
    if (s.isSet("NCCL_COMM_ID")) {
      auto a = rt::parseHostPort(s.string("NCCL_COMM_ID"));
      if (!a.isOk())
        return weft::invalidArgument("Invalid NCCL_COMM_ID, please use format: <ipv4>:<port> or [<ipv6>]:<port> or "
                                     "<hostname>:<port> (" + a.status().message() + ")");
      h.magic = rt::kNcclCommIdMagic;
      h.addr = *a;
    } else {
      WEFT_ASSIGN_OR_RETURN(rt::SockAddr local, rt::bootstrapAddress(s, nullptr));
      WEFT_ASSIGN_OR_RETURN(h, rt::startRoot(local, rt::randomMagic(),
                                             std::chrono::seconds(s.integer("WEFT_INIT_TIMEOUT"))));
    }
    std::memset(id->internal, 0, sizeof(id->internal));
    std::memcpy(id->internal, &h, sizeof(h));
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_init_rank_config(weft_comm_t** comm, int nranks, weft_unique_id_t id, int rank,
                                                  const weft_config_t* config) {
  return guard("weft_comm_init_rank", [&] { return weft::api::initRank(comm, nranks, id, rank, config); });
}

WEFT_API weft_result_t weft_comm_init_rank(weft_comm_t** comm, int nranks, weft_unique_id_t id, int rank) {
  return weft_comm_init_rank_config(comm, nranks, id, rank, nullptr);
}

WEFT_API weft_result_t weft_comm_init_all(weft_comm_t** comms, int ndev, const int* devlist) {
  return guard("weft_comm_init_all", [&]() -> Status {
    if (comms == nullptr) return weft::invalidArgument("weft_comm_init_all: comms is NULL");
    if (ndev < 1) return weft::invalidArgument(weft::strprintf("weft_comm_init_all: ndev = %d: expected at least 1", ndev));
    std::set<int> seen;
    for (int i = 0; devlist != nullptr && i < ndev; ++i) {
      if (devlist[i] < 0) return weft::invalidArgument(weft::strprintf("weft_comm_init_all: devlist[%d] = %d", i, devlist[i]));
      if (!seen.insert(devlist[i]).second)
        return weft::invalidUsage(weft::strprintf("weft_comm_init_all: device %d appears twice in devlist", devlist[i]));
    }
    weft_unique_id_t id;
    if (weft_get_unique_id(&id) != weftSuccess) return Status(weft::Code::kSystemError, weft_last_error());
    std::vector<std::thread> threads;
    std::vector<weft_result_t> results(static_cast<size_t>(ndev));
    std::vector<std::string> errors(static_cast<size_t>(ndev));
    for (int i = 0; i < ndev; ++i) {
      comms[i] = nullptr;
      threads.emplace_back([&, i] {
        weft_config_t cfg = WEFT_CONFIG_INITIALIZER;
        cfg.blocking = 1;
        cfg.device = devlist != nullptr ? devlist[i] : i;
        results[static_cast<size_t>(i)] = weft_comm_init_rank_config(&comms[i], ndev, id, i, &cfg);
        errors[static_cast<size_t>(i)] = weft_last_error();
      });
    }
    for (std::thread& t : threads) t.join();
    for (int i = 0; i < ndev; ++i) {
      if (results[static_cast<size_t>(i)] == weftSuccess) continue;
      for (int j = 0; j < ndev; ++j) {
        if (comms[j] != nullptr) (void)weft_comm_abort(comms[j]);
        comms[j] = nullptr;
      }
      return Status(static_cast<weft::Code>(results[static_cast<size_t>(i)]),
                    weft::strprintf("rank %d: %s", i, errors[static_cast<size_t>(i)].c_str()));
    }
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_split(weft_comm_t* comm, int color, int key, weft_comm_t** newcomm,
                                       const weft_config_t* config) {
  return guard("weft_comm_split", [&]() -> Status {
    if (newcomm == nullptr) return weft::invalidArgument("weft_comm_split: newcomm is NULL");
    *newcomm = nullptr;
    if (color < WEFT_SPLIT_NOCOLOR)
      return weft::invalidArgument(weft::strprintf("weft_comm_split: color %d: expected >= 0 or WEFT_SPLIT_NOCOLOR", color));
    WEFT_TRY(registry().enter(comm, "weft_comm_split"));
    weft::api::CallScope scope(comm);
    rt::Comm& parent = comm->impl;
    if (parent.state.load() != 0) return parent.stoppedStatus("splitting");
    WEFT_ASSIGN_OR_RETURN(rt::CommOptions o, weft::api::parseConfig(config, parent.settings, &parent.options));
    o.device = -1;
    WEFT_ASSIGN_OR_RETURN(std::optional<rt::SplitPlan> plan, rt::planSplit(parent, color, key));
    if (!plan) return Status::ok();
    auto* c = new weft_comm();
    c->impl.apiHandle = c;
    c->impl.options = o;
    c->impl.settings = parent.settings;
    c->impl.rootMagic = plan->rootMagic;
    registry().add(c);
    Status s = rt::initComm(c->impl, plan->handle, plan->nranks, plan->rank);
    weft::api::finishInit(c->impl, s);
    if (!s.isOk()) {
      Status err = c->impl.stoppedStatus("initializing the split communicator");
      WEFT_TRY(registry().take(c, "weft_comm_split"));
      weft::api::teardown(c, true);
      return err;
    }
    *newcomm = c;
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_finalize(weft_comm_t* comm) {
  return guard("weft_comm_finalize", [&]() -> Status {
    WEFT_TRY(registry().enter(comm, "weft_comm_finalize"));
    weft::api::CallScope scope(comm);
    if (comm->impl.initThread.joinable()) comm->impl.initThread.join();
    if (comm->impl.finalized) return weft::invalidArgument("weft_comm_finalize: comm was already finalized");
    comm->impl.finalized = true;
    rt::closeComm(comm->impl);
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_destroy(weft_comm_t* comm) {
  return guard("weft_comm_destroy", [&]() -> Status {
    WEFT_TRY(registry().take(comm, "weft_comm_destroy"));
    weft::api::teardown(comm, false);
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_abort(weft_comm_t* comm) {
  return guard("weft_comm_abort", [&]() -> Status {
    if (comm == nullptr) return Status::ok();  // as NCCL: aborting NULL is a no-op
    WEFT_TRY(registry().take(comm, "weft_comm_abort"));
    weft::api::teardown(comm, true);
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_get_async_error(weft_comm_t* comm, weft_result_t* async_error) {
  std::string why;
  weft_result_t rc = guard("weft_comm_get_async_error", [&]() -> Status {
    if (async_error == nullptr) return weft::invalidArgument("weft_comm_get_async_error: async_error is NULL");
    WEFT_TRY(registry().enter(comm, "weft_comm_get_async_error"));
    weft::api::CallScope scope(comm);
    *async_error = static_cast<weft_result_t>(comm->impl.state.load());
    if (*async_error != weftSuccess && *async_error != weftInProgress) {
      std::lock_guard<std::mutex> lock(comm->impl.errorMutex);
      why = comm->impl.error.message();
    }
    return Status::ok();
  });
  // The communicator's error is what weft_last_error() says after this call.
  if (!why.empty()) weft::api::tlsLastError = why;
  return rc;
}

namespace {

weft::Status readyComm(const weft_comm_t* comm, const char* what) {
  WEFT_TRY(registry().enter(comm, what));
  weft::api::CallScope scope(comm);
  if (comm->impl.state.load() == static_cast<int>(weft::Code::kInProgress))
    return weft::invalidArgument("Attempt to use communicator before the previous operation returned ncclSuccess");
  return Status::ok();
}

}  // namespace

WEFT_API weft_result_t weft_comm_count(const weft_comm_t* comm, int* count) {
  return guard("weft_comm_count", [&]() -> Status {
    if (count == nullptr) return weft::invalidArgument("weft_comm_count: count is NULL");
    WEFT_TRY(readyComm(comm, "weft_comm_count"));
    *count = comm->impl.nranks;
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_user_rank(const weft_comm_t* comm, int* rank) {
  return guard("weft_comm_user_rank", [&]() -> Status {
    if (rank == nullptr) return weft::invalidArgument("weft_comm_user_rank: rank is NULL");
    WEFT_TRY(readyComm(comm, "weft_comm_user_rank"));
    *rank = comm->impl.rank;
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_comm_cu_device(const weft_comm_t* comm, int* device) {
  return guard("weft_comm_cu_device", [&]() -> Status {
    if (device == nullptr) return weft::invalidArgument("weft_comm_cu_device: device is NULL");
    WEFT_TRY(readyComm(comm, "weft_comm_cu_device"));
    *device = comm->impl.dev;
    return Status::ok();
  });
}

namespace {

weft::Status enqueueP2p(bool send, const void* buff, size_t count, weft_datatype_t type, int peer, weft_comm_t* comm,
                        void* stream) {
  const char* what = send ? "weft_send" : "weft_recv";
  size_t size = weft_datatype_size(type);
  if (size == 0) return weft::invalidArgument(weft::strprintf("%s: unknown datatype %d (expected 0..11)", what, static_cast<int>(type)));
  if (count > SIZE_MAX / size) return weft::invalidArgument(weft::strprintf("%s: count %zu overflows a byte count", what, count));
  WEFT_TRY(registry().enter(comm, what));
  weft::api::CallScope scope(comm);
  rt::Comm& c = comm->impl;
  int state = c.state.load();
  if (state == static_cast<int>(weft::Code::kInProgress))
    return weft::invalidArgument(std::string(what) + ": Attempt to use communicator before the previous operation returned ncclSuccess");
  if (state != 0) return c.stoppedStatus(what);
  if (peer < 0 || peer >= c.nranks)
    return weft::invalidArgument(weft::strprintf("%s: peer %d is not a rank of this communicator (0..%d)", what, peer, c.nranks - 1));
  if (buff == nullptr && count > 0) return weft::invalidArgument(weft::strprintf("%s: buffer is NULL with count %zu", what, count));
  // GPU memory goes to the device path (a kernel on the stream); host memory to the host's.
  WEFT_ASSIGN_OR_RETURN(bool onDevice, weft::device::usesDevice(what, buff, buff, count, stream));
  if (!onDevice) {
    WEFT_ASSIGN_OR_RETURN(rt::MemoryKind kind, rt::memoryKind(buff, stream));
    (void)kind;
  }
  if (count == 0) return Status::ok();  // NCCL drops empty operations
  if (onDevice) {
    weft::device::P2pOp op;
    op.comm = &c;
    op.send = send;
    op.buf = const_cast<void*>(buff);
    op.bytes = count * size;
    op.peer = peer;
    op.stream = stream;
    op.cudaDevice = weft::device::currentDevice();
    if (rt::threadGroup().depth > 0) {
      weft::api::groupDeviceP2p().push_back(op);
      return Status::ok();
    }
    return weft::device::enqueueP2p({op});
  }
  rt::P2pTask t;
  t.comm = &c;
  t.send = send;
  t.buf = const_cast<char*>(static_cast<const char*>(buff));
  t.bytes = count * size;
  t.peer = peer;
  rt::GroupState& g = rt::threadGroup();
  if (g.depth > 0) {
    g.tasks.push_back(t);
    return Status::ok();
  }
  // One reused vector per thread: a blocking call allocates nothing.
  thread_local std::vector<rt::P2pTask> one;
  one.assign(1, t);
  return rt::runTasks(one);
}

}  // namespace

WEFT_API weft_result_t weft_send(const void* sendbuff, size_t count, weft_datatype_t datatype, int peer,
                                 weft_comm_t* comm, void* stream) {
  return guard("weft_send", [&] { return enqueueP2p(true, sendbuff, count, datatype, peer, comm, stream); });
}

WEFT_API weft_result_t weft_recv(void* recvbuff, size_t count, weft_datatype_t datatype, int peer, weft_comm_t* comm,
                                 void* stream) {
  return guard("weft_recv", [&] { return enqueueP2p(false, recvbuff, count, datatype, peer, comm, stream); });
}

WEFT_API weft_result_t weft_group_start(void) {
  return guard("weft_group_start", [] {
    ++rt::threadGroup().depth;
    return Status::ok();
  });
}

WEFT_API weft_result_t weft_group_end(void) {
  return guard("weft_group_end", []() -> Status {
    rt::GroupState& g = rt::threadGroup();
    if (g.depth == 0) return weft::invalidUsage("weft_group_end: not in a group call.");
    if (--g.depth > 0) return Status::ok();
    std::vector<rt::P2pTask> tasks;
    tasks.swap(g.tasks);
    std::vector<weft::device::P2pOp> deviceP2p;
    deviceP2p.swap(weft::api::groupDeviceP2p());
    std::vector<weft::coll::CollTask> colls;
    colls.swap(weft::api::groupCollectives());
    // Every communicator of the group stays alive while its work runs.
    std::vector<rt::Comm*> comms;
    for (const rt::P2pTask& t : tasks) comms.push_back(t.comm);
    for (const weft::coll::CollTask& c : colls) comms.push_back(c.comm);
    for (const weft::device::P2pOp& op : deviceP2p) comms.push_back(op.comm);
    std::vector<const weft_comm*> entered;
    Status s;
    for (rt::Comm* c : comms) {
      const auto* wc = static_cast<const weft_comm*>(c->apiHandle);
      if (std::find(entered.begin(), entered.end(), wc) != entered.end()) continue;
      s = registry().enter(wc, "weft_group_end");
      if (!s.isOk()) break;
      entered.push_back(wc);
    }
    // Point-to-point first, then the collectives in call order: every rank does the same.
    if (s.isOk()) s = rt::runTasks(tasks);
    if (s.isOk() && !deviceP2p.empty()) s = weft::device::enqueueP2p(deviceP2p);
    // GPU buffers: enqueued on their streams (core/device); host ones run here.
    std::vector<weft::coll::CollTask> onDevice;
    auto split = std::stable_partition(colls.begin(), colls.end(), [](const auto& c) { return !c.onDevice; });
    onDevice.assign(split, colls.end());
    colls.erase(split, colls.end());
    if (s.isOk() && !onDevice.empty()) s = weft::device::enqueueGroup(onDevice);
    if (s.isOk() && !colls.empty()) s = weft::coll::runCollectives(colls);
    for (const weft_comm* wc : entered) weft::api::Registry::leave(wc);
    return s;
  });
}

WEFT_API weft_result_t weft_group_discard(int* discarded) {
  return guard("weft_group_discard", [&]() -> Status {
    rt::GroupState& g = rt::threadGroup();
    if (discarded != nullptr) *discarded = 0;
    if (g.depth == 0) return weft::invalidUsage("weft_group_discard: not in a group call.");
    if (--g.depth > 0) return Status::ok();
    size_t n = g.tasks.size() + weft::api::groupCollectives().size() + weft::api::groupDeviceP2p().size();
    g.tasks.clear();
    weft::api::groupDeviceP2p().clear();
    g.error = Status::ok();
    weft::api::groupCollectives().clear();
    if (discarded != nullptr) *discarded = static_cast<int>(n);
    return Status::ok();
  });
}

}  // extern "C"
