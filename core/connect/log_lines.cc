#include "core/connect/log_lines.h"

#include "core/base/log.h"
#include "core/base/strings.h"
#include "core/connect/collnet.h"
#include "core/connect/nvls.h"
#include "core/connect/rings.h"

namespace weft::connect {
namespace {

std::string treeLine(const Connection& conn, int rank, int stored) {
  std::array<int, kMaxTreeArity> d = conn.treeDownOf(stored, rank);
  return strprintf("Tree %d : %d -> %d -> %d/%d/%d", stored, conn.treeUpOf(stored, rank), rank, d[0], d[1], d[2]);
}

void add(std::vector<LogLine>& out, uint64_t subsys, std::string text) {
  out.push_back(LogLine{subsys, std::move(text)});
}

}  // namespace

std::vector<std::string> treeLines(const Connection& conn, int rank) {
  std::vector<std::string> out;
  size_t node = static_cast<size_t>(conn.rankToNode[static_cast<size_t>(rank)]);
  for (int c = 0; c < conn.baseChannels; ++c) {
    size_t i = static_cast<size_t>(c) * static_cast<size_t>(conn.nNodes) + node;
    if (rank != conn.treeToParent[i] && rank != conn.treeToChild0[i] && rank != conn.treeToChild1[i]) continue;
    out.push_back(treeLine(conn, rank, c));
    out.push_back(treeLine(conn, rank, c + conn.baseChannels));
  }
  return out;
}

std::string ringLine(const Connection& conn, int rank, int c) {
  return strprintf("Ring %02d : %d -> %d -> %d", c, conn.ringPrevOf(c, rank), rank, conn.ringNextOf(c, rank));
}

std::string treesLine(const Connection& conn, int rank) {
  constexpr size_t kMax = 1022;  // snprintf into line[1024] with 1023 - strlen(line) bytes left
  std::string line;
  for (int c = 0; c < conn.nChannels && line.size() < kMax; ++c) {
    ChannelLinks l = channelOf(conn, rank, c);
    line += strprintf(" [%d] %d/%d/%d->%d->%d", c, l.treeDown[0], l.treeDown[1], l.treeDown[2], rank, l.treeUp);
  }
  if (line.size() > kMax) line.resize(kMax);
  return "Trees" + line;
}

std::vector<LogLine> rankLogLines(const Connection& conn, int rank) {
  std::vector<LogLine> out;
  for (const std::string& note : conn.initNotes) add(out, log::kInit, note);
  for (std::string& l : treeLines(conn, rank)) add(out, log::kGraph, std::move(l));
  if (!conn.collnetNodes.empty())
    for (int c = 0; c < conn.collnetChannels; ++c) add(out, log::kGraph, collnetDirectLine(conn, rank, c));
  if (conn.rankToNode[static_cast<size_t>(rank)] == 0)
    for (std::string& l : nvlsHeadLines(conn)) add(out, log::kInit, std::move(l));
  if (std::string l = nvlsTreesLine(conn, rank); !l.empty()) add(out, log::kGraph, std::move(l));
  if (rank == 0)
    for (int c = 0; c < conn.nChannels; ++c) add(out, log::kInit, channelLine(conn, c));
  for (int c = 0; c < conn.nChannels; ++c) add(out, log::kGraph, ringLine(conn, rank, c));
  add(out, log::kInit, treesLine(conn, rank));
  return out;
}

void logRank(const Connection& conn, int rank) {
  log::Logger& logger = log::processLogger();
  if (!logger.enabled(log::Level::kInfo, log::kInit | log::kGraph)) return;
  log::ScopedDevice device(rank);
  for (const LogLine& l : rankLogLines(conn, rank)) WEFT_INFO(l.subsys, "%s", l.text.c_str());
}

}  // namespace weft::connect
