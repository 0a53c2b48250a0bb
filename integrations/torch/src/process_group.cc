#include "process_group.h"

#include <c10/util/Exception.h>

#include <algorithm>
#include <cstring>
#include <mutex>
#include <numeric>

namespace weft_torch {
namespace {

std::string ranksText(int rank, int size) { return "rank " + std::to_string(rank) + " of " + std::to_string(size); }

// Rank 0 makes the communicator's unique id and puts it in the store; the others wait for it.
// Each rank counts the process groups it made on this store, so that a store serving several in
// turn gives each its own key.
weft_unique_id_t exchangeUniqueId(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                  std::chrono::milliseconds timeout) {
  const int64_t generation = store->add("weft/generation/" + std::to_string(rank), 1);
  const std::string key = "weft/unique_id/" + std::to_string(generation);
  weft_unique_id_t id;
  if (rank == 0) {
    TORCH_CHECK(weft_get_unique_id(&id) == weftSuccess, "weft: making the communicator's unique id failed on ",
                ranksText(rank, size), ": ", weft_last_error());
    store->set(key, std::vector<uint8_t>(id.internal, id.internal + sizeof(id.internal)));
    return id;
  }
  try {
    store->wait({key}, timeout);
  } catch (const std::exception& e) {
    TORCH_CHECK(false, "weft: ", ranksText(rank, size), " did not receive the communicator's unique id from rank 0 "
                "through the store within ", timeout.count(), " ms: ", e.what());
  }
  std::vector<uint8_t> bytes = store->get(key);
  TORCH_CHECK(bytes.size() == sizeof(id.internal), "weft: the unique id in the store under '", key, "' has ",
              bytes.size(), " bytes, expected ", sizeof(id.internal));
  std::memcpy(id.internal, bytes.data(), sizeof(id.internal));
  return id;
}

// Every live process group, for shutdownAll() at interpreter exit.
std::mutex& liveMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::weak_ptr<CommRunner>>& liveRunners() {
  static std::vector<std::weak_ptr<CommRunner>> v;
  return v;
}

// Element counts of the blocks an alltoall sends to (or receives from) each rank: splits[r] rows
// of the tensor's first dimension for rank r, or equal blocks when `splits` is empty.
std::vector<size_t> blockSizes(const std::vector<int64_t>& splits, const at::Tensor& t, int size, const char* side) {
  std::vector<size_t> counts(static_cast<size_t>(size));
  if (splits.empty()) {
    TORCH_CHECK(t.dim() > 0 ? t.size(0) % size == 0 : t.numel() == 0, "weft: alltoall_base: the ", side,
                " tensor's first dimension (", t.dim() > 0 ? t.size(0) : 0, ") does not split evenly over ", size,
                " ranks");
    std::fill(counts.begin(), counts.end(), static_cast<size_t>(t.numel() / size));
    return counts;
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, "weft: alltoall_base: ", splits.size(), " ", side,
              " split sizes for ", size, " ranks");
  const int64_t rows = std::accumulate(splits.begin(), splits.end(), int64_t{0});
  TORCH_CHECK(t.dim() > 0 && rows == t.size(0), "weft: alltoall_base: the ", side, " split sizes add up to ", rows,
              " rows, the tensor has ", t.dim() > 0 ? t.size(0) : 0);
  const int64_t rowElems = rows > 0 ? t.numel() / rows : 0;
  for (size_t r = 0; r < counts.size(); ++r) {
    TORCH_CHECK(splits[r] >= 0, "weft: alltoall_base: negative split size ", splits[r]);
    counts[r] = static_cast<size_t>(splits[r] * rowElems);
  }
  return counts;
}

// The last step of an operation whose results land in staged buffers: copies them back to the
// caller's tensors once the operation succeeded.
std::function<void(weft_comm_t*, bool)> writeBackOnSuccess(std::vector<Staged> outs) {
  return [outs = std::move(outs)](weft_comm_t*, bool ok) {
    if (ok)
      for (const Staged& s : outs) s.writeBack();
  };
}

std::vector<size_t> offsetsOf(const std::vector<size_t>& counts) {
  std::vector<size_t> offsets(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i) offsets[i] = offsets[i - 1] + counts[i - 1];
  return offsets;
}

}  // namespace

ProcessGroupWeft::ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   std::chrono::milliseconds timeout)
    : BackendBase(rank, size), timeout_(timeout) {
  weft_unique_id_t id = exchangeUniqueId(store, rank, size, timeout);
  try {
    runner_ = CommRunner::create(id, rank, size, timeout);
  } catch (const std::exception& e) {
    TORCH_CHECK(false, e.what());
  }
  {
    std::lock_guard<std::mutex> lock(liveMutex());
    auto& live = liveRunners();
    live.erase(std::remove_if(live.begin(), live.end(), [](const auto& w) { return w.expired(); }), live.end());
    live.push_back(runner_);
  }
  init();
}

ProcessGroupWeft::~ProcessGroupWeft() { shutdown(); }

void ProcessGroupWeft::shutdown() {
  if (runner_) runner_->shutdown();
}

void ProcessGroupWeft::shutdownAll() {
  std::vector<std::shared_ptr<CommRunner>> runners;
  {
    std::lock_guard<std::mutex> lock(liveMutex());
    for (const auto& w : liveRunners())
      if (auto r = w.lock()) runners.push_back(std::move(r));
  }
  for (auto& r : runners) r->shutdown();
}

std::chrono::milliseconds ProcessGroupWeft::timeoutOr(std::chrono::milliseconds given) const {
  return given == c10d::kUnsetTimeout ? timeout_ : given;
}

void ProcessGroupWeft::checkRoot(int64_t root, const char* what) const {
  TORCH_CHECK(root >= 0 && root < getSize(), "weft: ", what, ": root rank ", root, " is not a rank of this group (0..",
              getSize() - 1, ")");
}

void ProcessGroupWeft::checkPeer(int peer, const char* what) const {
  TORCH_CHECK(peer >= 0 && peer < getSize(), "weft: ", what, ": rank ", peer, " is not a rank of this group (0..",
              getSize() - 1, ")");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::submit(c10d::OpType type, std::string name,
                                                        std::vector<at::Tensor> outputs, Issue issue, Finish finish,
                                                        std::chrono::milliseconds timeout, bool pointToPoint) {
  std::unique_lock<std::mutex> lock(submitMutex_);
  // Only a point-to-point op outside a batch is held back, so only its Work releases it.
  const bool held = pointToPoint && !coalescing_;
  auto work = c10::make_intrusive<WeftWork>(getRank(), type, std::move(outputs),
                                            held ? std::weak_ptr<CommRunner>(runner_) : std::weak_ptr<CommRunner>());
  Op op;
  op.name = std::move(name);
  op.issue = std::move(issue);
  op.timeout = timeout;
  op.pointToPoint = held;
  op.complete = [work, finish = std::move(finish), what = op.name](weft_comm_t* comm, const std::string* error) {
    std::string failure;
    if (finish) {
      try {
        finish(comm, error == nullptr);
      } catch (const std::exception& e) {
        failure = "weft: " + what + ": copying the result out failed: " + e.what();
      }
    }
    work->markDone(error != nullptr ? error : (failure.empty() ? nullptr : &failure));
  };
  if (coalescing_) {
    coalesced_.push_back(std::move(op));
    return work;
  }
  lock.unlock();  // a refused op completes at once, and its callbacks may submit again
  runner_->submit(std::move(op));
  return work;
}

std::vector<Op> ProcessGroupWeft::takeCoalesced() {
  std::lock_guard<std::mutex> lock(submitMutex_);
  TORCH_CHECK(coalescing_, "weft: endCoalescing without startCoalescing");
  coalescing_ = false;
  std::vector<Op> batch;
  batch.swap(coalesced_);
  return batch;
}

void ProcessGroupWeft::startCoalescing() {
  std::lock_guard<std::mutex> lock(submitMutex_);
  TORCH_CHECK(!coalescing_, "weft: startCoalescing: this process group is already coalescing");
  coalescing_ = true;
}

#if WEFT_TORCH_BACKEND_API
c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::endCoalescing() {
  std::vector<Op> batch = takeCoalesced();
  // One more op, last in the batch, completes the batch's own Work.
  auto work = c10::make_intrusive<WeftWork>(getRank(), c10d::OpType::UNKNOWN, std::vector<at::Tensor>());
  Op last;
  last.name = "coalesced operations";
  last.issue = [](weft_comm_t*) { return weftSuccess; };
  last.complete = [work](weft_comm_t*, const std::string* error) { work->markDone(error); };
  batch.push_back(std::move(last));
  runner_->submitBatch(std::move(batch));
  return work;
}
#else
void ProcessGroupWeft::endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& /* reqs: the ops' own Works */) {
  runner_->submitBatch(takeCoalesced());
}
#endif

// ---- Collectives ------------------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "broadcast");
  checkRoot(opts.rootRank, "broadcast");
  TORCH_CHECK(opts.rootTensor == 0, "weft: broadcast: rootTensor ", opts.rootTensor, " (one tensor per process)");
  Staged s(t);
  const int root = static_cast<int>(opts.rootRank);
  return submit(
      c10d::OpType::BROADCAST, "broadcast", {t},
      [s, root](weft_comm_t* comm) { return weft_broadcast(s.data(), s.data(), s.bytes(), weftUint8, root, comm, nullptr); },
      writeBackOnSuccess({s}), timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::submitReduction(c10d::OpType type, const char* name,
                                                                 const c10d::ReduceOp& reduceOp,
                                                                 const at::Tensor& output, ReduceCall call,
                                                                 bool writesOutput, std::chrono::milliseconds timeout) {
  auto op = std::make_shared<BoundOp>(reductionFor(reduceOp, output.scalar_type(), name));
  Staged out(output);
  return submit(
      type, name, {output},
      [out, op, call = std::move(call)](weft_comm_t* comm) {
        weft_result_t r = op->bind(comm);
        return r != weftSuccess ? r : call(comm, out, op->reduction(), op->op());
      },
      [out, op, writesOutput](weft_comm_t* comm, bool ok) {
        op->release(comm);
        if (ok && writesOutput) out.writeBack();
      },
      timeout);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "allreduce");
  return submitReduction(
      c10d::OpType::ALLREDUCE, "allreduce", opts.reduceOp, t,
      [](weft_comm_t* comm, const Staged& s, const Reduction& red, weft_redop_t op) {
        return weft_allreduce(s.data(), s.data(), red.count(s.buffer()), red.type, op, comm, nullptr);
      },
      true, timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                                                     const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "weft: allreduce_coalesced: no tensors");
  std::vector<Staged> staged;
  std::vector<std::shared_ptr<BoundOp>> ops;
  for (const at::Tensor& t : tensors) {
    checkCpuDense(t, "allreduce_coalesced");
    staged.emplace_back(t);
    ops.push_back(std::make_shared<BoundOp>(reductionFor(opts.reduceOp, t.scalar_type(), "allreduce_coalesced")));
  }
  return submit(
      c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced", tensors,
      [staged, ops](weft_comm_t* comm) {
        for (size_t i = 0; i < staged.size(); ++i) {
          weft_result_t r = ops[i]->bind(comm);
          const Reduction& red = ops[i]->reduction();
          if (r == weftSuccess)
            r = weft_allreduce(staged[i].data(), staged[i].data(), red.count(staged[i].buffer()), red.type, ops[i]->op(),
                               comm, nullptr);
          if (r != weftSuccess) return r;
        }
        return weftSuccess;
      },
      [staged, ops, copyBack = writeBackOnSuccess(staged)](weft_comm_t* comm, bool ok) {
        for (const auto& op : ops) op->release(comm);
        copyBack(comm, ok);
      },
      timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  const at::Tensor& t = onlyTensor(tensors, "reduce");
  checkRoot(opts.rootRank, "reduce");
  TORCH_CHECK(opts.rootTensor == 0, "weft: reduce: rootTensor ", opts.rootTensor, " (one tensor per process)");
  const int root = static_cast<int>(opts.rootRank);
  return submitReduction(
      c10d::OpType::REDUCE, "reduce", opts.reduceOp, t,
      [root](weft_comm_t* comm, const Staged& s, const Reduction& red, weft_redop_t op) {
        return weft_reduce(s.data(), s.data(), red.count(s.buffer()), red.type, op, root, comm, nullptr);
      },
      root == getRank(), timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_allgather_base(at::Tensor& output, at::Tensor& input,
                                                                 const c10d::AllgatherOptions& opts) {
  checkCpuDense(output, "_allgather_base");
  checkCpuDense(input, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "weft: _allgather_base: output is ", output.scalar_type(),
              ", input is ", input.scalar_type());
  TORCH_CHECK(output.numel() == input.numel() * getSize(), "weft: _allgather_base: output has ", output.numel(),
              " elements, expected ", getSize(), " x ", input.numel());
  at::Tensor in = readable(input);
  Staged out(output);
  return submit(
      c10d::OpType::_ALLGATHER_BASE, "_allgather_base", {output},
      [in, out](weft_comm_t* comm) {
        return weft_allgather(in.data_ptr(), out.data(), byteCount(in), weftUint8, comm, nullptr);
      },
      writeBackOnSuccess({out}), timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                                           std::vector<at::Tensor>& inputs,
                                                           const c10d::AllgatherOptions& opts) {
  std::vector<std::vector<at::Tensor>> lists = outputs;
  return allgather_coalesced(lists, inputs, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                                                     std::vector<at::Tensor>& inputs,
                                                                     const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(!inputs.empty() && outputLists.size() == inputs.size(), "weft: allgather: ", outputLists.size(),
              " output lists for ", inputs.size(), " inputs");
  // Each input is gathered into one contiguous buffer, then copied out to the caller's tensors.
  std::vector<at::Tensor> ins, flats;
  std::vector<at::Tensor> results;
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkCpuDense(inputs[i], "allgather");
    TORCH_CHECK(static_cast<int>(outputLists[i].size()) == getSize(), "weft: allgather: ", outputLists[i].size(),
                " output tensors for ", getSize(), " ranks");
    checkSameShapeAs(outputLists[i], inputs[i], "allgather");
    ins.push_back(readable(inputs[i]));
    flats.push_back(at::empty({getSize() * inputs[i].numel()}, inputs[i].options()));
    results.insert(results.end(), outputLists[i].begin(), outputLists[i].end());
  }
  return submit(
      inputs.size() == 1 ? c10d::OpType::ALLGATHER : c10d::OpType::ALLGATHER_COALESCED, "allgather", results,
      [ins, flats](weft_comm_t* comm) {
        for (size_t i = 0; i < ins.size(); ++i) {
          weft_result_t r = weft_allgather(ins[i].data_ptr(), flats[i].data_ptr(), byteCount(ins[i]), weftUint8, comm, nullptr);
          if (r != weftSuccess) return r;
        }
        return weftSuccess;
      },
      [lists = outputLists, flats](weft_comm_t*, bool ok) {
        if (!ok) return;
        for (size_t i = 0; i < lists.size(); ++i)
          for (size_t r = 0; r < lists[i].size(); ++r) {
            const int64_t n = lists[i][r].numel();
            lists[i][r].copy_(flats[i].narrow(0, static_cast<int64_t>(r) * n, n).view(lists[i][r].sizes()));
          }
      },
      timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                                                      const c10d::ReduceScatterOptions& opts) {
  checkCpuDense(output, "_reduce_scatter_base");
  checkCpuDense(input, "_reduce_scatter_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "weft: _reduce_scatter_base: output is ",
              output.scalar_type(), ", input is ", input.scalar_type());
  TORCH_CHECK(input.numel() == output.numel() * getSize(), "weft: _reduce_scatter_base: input has ", input.numel(),
              " elements, expected ", getSize(), " x ", output.numel());
  at::Tensor in = readable(input);
  return submitReduction(
      c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", opts.reduceOp, output,
      [in](weft_comm_t* comm, const Staged& out, const Reduction& red, weft_redop_t op) {
        return weft_reduce_scatter(in.data_ptr(), out.data(), red.count(out.buffer()), red.type, op, comm, nullptr);
      },
      true, timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter(std::vector<at::Tensor>& outputs,
                                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                                const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& out = onlyTensor(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "weft: reduce_scatter: expected ",
              "one list of ", getSize(), " input tensors");
  checkSameShapeAs(inputs[0], out, "reduce_scatter");
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : inputs[0]) flat.push_back(t.reshape({-1}));
  at::Tensor in = at::cat(flat).view(std::vector<int64_t>{getSize() * out.numel()});
  at::Tensor output = out;
  return _reduce_scatter_base(output, in, opts);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall_base(at::Tensor& output, at::Tensor& input,
                                                               std::vector<int64_t>& outputSplits,
                                                               std::vector<int64_t>& inputSplits,
                                                               const c10d::AllToAllOptions& opts) {
  checkCpuDense(output, "alltoall_base");
  checkCpuDense(input, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "weft: alltoall_base: output is ", output.scalar_type(),
              ", input is ", input.scalar_type());
  at::Tensor in = readable(input);
  Staged out(output);
  const size_t elem = static_cast<size_t>(input.element_size());
  if (outputSplits.empty() && inputSplits.empty()) {
    TORCH_CHECK(output.numel() == input.numel() && input.numel() % getSize() == 0, "weft: alltoall_base: input (",
                input.numel(), " elements) and output (", output.numel(), ") must be equal and split evenly over ",
                getSize(), " ranks");
    const size_t block = byteCount(in) / static_cast<size_t>(getSize());
    return submit(
        c10d::OpType::ALLTOALL_BASE, "alltoall_base", {output},
        [in, out, block](weft_comm_t* comm) { return weft_alltoall(in.data_ptr(), out.data(), block, weftUint8, comm, nullptr); },
        writeBackOnSuccess({out}), timeoutOr(opts.timeout));
  }
  std::vector<size_t> sendCounts = blockSizes(inputSplits, input, getSize(), "input");
  std::vector<size_t> recvCounts = blockSizes(outputSplits, output, getSize(), "output");
  const size_t me = static_cast<size_t>(getRank());
  TORCH_CHECK(sendCounts[me] == recvCounts[me], "weft: alltoall_base: this rank sends itself ", sendCounts[me],
              " elements but expects ", recvCounts[me]);
  std::vector<size_t> sendOffsets = offsetsOf(sendCounts), recvOffsets = offsetsOf(recvCounts);
  return submit(
      c10d::OpType::ALLTOALL_BASE, "alltoall_base", {output},
      [in, out, elem, me, sendCounts, recvCounts, sendOffsets, recvOffsets](weft_comm_t* comm) {
        auto* src = static_cast<const char*>(in.data_ptr());
        auto* dst = static_cast<char*>(out.data());
        std::memcpy(dst + recvOffsets[me] * elem, src + sendOffsets[me] * elem, sendCounts[me] * elem);
        for (size_t r = 0; r < sendCounts.size(); ++r) {
          if (r == me) continue;
          const int peer = static_cast<int>(r);
          weft_result_t rc = weft_send(src + sendOffsets[r] * elem, sendCounts[r] * elem, weftUint8, peer, comm, nullptr);
          if (rc == weftSuccess)
            rc = weft_recv(dst + recvOffsets[r] * elem, recvCounts[r] * elem, weftUint8, peer, comm, nullptr);
          if (rc != weftSuccess) return rc;
        }
        return weftSuccess;
      },
      writeBackOnSuccess({out}), timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == getSize() && static_cast<int>(inputs.size()) == getSize(),
              "weft: alltoall: expected ", getSize(), " input and output tensors, got ", inputs.size(), " and ",
              outputs.size());
  std::vector<at::Tensor> ins;
  std::vector<Staged> outs;
  for (int r = 0; r < getSize(); ++r) {
    checkCpuDense(inputs[r], "alltoall");
    checkCpuDense(outputs[r], "alltoall");
    TORCH_CHECK(outputs[r].scalar_type() == inputs[r].scalar_type(), "weft: alltoall: output ", r, " is ",
                outputs[r].scalar_type(), ", input ", r, " is ", inputs[r].scalar_type());
    ins.push_back(readable(inputs[r]));
    outs.emplace_back(outputs[r]);
  }
  const size_t me = static_cast<size_t>(getRank());
  TORCH_CHECK(ins[me].numel() == outs[me].buffer().numel(), "weft: alltoall: this rank sends itself ", ins[me].numel(),
              " elements but expects ", outs[me].buffer().numel());
  return submit(
      c10d::OpType::ALLTOALL, "alltoall", outputs,
      [ins, outs, me](weft_comm_t* comm) {
        std::memcpy(outs[me].data(), ins[me].data_ptr(), byteCount(ins[me]));
        for (size_t r = 0; r < ins.size(); ++r) {
          if (r == me) continue;
          const int peer = static_cast<int>(r);
          weft_result_t rc = weft_send(ins[r].data_ptr(), byteCount(ins[r]), weftUint8, peer, comm, nullptr);
          if (rc == weftSuccess) rc = weft_recv(outs[r].data(), outs[r].bytes(), weftUint8, peer, comm, nullptr);
          if (rc != weftSuccess) return rc;
        }
        return weftSuccess;
      },
      writeBackOnSuccess(outs),
      timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                                        std::vector<at::Tensor>& inputs,
                                                        const c10d::GatherOptions& opts) {
  const at::Tensor& input = onlyTensor(inputs, "gather");
  checkRoot(opts.rootRank, "gather");
  const int root = static_cast<int>(opts.rootRank);
  at::Tensor in = readable(input);
  std::vector<Staged> outs;
  std::vector<at::Tensor> results;
  if (getRank() == root) {
    TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == getSize(), "weft: gather: the root ",
                "expects one list of ", getSize(), " output tensors");
    checkSameShapeAs(outputs[0], input, "gather");
    for (const at::Tensor& t : outputs[0]) outs.emplace_back(t);
    results = outputs[0];
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()), "weft: gather: only the root ",
                "(rank ", root, ") takes output tensors");
  }
  const int me = getRank();
  return submit(
      c10d::OpType::GATHER, "gather", results,
      [in, outs, root, me](weft_comm_t* comm) {
        if (me != root) return weft_send(in.data_ptr(), byteCount(in), weftUint8, root, comm, nullptr);
        for (size_t r = 0; r < outs.size(); ++r) {
          if (static_cast<int>(r) == me) {
            std::memcpy(outs[r].data(), in.data_ptr(), byteCount(in));
            continue;
          }
          weft_result_t rc = weft_recv(outs[r].data(), outs[r].bytes(), weftUint8, static_cast<int>(r), comm, nullptr);
          if (rc != weftSuccess) return rc;
        }
        return weftSuccess;
      },
      writeBackOnSuccess(outs),
      timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::scatter(std::vector<at::Tensor>& outputs,
                                                         std::vector<std::vector<at::Tensor>>& inputs,
                                                         const c10d::ScatterOptions& opts) {
  const at::Tensor& output = onlyTensor(outputs, "scatter");
  checkRoot(opts.rootRank, "scatter");
  const int root = static_cast<int>(opts.rootRank);
  const int me = getRank();
  std::vector<at::Tensor> ins;
  if (me == root) {
    TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == getSize(), "weft: scatter: the root ",
                "expects one list of ", getSize(), " input tensors");
    checkSameShapeAs(inputs[0], output, "scatter");
    for (const at::Tensor& t : inputs[0]) ins.push_back(readable(t));
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()), "weft: scatter: only the root ",
                "(rank ", root, ") takes input tensors");
  }
  Staged out(output);
  return submit(
      c10d::OpType::SCATTER, "scatter", {output},
      [ins, out, root, me](weft_comm_t* comm) {
        if (me != root) return weft_recv(out.data(), out.bytes(), weftUint8, root, comm, nullptr);
        for (size_t r = 0; r < ins.size(); ++r) {
          if (static_cast<int>(r) == me) {
            std::memcpy(out.data(), ins[r].data_ptr(), byteCount(ins[r]));
            continue;
          }
          weft_result_t rc = weft_send(ins[r].data_ptr(), byteCount(ins[r]), weftUint8, static_cast<int>(r), comm, nullptr);
          if (rc != weftSuccess) return rc;
        }
        return weftSuccess;
      },
      writeBackOnSuccess({out}), timeoutOr(opts.timeout));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::barrier(const c10d::BarrierOptions& opts) {
  // weft has no barrier, as NCCL has none: a one-byte allreduce, after everything before it.
  at::Tensor flag = at::zeros({1}, at::TensorOptions().dtype(at::kByte));
  return submit(
      c10d::OpType::BARRIER, "barrier", {},
      [flag](weft_comm_t* comm) { return weft_allreduce(flag.data_ptr(), flag.data_ptr(), 1, weftUint8, weftSum, comm, nullptr); },
      nullptr, timeoutOr(opts.timeout));
}

// ---- Point to point ---------------------------------------------------------------------------

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::send(std::vector<at::Tensor>& tensors, int dstRank, int /* tag */) {
  // weft matches messages between two ranks in the order they were posted, as NCCL does: tags
  // are not needed for that and are not used.
  const at::Tensor& t = onlyTensor(tensors, "send");
  checkPeer(dstRank, "send");
  at::Tensor in = readable(t);
  return submit(
      c10d::OpType::SEND, "send to rank " + std::to_string(dstRank), {t},
      [in, dstRank](weft_comm_t* comm) { return weft_send(in.data_ptr(), byteCount(in), weftUint8, dstRank, comm, nullptr); },
      nullptr, timeout_, /*pointToPoint=*/true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recv(std::vector<at::Tensor>& tensors, int srcRank, int /* tag */) {
  const at::Tensor& t = onlyTensor(tensors, "recv");
  checkPeer(srcRank, "recv");
  Staged out(t);
  return submit(
      c10d::OpType::RECV, "receive from rank " + std::to_string(srcRank), {t},
      [out, srcRank](weft_comm_t* comm) { return weft_recv(out.data(), out.bytes(), weftUint8, srcRank, comm, nullptr); },
      writeBackOnSuccess({out}), timeout_, /*pointToPoint=*/true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::recvAnysource(std::vector<at::Tensor>& /* tensors */, int /* tag */) {
  TORCH_CHECK(false, "weft: recv without a source rank is not supported: weft matches each receive with its sender, "
              "as NCCL does (pass src=)");
}

#if WEFT_TORCH_BACKEND_API
c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::inOneBatch(size_t count,
                                                            const std::function<c10::intrusive_ptr<c10d::Work>(size_t)>& op) {
  // Inside the caller's open batch, the last operation's Work completes with that batch.
  bool wasCoalescing;
  {
    std::lock_guard<std::mutex> lock(submitMutex_);
    wasCoalescing = coalescing_;
  }
  if (!wasCoalescing) startCoalescing();
  c10::intrusive_ptr<c10d::Work> last;
  for (size_t i = 0; i < count; ++i) last = op(i);
  if (!wasCoalescing) return endCoalescing();
  return last ? last : barrier(c10d::BarrierOptions());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                 std::vector<at::Tensor>& inputs,
                                                                                 const c10d::AllgatherOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "weft: allgather_into_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  return inOneBatch(inputs.size(), [&](size_t i) { return _allgather_base(outputs[i], inputs[i], opts); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupWeft::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
  TORCH_CHECK(outputs.size() == inputs.size(), "weft: reduce_scatter_tensor_coalesced: ", outputs.size(),
              " outputs for ", inputs.size(), " inputs");
  return inOneBatch(inputs.size(), [&](size_t i) { return _reduce_scatter_base(outputs[i], inputs[i], opts); });
}
#endif

}  // namespace weft_torch
