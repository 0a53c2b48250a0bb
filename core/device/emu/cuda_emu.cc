#include "core/device/emu/cuda_emu.h"

#include <cassert>
#include <thread>
#include <vector>

namespace weft::device::emu {

void Block::sync(unsigned id, unsigned nthreads) {
  std::barrier<>* b = nullptr;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto& slot = named_.at(id);
    if (!slot) slot = std::make_unique<std::barrier<>>(static_cast<std::ptrdiff_t>(nthreads));
    b = slot.get();
  }
  b->arrive_and_wait();
}

ThreadContext& context() {
  thread_local ThreadContext ctx;
  return ctx;
}

void launch(dim3 grid, dim3 block, const std::function<void()>& body) {
  assert(grid.y == 1 && grid.z == 1 && block.y == 1 && block.z == 1);
  std::vector<std::unique_ptr<Block>> blocks;
  for (unsigned b = 0; b < grid.x; ++b) blocks.push_back(std::make_unique<Block>(block.x));
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(grid.x) * block.x);
  for (unsigned b = 0; b < grid.x; ++b) {
    for (unsigned t = 0; t < block.x; ++t) {
      threads.emplace_back([&, b, t] {
        ThreadContext& ctx = context();
        ctx.thread = uint3{t, 0, 0};
        ctx.blk = uint3{b, 0, 0};
        ctx.blockSize = block;
        ctx.gridSize = grid;
        ctx.block = blocks[b].get();
        body();
        ctx.block = nullptr;
      });
    }
  }
  for (std::thread& t : threads) t.join();
}

}  // namespace weft::device::emu
