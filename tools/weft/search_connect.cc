#include "tools/weft/search_connect.h"


namespace weft::tool {

void writeConnectJson(JsonWriter& w, const connect::Connection& conn) {
  w.beginObject();
  w.field("nNodes", conn.nNodes).field("nRanks", conn.nRanks).field("nChannels", conn.nChannels);
  w.field("baseChannels", conn.baseChannels).field("treeDepth", conn.treeDepth);
  w.field("collnet", conn.collnet).field("nvlsChannels", conn.nvlsChannels);
  w.endObject();
}

namespace {

void writeRank(JsonWriter& w, const connect::Connection& conn, int rank) {
  w.beginObject();
  w.field("rank", rank).field("node", conn.rankToNode[static_cast<size_t>(rank)]);
  std::vector<connect::ChannelLinks> links;
  links.reserve(static_cast<size_t>(conn.nChannels));
  for (int c = 0; c < conn.nChannels; ++c) links.push_back(connect::channelOf(conn, rank, c));
  w.key("ring").beginArray();
  for (const connect::ChannelLinks& l : links) w.beginArray().value(l.ringPrev).value(l.ringNext).endArray();
  w.endArray();
  w.key("tree").beginArray();
  for (const connect::ChannelLinks& l : links) {
    w.beginArray().value(l.treeUp);
    for (int d : l.treeDown) w.value(d);
    w.endArray();
  }
  w.endArray();
  w.endObject();
}

}  // namespace

void streamRanksJson(std::FILE* out, const std::string& prefix, const connect::Connection& conn, int onlyRank) {
  std::fputs(prefix.c_str(), out);
  std::fputs(",\"ranks\":[", out);
  bool first = true;
  for (int r = 0; r < conn.nRanks; ++r) {
    if (onlyRank >= 0 && r != onlyRank) continue;
    JsonWriter w;
    writeRank(w, conn, r);
    if (!first) std::fputc(',', out);
    first = false;
    std::fputs(w.str().c_str(), out);
  }
  std::fputs("]}\n", out);
}

}  // namespace weft::tool
