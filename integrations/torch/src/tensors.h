// What weft's PyTorch backend accepts from PyTorch: CPU tensors, their dtypes in weft's terms,
// PyTorch's ReduceOps as weft reductions, and the staging of tensors weft cannot use in place.
// Every refusal is a c10::Error (RuntimeError in Python) that names the operation and the reason.
#pragma once

#include <ATen/ATen.h>

#include <torch/csrc/distributed/c10d/Types.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "weft/weft.h"

namespace weft_torch {

// `t` may be handed to weft: on the CPU, strided (not sparse). `what` names the operation.
void checkCpuDense(const at::Tensor& t, const char* what);
// The one tensor of a per-device tensor list (weft drives one device per process).
const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const char* what);
// The tensors of `list` all have `like`'s dtype and number of elements.
void checkSameShapeAs(const std::vector<at::Tensor>& list, const at::Tensor& like, const char* what);

inline size_t byteCount(const at::Tensor& t) { return static_cast<size_t>(t.numel()) * t.element_size(); }

// An input as weft reads it: contiguous, conjugation and negation applied (a copy if needed).
at::Tensor readable(const at::Tensor& t);

// A tensor weft writes (or reads and writes): the user's tensor itself when weft can use its
// memory as is, else a contiguous copy that writeBack() copies into the user's tensor once the
// operation is done.
class Staged {
 public:
  Staged() = default;
  explicit Staged(at::Tensor user);
  void* data() const { return buffer_.data_ptr(); }
  size_t bytes() const { return byteCount(buffer_); }
  const at::Tensor& buffer() const { return buffer_; }
  void writeBack() const;

 private:
  at::Tensor user_;
  at::Tensor buffer_;
};

// A PyTorch reduction over tensors of one dtype, in weft's terms.
struct Reduction {
  weft_datatype_t type = weftFloat32;
  weft_redop_t op = weftSum;
  size_t elementsPerItem = 1;  // 2 for complex numbers, reduced as pairs of reals
  bool preMulSum = false;      // op is made per call by weft_redop_create_pre_mul_sum
  at::Tensor factor;           // PREMUL_SUM's scalar, in `type`

  size_t count(const at::Tensor& t) const { return static_cast<size_t>(t.numel()) * elementsPerItem; }
};

// How weft reduces `op` over tensors of `dtype`, or a c10::Error that says why it cannot:
// BAND/BOR/BXOR, AVG and PREMUL_SUM of bool, PRODUCT/MIN/MAX of complex numbers, and dtypes
// without a weft datatype (int16, ...).
Reduction reductionFor(const c10d::ReduceOp& op, at::ScalarType dtype, const char* what);

// A reduction's weft op on one communicator: the built-in op, or a PreMulSum op made for one
// call (on the worker thread, inside the call's group) and freed once that group has ended.
class BoundOp {
 public:
  explicit BoundOp(Reduction r) : r_(std::move(r)), op_(r_.op) {}
  weft_result_t bind(weft_comm_t* comm);
  void release(weft_comm_t* comm);  // comm null: it was aborted, and its ops with it
  weft_redop_t op() const { return op_; }
  const Reduction& reduction() const { return r_; }

 private:
  Reduction r_;
  weft_redop_t op_;
  bool made_ = false;
};

}  // namespace weft_torch
