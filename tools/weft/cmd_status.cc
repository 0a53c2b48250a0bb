// `weft status`: asks the running weft jobs of this user on this host (like NCCL's `ncclras`)
// what every rank of every communicator is doing, and which ranks are behind, stopped or
// unreachable.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/base/json.h"
#include "core/base/strings.h"
#include "core/runtime/status.h"
#include "tools/weft/commands.h"

namespace weft::tool {
namespace {

using runtime::CommStatus;
using runtime::RankEntry;

constexpr const char* kStatusHelp = R"(
Every process of a weft job answers through a socket in a directory only its user can enter
(WEFT_STATUS_DIR, else $XDG_RUNTIME_DIR/weft, else /tmp/weft-<uid>); asked, it gathers the reports
of every rank of its communicators, on this host and the others, within 600 ms. A rank that does
not answer is stopped (SIGSTOP, a debugger), frozen, or cut off from the network.

Columns: collectives called so far, the collective running now, the communicator's state.
"behind": ranks that called fewer collectives than the others.

Examples:
  weft status                      every job of this user on this host
  weft status --pid 4242           only process 4242's communicators
  weft status --format json | jq '.communicators[0].noAnswer'

Exit status: 0 answers printed, 1 no job answered.)";

struct StatusArgs {
  std::vector<int> pids;
  std::string format = "text", dir;
  int timeoutMs = 900;  // each process gathers its ranks' reports within 600 ms
};

struct Analysis {
  std::vector<int> behind, noAnswer, failed;
  uint64_t most = 0;  // collectives called by the ranks furthest ahead
};

Analysis analyse(const CommStatus& c) {
  Analysis a;
  for (const RankEntry& e : c.ranks)
    if (e.answered) a.most = std::max(a.most, e.report.collectives);
  for (size_t r = 0; r < c.ranks.size(); ++r) {
    const RankEntry& e = c.ranks[r];
    if (!e.answered) a.noAnswer.push_back(static_cast<int>(r));
    else if (e.report.state != 0 && e.report.state != 7) a.failed.push_back(static_cast<int>(r));
    else if (e.report.collectives < a.most) a.behind.push_back(static_cast<int>(r));
  }
  return a;
}

std::string stateText(const RankEntry& e) {
  if (!e.answered) return "no answer in 600 ms: stopped (SIGSTOP, a debugger), frozen or unreachable";
  if (e.report.finalized) return "finalized";
  if (e.report.state == 0) return "ok";
  if (e.report.state == 7) return "initializing";
  return std::string("failed: ") + e.report.error;
}

std::string ranksText(const std::vector<int>& v) {
  std::string s;
  for (int r : v) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

void printText(const std::vector<std::pair<int, CommStatus>>& comms) {
  for (const auto& [pid, c] : comms) {
    Analysis a = analyse(c);
    std::set<std::string> hosts;
    for (const RankEntry& e : c.ranks)
      if (e.answered) hosts.insert(e.report.host);
    std::printf("communicator 0x%016llx: %d ranks on %zu host(s) that answered; asked rank %d (pid %d)\n",
                static_cast<unsigned long long>(c.commHash), c.nranks, hosts.size(), c.askedRank, pid);
    std::printf("  %5s  %-16s  %8s  %11s  %-22s  %s\n", "rank", "host", "pid", "collectives", "running", "state");
    for (size_t r = 0; r < c.ranks.size(); ++r) {
      const RankEntry& e = c.ranks[r];
      std::string running = "-";
      if (e.answered && e.report.running != 0)
        running = strprintf("%s #%llu", e.report.runningName, static_cast<unsigned long long>(e.report.running));
      if (e.answered)
        std::printf("  %5zu  %-16s  %8d  %11llu  %-22s  %s\n", r, e.report.host, e.report.pid,
                    static_cast<unsigned long long>(e.report.collectives), running.c_str(), stateText(e).c_str());
      else
        std::printf("  %5zu  %-16s  %8s  %11s  %-22s  %s\n", r, "?", "?", "?", "?", stateText(e).c_str());
    }
    if (!a.behind.empty())
      std::printf("  behind: rank %s (the others called %llu collectives)\n", ranksText(a.behind).c_str(),
                  static_cast<unsigned long long>(a.most));
    if (!a.noAnswer.empty()) std::printf("  no answer: rank %s\n", ranksText(a.noAnswer).c_str());
    if (!a.failed.empty()) std::printf("  failed: rank %s\n", ranksText(a.failed).c_str());
    if (a.behind.empty() && a.noAnswer.empty() && a.failed.empty()) std::printf("  every rank answered, none behind\n");
  }
}

void printJson(const std::vector<std::pair<int, CommStatus>>& comms) {
  JsonWriter w;
  w.beginObject().key("communicators").beginArray();
  for (const auto& [pid, c] : comms) {
    Analysis a = analyse(c);
    w.beginObject()
        .field("commHash", strprintf("0x%016llx", static_cast<unsigned long long>(c.commHash)))
        .field("nranks", c.nranks)
        .field("askedRank", c.askedRank)
        .field("askedPid", pid)
        .key("ranks")
        .beginArray();
    for (size_t r = 0; r < c.ranks.size(); ++r) {
      const RankEntry& e = c.ranks[r];
      w.beginObject().field("rank", static_cast<int>(r)).field("answered", e.answered != 0);
      if (e.answered) {
        w.field("host", e.report.host)
            .field("pid", e.report.pid)
            .field("collectives", static_cast<int64_t>(e.report.collectives))
            .field("running", static_cast<int64_t>(e.report.running))
            .field("runningName", e.report.runningName)
            .field("state", e.report.finalized ? "finalized" : e.report.state == 0 ? "ok" : e.report.state == 7 ? "initializing" : "failed")
            .field("error", e.report.error)
            .key("millis")
            .fixed(e.millis, 3);
      }
      w.field("statusAddress", e.statusAddr.str()).endObject();
    }
    w.endArray();
    for (auto [name, v] : {std::pair<const char*, const std::vector<int>*>{"behind", &a.behind},
                           {"noAnswer", &a.noAnswer},
                           {"failed", &a.failed}}) {
      w.key(name).beginArray();
      for (int r : *v) w.value(r);
      w.endArray();
    }
    w.endObject();
  }
  w.endArray().endObject();
  std::printf("%s\n", w.str().c_str());
}

int runStatus(const StatusArgs& args) {
  std::string dir = args.dir.empty() ? runtime::statusDir() : args.dir;
  std::vector<int> pids = args.pids.empty() ? runtime::statusProcesses(dir) : args.pids;
  // Every process at once: a stopped one must not delay the others' answers.
  std::vector<Result<std::vector<CommStatus>>> replies(pids.size(), Result<std::vector<CommStatus>>(internalError("not asked")));
  std::vector<std::thread> askers;
  for (size_t i = 0; i < pids.size(); ++i)
    askers.emplace_back([&, i] { replies[i] = runtime::queryStatus(dir, pids[i], std::chrono::milliseconds(args.timeoutMs)); });
  for (std::thread& t : askers) t.join();
  // One entry per communicator: the process whose report has the most answers.
  std::map<uint64_t, std::pair<int, CommStatus>> best;
  int answered = 0;
  for (size_t i = 0; i < pids.size(); ++i) {
    auto& r = replies[i];
    int pid = pids[i];
    if (!r.isOk()) {
      std::fprintf(stderr, "weft status: %s\n", r.status().message().c_str());
      continue;
    }
    ++answered;
    for (CommStatus& c : *r) {
      auto count = [](const CommStatus& s) {
        return std::count_if(s.ranks.begin(), s.ranks.end(), [](const RankEntry& e) { return e.answered != 0; });
      };
      auto it = best.find(c.commHash);
      if (it == best.end() || count(c) > count(it->second.second)) best[c.commHash] = {pid, std::move(c)};
    }
  }
  if (answered == 0) {
    std::fprintf(stderr, "weft status: no weft job of this user answered on this host (no live socket in %s)\n", dir.c_str());
    return kExitFailure;
  }
  std::vector<std::pair<int, CommStatus>> comms;
  for (auto& [hash, pc] : best) comms.push_back(std::move(pc));
  if (args.format == "json") printJson(comms);
  else printText(comms);
  return kExitOk;
}

}  // namespace

void addStatusCommand(CLI::App& app) {
  static StatusArgs args;
  CLI::App* cmd = app.add_subcommand("status", "What every rank of the running jobs on this host is doing (like ncclras)");
  cmd->footer(kStatusHelp);
  cmd->add_option("--pid", args.pids, "Ask only these processes (repeatable)");
  cmd->add_option("--format", args.format, "text (default) or json")->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--dir", args.dir, "The sockets' directory (default: WEFT_STATUS_DIR, $XDG_RUNTIME_DIR/weft, /tmp/weft-<uid>)");
  cmd->add_option("--timeout-ms", args.timeoutMs, "How long to wait for each process (default 900)")->check(CLI::PositiveNumber);
  cmd->callback([] {
    int rc = runStatus(args);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace weft::tool
