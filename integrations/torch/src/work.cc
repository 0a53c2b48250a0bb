#include "work.h"

#include <exception>
#include <stdexcept>

#include "comm_runner.h"

namespace weft_torch {

WeftWork::WeftWork(int rank, c10d::OpType type, std::vector<at::Tensor> outputs, std::weak_ptr<CommRunner> held)
    : c10d::Work(rank, type),
      outputs_(std::move(outputs)),
      held_(std::move(held)),
      future_(c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {}

void WeftWork::release() {
  if (std::shared_ptr<CommRunner> runner = held_.lock()) runner->flush();
}

bool WeftWork::isCompleted() {
  release();
  return c10d::Work::isCompleted();
}

bool WeftWork::wait(std::chrono::milliseconds timeout) {
  release();
  return c10d::Work::wait(timeout);
}

c10::intrusive_ptr<c10::ivalue::Future> WeftWork::getFuture() {
  release();
  return future_;
}

void WeftWork::markDone(const std::string* error) {
  if (error == nullptr) {
    finish();
    future_->markCompleted(c10::IValue(outputs_));
    return;
  }
  std::exception_ptr e = std::make_exception_ptr(std::runtime_error(*error));
  finish(e);
  future_->setError(e);
}

}  // namespace weft_torch
