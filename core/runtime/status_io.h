// What the status service and its client share: the local request and whole-buffer socket I/O
// with a deadline.
#pragma once

#include <cstddef>

namespace weft::runtime {

inline constexpr char kLocalRequest[] = "weft-status\n";

// Reads exactly `size` bytes within `timeoutMs`; false on a timeout, a close or an error.
bool readFull(int fd, void* data, size_t size, int timeoutMs);
// Writes all of `data` (blocking); false when the peer went away.
bool writeFull(int fd, const void* data, size_t size);

}  // namespace weft::runtime
