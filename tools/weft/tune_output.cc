#include "tools/weft/tune_output.h"

#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/topo/types.h"
#include "core/tune/select.h"
#include "tools/weft/perf_coll.h"

namespace weft::tool {

namespace {

// The collective names --coll accepts, and their model functions.
struct NamedFunc {
  const char* name;
  int func;
};
constexpr NamedFunc kFuncs[] = {{"allreduce", tune::kAllReduce},
                                {"allgather", tune::kAllGather},
                                {"reducescatter", tune::kReduceScatter},
                                {"broadcast", tune::kBroadcast},
                                {"reduce", tune::kReduce}};

Result<std::size_t> sizeOf(std::string_view text, const char* what) {
  std::optional<std::size_t> v = perf::parseSize(trim(text));
  if (!v || *v == 0)
    return invalidUsage(strprintf("%s: \"%.*s\" is not a size in bytes (8, 64K, 1M, 1G)", what,
                                  static_cast<int>(text.size()), text.data()));
  return *v;
}

Result<std::vector<std::size_t>> parseSizes(const std::string& text) {
  std::vector<std::size_t> out;
  for (std::string_view part : split(text, ',')) {
    part = trim(part);
    if (part.empty()) continue;
    size_t colon = part.find(':');
    if (colon == std::string_view::npos) {
      WEFT_ASSIGN_OR_RETURN(std::size_t one, sizeOf(part, "--sizes"));
      out.push_back(one);
      continue;
    }
    WEFT_ASSIGN_OR_RETURN(std::size_t lo, sizeOf(part.substr(0, colon), "--sizes"));
    WEFT_ASSIGN_OR_RETURN(std::size_t hi, sizeOf(part.substr(colon + 1), "--sizes"));
    if (hi < lo) return invalidUsage("--sizes: \"" + std::string(part) + "\" ends below its start");
    for (std::size_t s : perf::warmupSchedule(lo, hi)) out.push_back(s);
  }
  if (out.empty()) return invalidUsage("--sizes: no size in \"" + text + "\"");
  return out;
}

// What the tuner plugin did in one getCollInfo call: the table it received and returned, the
// channels it asked for, and the INFO/TUNING lines it logged meanwhile (weft's YAML tuner logs
// which rule fired). The lines are taken from the log: NCCL would print them per operation,
// among NCCL's per-operation lines; this tool shows them beside its own rows instead.
struct TunerCall {
  bool called = false;
  bool failed = false;  // getCollInfo returned an error: the operation fails, as in NCCL
  tune::CostTable before{};
  tune::CostTable after{};
  int channels = 0;
  std::vector<std::string> lines;

  bool changedTable() const { return std::memcmp(before, after, sizeof(before)) != 0; }
  bool acted() const { return called && (changedTable() || channels != 0 || !lines.empty()); }
};

class RecordingHook final : public tune::TunerHook {
 public:
  RecordingHook(tune::TunerHook& inner, TunerCall& call) : inner_(inner), call_(call) {}
  Status getCollInfo(const tune::CollQuery& query, float* cost, int* nChannels) override {
    call_.called = true;
    std::memcpy(call_.before, cost, sizeof(call_.before));
    Status s;
    {
      log::ScopedRecorder recorder(&call_.lines, log::kTuning, log::ScopedRecorder::Mode::kTake);
      s = inner_.getCollInfo(query, cost, nChannels);
    }
    std::memcpy(call_.after, cost, sizeof(call_.after));
    call_.channels = *nChannels;
    call_.failed = !s.isOk();
    return s;
  }

 private:
  tune::TunerHook& inner_;
  TunerCall& call_;
};

// One operation: NCCL's choice (with the tuner, when there is one) and what the tuner did.
struct Decision {
  Status status;        // an operation NCCL would fail
  tune::Choice choice;  // when status is ok
  tune::CostTable table{};  // the table the choice was made from (after the tuner)
  TunerCall tuner;
};

Decision decide(const tune::Tuned& t, int func, std::size_t bytes) {
  tune::Operation op;
  op.func = func;
  op.bytes = bytes;
  Decision d;
  std::optional<RecordingHook> hook;
  if (t.tuner != nullptr) hook.emplace(*t.tuner, d.tuner);
  auto c = tune::choose(t.comm, t.model, t.settings, op, hook ? &*hook : nullptr, &d.table);
  if (c.isOk()) d.choice = *c;
  else d.status = c.status();
  // choose() leaves the table alone when the tuner fails: show the one the tuner was given.
  if (d.tuner.failed) std::memcpy(d.table, d.tuner.after, sizeof(d.table));
  return d;
}

// "TUNER/weft: AllReduce 4096 bytes: rule tuner.yaml:3 -> algo Tree proto LL channels 2": the
// rule ("tuner.yaml:3") and what it set ("algo Tree proto LL channels 2").
struct FiredRule {
  std::string where;
  std::string action;
};

std::optional<FiredRule> firedRule(const TunerCall& call) {
  for (const std::string& line : call.lines) {
    size_t rule = line.find(": rule ");
    size_t arrow = line.find(" -> ", rule == std::string::npos ? 0 : rule);
    if (rule == std::string::npos || arrow == std::string::npos) continue;
    rule += 7;
    return FiredRule{line.substr(rule, arrow - rule), line.substr(arrow + 4)};
  }
  return std::nullopt;
}

// The cells the tuner changed, "Ring/Simple 812.345 -> 0.000".
std::vector<std::string> changedCells(const TunerCall& call) {
  std::vector<std::string> out;
  for (int a = 0; a < tune::kNumAlgorithms; ++a) {
    for (int p = 0; p < tune::kNumProtocols; ++p) {
      if (std::memcmp(&call.before[a][p], &call.after[a][p], sizeof(float)) == 0) continue;
      out.push_back(strprintf("%s/%s %.3f -> %.3f", tune::algoName(a), tune::protoName(p),
                              static_cast<double>(call.before[a][p]), static_cast<double>(call.after[a][p])));
    }
  }
  return out;
}

// The short form of the text table's tuner column: the rule that fired, or what changed.
std::string tunerColumn(const TunerCall& call) {
  if (auto rule = firedRule(call)) return "rule " + rule->where;
  if (call.changedTable() || call.channels != 0) return "changed";
  return "-";
}

// The tuner's lines under --explain.
void printTunerCall(const TunerCall& call) {
  if (auto rule = firedRule(call)) {
    std::printf("  tuner: rule %s fired: %s\n", rule->where.c_str(), rule->action.c_str());
  } else {
    for (const std::string& line : call.lines) std::printf("  tuner: %s\n", line.c_str());
  }
  for (const std::string& cell : changedCells(call)) std::printf("  tuner: changed %s\n", cell.c_str());
  if (call.channels != 0) std::printf("  tuner: channels %d\n", call.channels);
  if (call.failed) std::printf("  tuner: getCollInfo failed\n");
  else if (!call.acted()) std::printf("  tuner: no change\n");
}

void printTable(const tune::CostTable& table, int algo, int proto) {
  std::printf("  %-13s %12s %12s %12s\n", "", tune::protoName(0), tune::protoName(1), tune::protoName(2));
  for (int a = 0; a < tune::kNumAlgorithms; ++a) {
    std::printf("  %-13s", tune::algoName(a));
    for (int p = 0; p < tune::kNumProtocols; ++p) {
      float v = table[a][p];
      if (v < 0) std::printf(" %12s", "-");
      else std::printf(" %11.3f%s", static_cast<double>(v), a == algo && p == proto ? "*" : " ");
    }
    std::printf("\n");
  }
}

void printChoiceLine(const char* lead, const Decision& d) {
  if (!d.status.isOk()) {
    std::printf("  %s%s\n", lead, d.status.toString().c_str());
    return;
  }
  const tune::Choice& c = d.choice;
  std::printf("  %s%s/%s, %d channels, %d threads, %.3f us\n", lead, tune::algoName(c.algo), tune::protoName(c.proto),
              c.nMaxChannels, c.nThreads, static_cast<double>(c.timeUs));
}

void writeTableJson(JsonWriter& w, const tune::CostTable& table) {
  w.beginObject();
  for (int a = 0; a < tune::kNumAlgorithms; ++a) {
    w.key(tune::algoName(a)).beginObject();
    for (int p = 0; p < tune::kNumProtocols; ++p) {
      w.key(tune::protoName(p));
      if (table[a][p] < 0) w.null();
      else w.fixed(static_cast<double>(table[a][p]), 3);
    }
    w.endObject();
  }
  w.endObject();
}

// "tuner": {"rule", "action", "channels", "changed": […], "log": […]}, when the tuner did anything.
void writeTunerJson(JsonWriter& w, const TunerCall& call) {
  if (!call.acted()) return;
  w.key("tuner").beginObject();
  if (auto rule = firedRule(call)) w.field("rule", rule->where).field("action", rule->action);
  w.field("channels", call.channels);
  w.key("changed").beginArray();
  for (const std::string& cell : changedCells(call)) w.value(cell);
  w.endArray();
  w.key("log").beginArray();
  for (const std::string& line : call.lines) w.value(line);
  w.endArray();
  w.endObject();
}

}  // namespace

Result<TuneRequest> parseTuneRequest(const std::string& colls, const std::string& sizes, const std::string& explain) {
  TuneRequest r;
  for (std::string_view name : split(colls, ',')) {
    name = trim(name);
    if (name.empty()) continue;
    if (iequals(name, "all")) {
      for (const NamedFunc& f : kFuncs) r.funcs.push_back(f.func);
      continue;
    }
    bool found = false;
    for (const NamedFunc& f : kFuncs) {
      if (!iequals(name, f.name)) continue;
      r.funcs.push_back(f.func);
      found = true;
    }
    if (!found)
      return invalidUsage("--coll: unknown collective \"" + std::string(name) +
                          "\" (allreduce, allgather, reducescatter, broadcast, reduce, all)");
  }
  if (r.funcs.empty()) return invalidUsage("--coll: no collective");
  WEFT_ASSIGN_OR_RETURN(r.sizes, parseSizes(sizes));
  if (!explain.empty()) {
    WEFT_ASSIGN_OR_RETURN(std::size_t e, sizeOf(explain, "--explain"));
    r.explain = e;
  }
  return r;
}

Status printTuneText(const tune::Tuned& t, const TuneRequest& r) {
  const bool tuner = t.tuner != nullptr;
  std::string plugin = tuner ? "tuner plugin " + t.tunerName : "no tuner plugin";
  std::printf("# NCCL 2.28.9's choice for one operation per size (float32 sum, %s); %d ranks on %d nodes, %d "
              "channels\n",
              plugin.c_str(), t.comm.nRanks, t.comm.nNodes, t.comm.nChannels);
  std::printf("# %-13s %14s  %-13s %-6s %8s %7s %13s%s\n", "coll", "bytes", "algo", "proto", "channels", "threads",
              "time_us", tuner ? "  tuner" : "");
  for (int f : r.funcs) {
    for (std::size_t bytes : r.sizes) {
      Decision d = decide(t, f, bytes);
      // NCCL fails such an operation (NCCL_ALGO/NCCL_PROTO left nothing for it): say so, go on.
      if (!d.status.isOk()) {
        std::printf("  %-13s %14zu  %s\n", tune::funcName(f), bytes, d.status.toString().c_str());
        continue;
      }
      const tune::Choice& c = d.choice;
      std::printf("  %-13s %14zu  %-13s %-6s %8d %7d %13.3f", tune::funcName(f), bytes, tune::algoName(c.algo),
                  tune::protoName(c.proto), c.nMaxChannels, c.nThreads, static_cast<double>(c.timeUs));
      if (tuner) std::printf("  %s", tunerColumn(d.tuner).c_str());
      std::printf("\n");
    }
  }
  if (!r.explain) return Status::ok();
  for (int f : r.funcs) {
    Decision d = decide(t, f, *r.explain);
    std::printf("\n# cost table: %s, %zu bytes (µs; - where NCCL would not use the cell)\n", tune::funcName(f),
                *r.explain);
    if (!tuner || !d.tuner.called) {
      printTable(d.table, d.status.isOk() ? d.choice.algo : -1, d.choice.proto);
      printChoiceLine("=> ", d);
      continue;
    }
    // The model's table as the tuner received it, then the table the choice was made from.
    printTable(d.tuner.before, -1, -1);
    std::printf("# after the tuner, %s\n", t.tunerName.c_str());
    printTable(d.table, d.status.isOk() ? d.choice.algo : -1, d.choice.proto);
    printTunerCall(d.tuner);
    printChoiceLine("=> ", d);
  }
  return Status::ok();
}

Status writeTuneJson(JsonWriter& w, const tune::Tuned& t, const TuneRequest& r) {
  if (t.tuner != nullptr) w.field("tunerPlugin", t.tunerName);
  w.key("choices").beginArray();
  for (int f : r.funcs) {
    for (std::size_t bytes : r.sizes) {
      Decision d = decide(t, f, bytes);
      w.beginObject().field("coll", tune::funcName(f)).field("bytes", static_cast<int64_t>(bytes));
      if (!d.status.isOk()) {
        w.field("error", d.status.message()).endObject();
        continue;
      }
      const tune::Choice& c = d.choice;
      w.field("algo", tune::algoName(c.algo)).field("proto", tune::protoName(c.proto));
      w.field("channels", c.nMaxChannels).field("threads", c.nThreads);
      // NCCL's float with the three decimals NCCL's tools print.
      w.key("time_us").fixed(static_cast<double>(c.timeUs), 3);
      writeTunerJson(w, d.tuner);
      w.endObject();
    }
  }
  w.endArray();
  if (!r.explain) return Status::ok();
  w.key("explain").beginArray();
  for (int f : r.funcs) {
    Decision d = decide(t, f, *r.explain);
    w.beginObject().field("coll", tune::funcName(f)).field("bytes", static_cast<int64_t>(*r.explain));
    // "table": the model's; "tuned_table": after the tuner (only with one).
    w.key("table");
    writeTableJson(w, d.tuner.called ? d.tuner.before : d.table);
    if (d.tuner.called) {
      w.key("tuned_table");
      writeTableJson(w, d.table);
    }
    if (d.status.isOk()) w.field("algo", tune::algoName(d.choice.algo)).field("proto", tune::protoName(d.choice.proto));
    else w.field("error", d.status.message());
    writeTunerJson(w, d.tuner);
    w.endObject();
  }
  w.endArray();
  return Status::ok();
}

void printTuneLog(const tune::Tuned& t, const std::vector<std::string>& info, const TuneRequest& r) {
  const tune::CommInputs& c = t.comm;
  std::printf("# comm nRanks %d nNodes %d localRanks %d maxLocalRanks %d minLocalRanks %d minCompCap %d maxCompCap %d "
              "cpuArch %d cpuVendor %d netDeviceType %d maxTreePattern %d nChannels %d nvlsSupport %d nvlsChannels %d "
              "collnetEnable %d p2pnChannels %d p2pnChannelsPerPeer %d\n",
              c.nRanks, c.nNodes, c.localRanks, c.maxLocalRanks, c.minLocalRanks, c.minCompCap, c.maxCompCap,
              c.cpuArch, c.cpuVendor, c.netDeviceType, c.maxTreePattern, c.nChannels, c.nvlsSupport, c.nvlsChannels,
              c.collnetEnable, c.p2pnChannels, c.p2pnChannelsPerPeer);
  // The reference logs' order of the graphs.
  constexpr struct {
    const char* name;
    int algo;
  } kGraphs[] = {{"Ring", tune::kRing},
                 {"Tree", tune::kTree},
                 {"CollNetChain", tune::kCollnetChain},
                 {"CollNetDirect", tune::kCollnetDirect},
                 {"NVLS", tune::kNvls}};
  auto path = [](int type) { return std::string(topo::pathTypeName(static_cast<topo::PathType>(type))); };
  for (const auto& k : kGraphs) {
    const tune::GraphInputs& g = c.graph(k.algo);
    std::printf("# graph %-13s pattern %d nChannels %d sameChannels %d bwIntra %g bwInter %g latencyInter %g "
                "typeIntra %s typeInter %s crossNic %d\n",
                k.name, g.pattern, g.nChannels, g.sameChannels, static_cast<double>(g.bwIntra),
                static_cast<double>(g.bwInter), static_cast<double>(g.latencyInter), path(g.typeIntra).c_str(),
                path(g.typeInter).c_str(), g.crossNic);
  }
  for (const std::string& line : info) std::printf("[0] NCCL INFO %s\n", line.c_str());
  std::printf("# TUNE <coll> <bytes> <algo> <proto> <time_us>; TUNECH <coll> <bytes> <nMaxChannels> <nThreads>; "
              "COST <coll> <bytes> <time_us of Tree/LL Tree/LL128 Tree/Simple Ring/LL ... PAT/Simple, -1 = not "
              "available>\n");
  for (int func : r.funcs) {
    const char* name = "?";
    for (const NamedFunc& f : kFuncs)
      if (f.func == func) name = f.name;
    for (std::size_t bytes : r.sizes) {
      Decision d = decide(t, func, bytes);
      const tune::Choice& ch = d.choice;
      if (d.status.isOk())
        std::printf("TUNE %s %zu %s %s %.3f\nTUNECH %s %zu %d %d\n", name, bytes, tune::algoName(ch.algo),
                    tune::protoName(ch.proto), static_cast<double>(ch.timeUs), name, bytes, ch.nMaxChannels,
                    ch.nThreads);
      else
        std::printf("TUNE %s %zu none none -1.000\nTUNECH %s %zu 0 0\n", name, bytes, name, bytes);
      std::printf("COST %s %zu", name, bytes);
      for (const auto& row : d.table)
        for (float cell : row) std::printf(" %.3f", static_cast<double>(cell));
      std::printf("\n");
    }
  }
}

}  // namespace weft::tool
