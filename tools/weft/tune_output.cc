#include "tools/weft/tune_output.h"

#include <cstdio>

#include "core/base/strings.h"
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

Result<tune::Choice> chooseOne(const tune::Tuned& t, int func, std::size_t bytes, tune::CostTable* table) {
  tune::Operation op;
  op.func = func;
  op.bytes = bytes;
  return tune::choose(t.comm, t.model, t.settings, op, nullptr, table);
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
  std::printf("# NCCL 2.28.9's choice for one operation per size (float32 sum, no tuner plugin); %d ranks on %d "
              "nodes, %d channels\n",
              t.comm.nRanks, t.comm.nNodes, t.comm.nChannels);
  std::printf("# %-13s %14s  %-13s %-6s %8s %7s %13s\n", "coll", "bytes", "algo", "proto", "channels", "threads",
              "time_us");
  for (int f : r.funcs) {
    for (std::size_t bytes : r.sizes) {
      // NCCL fails such an operation (NCCL_ALGO/NCCL_PROTO left nothing for it): say so, go on.
      auto c = chooseOne(t, f, bytes, nullptr);
      if (!c.isOk()) {
        std::printf("  %-13s %14zu  %s\n", tune::funcName(f), bytes, c.status().toString().c_str());
        continue;
      }
      std::printf("  %-13s %14zu  %-13s %-6s %8d %7d %13.3f\n", tune::funcName(f), bytes, tune::algoName(c->algo),
                  tune::protoName(c->proto), c->nMaxChannels, c->nThreads, static_cast<double>(c->timeUs));
    }
  }
  if (!r.explain) return Status::ok();
  for (int f : r.funcs) {
    tune::CostTable table;
    auto choice = chooseOne(t, f, *r.explain, &table);
    std::printf("\n# cost table: %s, %zu bytes (µs; - where NCCL would not use the cell)\n", tune::funcName(f),
                *r.explain);
    tune::Choice c = choice.isOk() ? *choice : tune::Choice{};
    std::printf("  %-13s %12s %12s %12s\n", "", tune::protoName(0), tune::protoName(1), tune::protoName(2));
    for (int a = 0; a < tune::kNumAlgorithms; ++a) {
      std::printf("  %-13s", tune::algoName(a));
      for (int p = 0; p < tune::kNumProtocols; ++p) {
        float v = table[a][p];
        if (v < 0) std::printf(" %12s", "-");
        else std::printf(" %11.3f%s", static_cast<double>(v), a == c.algo && p == c.proto ? "*" : " ");
      }
      std::printf("\n");
    }
    if (!choice.isOk()) {
      std::printf("  => %s\n", choice.status().toString().c_str());
      continue;
    }
    std::printf("  => %s/%s, %d channels, %d threads, %.3f us\n", tune::algoName(c.algo), tune::protoName(c.proto),
                c.nMaxChannels, c.nThreads, static_cast<double>(c.timeUs));
  }
  return Status::ok();
}

Status writeTuneJson(JsonWriter& w, const tune::Tuned& t, const TuneRequest& r) {
  w.key("choices").beginArray();
  for (int f : r.funcs) {
    for (std::size_t bytes : r.sizes) {
      auto choice = chooseOne(t, f, bytes, nullptr);
      w.beginObject().field("coll", tune::funcName(f)).field("bytes", static_cast<int64_t>(bytes));
      if (!choice.isOk()) {
        w.field("error", choice.status().message()).endObject();
        continue;
      }
      const tune::Choice& c = *choice;
      w.field("algo", tune::algoName(c.algo)).field("proto", tune::protoName(c.proto));
      w.field("channels", c.nMaxChannels).field("threads", c.nThreads);
      // NCCL's float with the three decimals NCCL's tools print.
      w.key("time_us").fixed(static_cast<double>(c.timeUs), 3);
      w.endObject();
    }
  }
  w.endArray();
  if (!r.explain) return Status::ok();
  w.key("explain").beginArray();
  for (int f : r.funcs) {
    tune::CostTable table;
    auto choice = chooseOne(t, f, *r.explain, &table);
    w.beginObject().field("coll", tune::funcName(f)).field("bytes", static_cast<int64_t>(*r.explain));
    w.key("table").beginObject();
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
    if (choice.isOk()) w.field("algo", tune::algoName(choice->algo)).field("proto", tune::protoName(choice->proto));
    else w.field("error", choice.status().message());
    w.endObject();
  }
  w.endArray();
  return Status::ok();
}

}  // namespace weft::tool
