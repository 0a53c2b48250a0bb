#include "core/connect/rings.h"

#include <cstdio>

#include "core/base/strings.h"

namespace weft::connect {

void connectRings(const std::vector<int>& recv, const std::vector<int>& send, int nNodes, int nRanks,
                  int nChannels, RankRows& prev, RankRows& next) {
  for (int c = 0; c < nChannels; ++c) {
    const int* r = recv.data() + static_cast<size_t>(c) * static_cast<size_t>(nNodes);
    const int* s = send.data() + static_cast<size_t>(c) * static_cast<size_t>(nNodes);
    int* p = prev.data() + static_cast<size_t>(c) * static_cast<size_t>(nRanks);
    int* x = next.data() + static_cast<size_t>(c) * static_cast<size_t>(nRanks);
    for (int n = 0; n < nNodes; ++n) {
      p[r[n]] = s[(n - 1 + nNodes) % nNodes];
      x[s[n]] = r[(n + 1) % nNodes];
    }
  }
}

Status checkRing(const Connection& conn, int ring, std::vector<uint8_t>& seen) {
  seen.assign(static_cast<size_t>(conn.nRanks), 0);
  int current = 0;
  for (int i = 0; i < conn.nRanks; ++i) {
    if (current < 0 || current >= conn.nRanks)
      return internalError(strprintf("Error : ring %d leaves the communicator after %d steps (next rank %d)", ring, i, current));
    seen[static_cast<size_t>(current)] = 1;
    current = conn.ringNext[conn.flat(ring, current)];
  }
  if (current != 0) return internalError(strprintf("Error : ring %d does not loop back to start (%d != %d)", ring, current, 0));
  for (int r = 0; r < conn.nRanks; ++r)
    if (seen[static_cast<size_t>(r)] == 0) return internalError(strprintf("Error : ring %d does not contain rank %d", ring, r));
  return Status::ok();
}

std::string channelLine(const Connection& conn, int c) {
  // NCCL formats into a 128-byte buffer while fewer than 127 characters are written; when the
  // text would have reached 128 characters, its last three visible ones become "...".
  constexpr size_t kLine = 128;
  int width = std::snprintf(nullptr, 0, "%d", conn.nRanks - 1);
  std::string line = strprintf("Channel %02d/%02d :", c, conn.nChannels);
  int ring = conn.ringIndex(c);
  int current = 0;
  char buf[32];
  for (int i = 0; i < conn.nRanks && line.size() < kLine - 1; ++i) {
    std::snprintf(buf, sizeof(buf), " %*d", width, current);
    line += buf;
    current = conn.ringNext[conn.flat(ring, current)];
    if (current < 0 || current >= conn.nRanks) break;
  }
  if (line.size() >= kLine) line = line.substr(0, kLine - 4) + "...";
  return line;
}

}  // namespace weft::connect
