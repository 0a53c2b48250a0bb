// What `weft tune` and `weft search --tune` print after NCCL's tuning lines: for each collective
// and size, the algorithm, protocol, channels, threads and predicted time NCCL would use for
// one operation (float32 sum, no batching, unregistered buffers), as a table or as JSON, and
// with --explain the whole cost table of one size; with a tuner plugin, what it did.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "core/base/json.h"
#include "core/base/status.h"
#include "core/tune/offline.h"

namespace weft::tool {

struct TuneRequest {
  std::vector<int> funcs;                // tune::Func values, in the order asked
  std::vector<std::size_t> sizes;        // bytes the model receives
  std::optional<std::size_t> explain;    // --explain SIZE
};

// Parses --coll ("allreduce,allgather", case-insensitive, "all"), --sizes ("8:1G": powers of two
// from 8 B to 1 GiB; "4K", "1M,3M") and --explain ("" when absent).
Result<TuneRequest> parseTuneRequest(const std::string& colls, const std::string& sizes, const std::string& explain);

// Text: one table of choices, then the cost tables of --explain. An operation NCCL would fail
// (NCCL_ALGO/NCCL_PROTO leave it nothing) gets its error on its row (JSON: "error"), after
// NCCL's WARN line. With a tuner plugin (tuned.tuner) every choice goes through it as in NCCL's
// enqueue; its INFO/TUNING lines of each call are taken out of the log and shown instead: a
// "tuner" column ("rule FILE:LINE" when weft's YAML tuner names the rule that fired, "changed"
// when the plugin changed the table or the channels, "-"), and under --explain the table before
// and after the tuner and "tuner: rule FILE:LINE fired: algo … proto … channels …".
Status printTuneText(const tune::Tuned& tuned, const TuneRequest& request);

// JSON: "choices": [{"coll","bytes","algo","proto","channels","threads","time_us"}, …] and, with
// --explain, "explain": [{"coll","bytes","table": {"Tree": {"LL": µs or null, …}, …}}, …],
// written into an open object. With a tuner plugin: "tunerPlugin" (its name), and a "tuner"
// member on each choice the tuner acted on: {"rule","action" (when a rule fired), "channels",
// "changed": ["Ring/Simple 812.345 -> 0.000", …], "log": [its lines]}; explain entries also get
// "tuned_table" ("table" is the model's) and "tuner".
Status writeTuneJson(JsonWriter& w, const tune::Tuned& tuned, const TuneRequest& request);

// The line format of corpus/reference-nccl-2.28.9-tuning and of tools/nccl-oracle's tuning phase,
// for comparing weft with NCCL's own code line by line: the model's inputs ("# comm", "# graph"),
// NCCL's INFO lines of the tuning phase (`info`, as logged, printed with the "[0] NCCL INFO "
// prefix), then per collective and size "TUNE coll bytes algo proto time", "TUNECH coll bytes
// channels threads" and "COST coll bytes" with the 21 cells (-1.000: ignored or disabled). An
// operation NCCL would refuse: "TUNE coll bytes none none -1.000" and "TUNECH coll bytes 0 0".
// No tuner plugin (as the reference logs).
void printTuneLog(const tune::Tuned& tuned, const std::vector<std::string>& info, const TuneRequest& request);

}  // namespace weft::tool
