// The Work object of weft's PyTorch backend: what an operation returns to PyTorch. It completes
// on the backend's worker thread, with the operation's outputs or its error; wait() rethrows
// that error, and getFuture() gives the c10::ivalue::Future DDP's reducer and communication
// hooks chain on.
#pragma once

#include <ATen/core/ivalue.h>

#include <torch/csrc/distributed/c10d/Work.hpp>

#include <memory>
#include <string>
#include <vector>

namespace weft_torch {

class CommRunner;

class WeftWork : public c10d::Work {
 public:
  // `held` is the runner that may hold this operation back (point-to-point): waiting on it, or
  // asking for its state or future, releases it. Empty for every other operation.
  WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<CommRunner> held = {});

  bool isCompleted() override;
  bool wait(std::chrono::milliseconds timeout = kNoTimeout) override;
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  std::vector<at::Tensor> result() override { return outputs_; }

  // Completes the work and its future (worker thread): error null on success.
  void markDone(const std::string* error);

 private:
  void release();

  std::vector<at::Tensor> outputs_;
  std::weak_ptr<CommRunner> held_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace weft_torch
