// RankRows: the per-rank arrays of the connect phase ([channels][nRanks] of ints), which a
// million-rank communicator writes in full right after sizing them. Two things made them cost
// more than the writes: std::vector zero-fills what it sizes (a second pass over 300 MB), and
// each 4 KiB page's first touch faults (on a virtual machine, over a third of connect's time).
// So sizing leaves values unset, and arrays of 32 MiB or more ask for transparent huge pages
// (2 MiB: 512 times fewer faults) where the kernel offers them on request.
#pragma once

#include <sys/mman.h>

#include <cstdlib>
#include <new>
#include <vector>

namespace weft::connect {

template <class T>
struct RowAllocator {
  using value_type = T;
  static constexpr size_t kHuge = size_t{2} << 20;
  static constexpr size_t kHugeFrom = size_t{32} << 20;

  RowAllocator() = default;
  template <class U>
  RowAllocator(const RowAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    size_t bytes = n * sizeof(T);
    if (bytes < kHugeFrom) return std::allocator<T>().allocate(n);
    bytes = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p = std::aligned_alloc(kHuge, bytes);
    if (p == nullptr) throw std::bad_alloc();
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice only: without THP, plain pages
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugeFrom) std::allocator<T>().deallocate(p, n);
    else std::free(p);
  }
  // Sizing leaves the values unset (default-initialised); explicit values are written as given.
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) ::new (static_cast<void*>(p)) U;
    else ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
  template <class U>
  bool operator==(const RowAllocator<U>&) const noexcept { return true; }
};

using RankRows = std::vector<int, RowAllocator<int>>;

}  // namespace weft::connect
