// ProcessGroupWeft: PyTorch's c10d backend "weft", over weft's C API. Each process group owns
// one weft communicator (its unique id travels through the c10d store PyTorch hands it), and a
// CommRunner whose worker thread runs the group's operations in call order; every operation
// returns a WeftWork at once.
//
// PyTorch 1.x backends subclass c10d::ProcessGroup; 2.x ones subclass c10d::Backend, which a
// ProcessGroup holds per device. The operations have the same signatures in both.
#pragma once

#include <torch/version.h>

#define WEFT_TORCH_BACKEND_API (TORCH_VERSION_MAJOR >= 2)

#if WEFT_TORCH_BACKEND_API
#include <torch/csrc/distributed/c10d/Backend.hpp>
#else
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#endif
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "comm_runner.h"
#include "tensors.h"
#include "work.h"

namespace weft_torch {

#if WEFT_TORCH_BACKEND_API
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

class ProcessGroupWeft : public BackendBase {
 public:
  // Rank `rank` of `size`: rank 0 makes the weft unique id and puts it in `store`, the others
  // read it there; then every rank joins the communicator. `timeout` bounds the joining and,
  // unless an operation's options say otherwise, every operation.
  ProcessGroupWeft(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   std::chrono::milliseconds timeout);
  ~ProcessGroupWeft() override;

  const std::string getBackendName() const override { return "weft"; }

  // Runs what was submitted and frees the communicator; later operations fail.
  void shutdown();
  // shutdown() of every live process group (at interpreter exit).
  static void shutdownAll();

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts = c10d::BroadcastOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts = c10d::AllreduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors,
      const c10d::AllreduceCoalescedOptions& opts = c10d::AllreduceCoalescedOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts = c10d::ReduceOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts = c10d::GatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts = c10d::ScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(
      std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts = c10d::AllToAllOptions()) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank, int tag) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts = c10d::BarrierOptions()) override;

  // Operations between start and end run together, in one weft group (batch_isend_irecv).
  void startCoalescing() override;
#if WEFT_TORCH_BACKEND_API
  c10::intrusive_ptr<c10d::Work> endCoalescing() override;
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts = c10d::AllgatherOptions()) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts = c10d::ReduceScatterOptions()) override;
#else
  void endCoalescing(std::vector<c10::intrusive_ptr<c10d::Work>>& reqs) override;
#endif

 private:
  using Issue = std::function<weft_result_t(weft_comm_t*)>;
  // Runs after the group ended: comm null when it was aborted, ok whether the operation worked.
  using Finish = std::function<void(weft_comm_t* comm, bool ok)>;

  // Hands one operation to the runner (or to the open coalescing batch) and returns its Work.
  c10::intrusive_ptr<c10d::Work> submit(c10d::OpType type, std::string name, std::vector<at::Tensor> outputs,
                                        Issue issue, Finish finish, std::chrono::milliseconds timeout,
                                        bool pointToPoint = false);
  // A reduction collective writing `output`: binds the reduction's op (a PreMulSum op is made
  // for the call), runs `call`, frees the op, and writes the result back if `writesOutput`.
  using ReduceCall = std::function<weft_result_t(weft_comm_t*, const Staged& output, const Reduction&, weft_redop_t)>;
  c10::intrusive_ptr<c10d::Work> submitReduction(c10d::OpType type, const char* name, const c10d::ReduceOp& reduceOp,
                                                 const at::Tensor& output, ReduceCall call, bool writesOutput,
                                                 std::chrono::milliseconds timeout);
  // Ends coalescing and hands over the operations gathered since it started.
  std::vector<Op> takeCoalesced();
  std::chrono::milliseconds timeoutOr(std::chrono::milliseconds given) const;
#if WEFT_TORCH_BACKEND_API
  // Runs op(0) ... op(count - 1) in one weft group and returns a Work for all of them.
  c10::intrusive_ptr<c10d::Work> inOneBatch(size_t count,
                                            const std::function<c10::intrusive_ptr<c10d::Work>(size_t)>& op);
#endif
  void checkRoot(int64_t root, const char* what) const;
  void checkPeer(int peer, const char* what) const;

  std::chrono::milliseconds timeout_;
  std::shared_ptr<CommRunner> runner_;
  // Coalescing: the operations gathered since startCoalescing. The mutex makes submitting from
  // several threads safe (each operation still goes to the runner whole, in some order).
  std::mutex submitMutex_;
  bool coalescing_ = false;
  std::vector<Op> coalesced_;
};

}  // namespace weft_torch
