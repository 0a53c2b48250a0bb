// What the sanitizer build (ASan + UBSan, or TSan) runs of the widest sweeps. It runs every test,
// but a sweep whose cases differ only in sizes or counts of the same code takes a sample there:
// the plain build has already checked every case for the right result, and a memory error in the
// shared code shows up in any of them. Each sampled test says so in its output.
#pragma once

#include <cstdio>
#include <vector>

namespace weft::test {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// `all` in a plain build, `sample` in a sanitizer build (for a parameterised suite's values).
template <class T>
std::vector<T> plainOrSanitized(std::vector<T> all, std::vector<T> sample) {
  return kSanitized ? sample : all;
}

// Every element in a plain build, every `stride`-th one (starting with the first) in a sanitizer
// build; prints one line saying how many it kept when it left some out.
template <class T>
std::vector<T> sampleUnderSanitizer(const std::vector<T>& all, size_t stride, const char* what) {
  if (!kSanitized || stride <= 1) return all;
  std::vector<T> kept;
  for (size_t i = 0; i < all.size(); i += stride) kept.push_back(all[i]);
  std::printf("[ sanitizer] %zu of %zu %s (one in %zu; the plain build checks them all)\n", kept.size(),
              all.size(), what, stride);
  return kept;
}

// A minimum count of checks that the full sweep reaches, scaled to the sampled one, with room
// for a sample that falls on more of the cases that do not count (half the even share).
inline int expectedUnderSanitizer(int full, size_t stride) {
  return kSanitized && stride > 1 ? full / static_cast<int>(2 * stride) : full;
}

}  // namespace weft::test
