#include "tensors.h"

#include <c10/util/Exception.h>
#include <torch/version.h>

#include <optional>

namespace weft_torch {
namespace {

// The weft datatype of a real dtype, if weft has one. Complex dtypes are reduced as their real
// parts' type (see reductionFor).
std::optional<weft_datatype_t> weftType(at::ScalarType t) {
  switch (t) {
    case at::kFloat: return weftFloat32;
    case at::kDouble: return weftFloat64;
    case at::kHalf: return weftFloat16;
    case at::kBFloat16: return weftBfloat16;
    case at::kChar: return weftInt8;
    case at::kByte: return weftUint8;
    case at::kInt: return weftInt32;
    case at::kLong: return weftInt64;
    case at::kBool: return weftUint8;  // 0 or 1 in one byte
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
    // NCCL's (and weft's) e4m3 is the "fn" variant: no infinities, one NaN pattern.
    case at::kFloat8_e4m3fn: return weftFloat8e4m3;
    case at::kFloat8_e5m2: return weftFloat8e5m2;
#endif
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 3)
    case at::kUInt32: return weftUint32;
    case at::kUInt64: return weftUint64;
#endif
    default: return std::nullopt;
  }
}

const char* opName(c10d::ReduceOp::RedOpType op) {
  switch (op) {
    case c10d::ReduceOp::SUM: return "SUM";
    case c10d::ReduceOp::AVG: return "AVG";
    case c10d::ReduceOp::PRODUCT: return "PRODUCT";
    case c10d::ReduceOp::MIN: return "MIN";
    case c10d::ReduceOp::MAX: return "MAX";
    case c10d::ReduceOp::BAND: return "BAND";
    case c10d::ReduceOp::BOR: return "BOR";
    case c10d::ReduceOp::BXOR: return "BXOR";
    case c10d::ReduceOp::PREMUL_SUM: return "PREMUL_SUM";
    default: return "UNUSED";
  }
}

// PREMUL_SUM's factor, from the supplement torch.distributed._make_nccl_premul_sum attaches.
at::Tensor preMulFactor(const c10d::ReduceOp& op, at::ScalarType realType, const char* what) {
  auto* s = dynamic_cast<c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(s != nullptr, "weft: ", what, ": ReduceOp.PREMUL_SUM carries no factor (make it with "
              "torch.distributed._make_nccl_premul_sum)");
  if (s->tensor_factors.empty()) return at::scalar_tensor(s->double_factor, at::TensorOptions().dtype(realType));
  const at::Tensor& f = s->tensor_factors.front();
  TORCH_CHECK(f.numel() == 1, "weft: ", what, ": the PREMUL_SUM factor must hold one element, it holds ", f.numel());
  TORCH_CHECK(!f.is_complex(), "weft: ", what, ": a complex PREMUL_SUM factor is not supported by weft");
  return f.detach().to(at::kCPU, realType).reshape({});
}

}  // namespace

void checkCpuDense(const at::Tensor& t, const char* what) {
  TORCH_CHECK(t.defined(), "weft: ", what, ": a tensor is undefined");
  TORCH_CHECK(t.device().is_cpu(), "weft: ", what, ": the tensor is on ", t.device().str(),
              "; weft's PyTorch backend takes CPU tensors in this version");
  TORCH_CHECK(t.layout() == at::kStrided, "weft: ", what, ": ", t.layout(),
              " tensors are not supported by weft (dense, strided tensors only)");
}

const at::Tensor& onlyTensor(const std::vector<at::Tensor>& tensors, const char* what) {
  TORCH_CHECK(tensors.size() == 1, "weft: ", what, " takes one tensor per call (one device per process); got ",
              tensors.size());
  checkCpuDense(tensors.front(), what);
  return tensors.front();
}

void checkSameShapeAs(const std::vector<at::Tensor>& list, const at::Tensor& like, const char* what) {
  for (size_t i = 0; i < list.size(); ++i) {
    checkCpuDense(list[i], what);
    TORCH_CHECK(list[i].scalar_type() == like.scalar_type(), "weft: ", what, ": tensor ", i, " is ",
                list[i].scalar_type(), ", expected ", like.scalar_type(), " as the input");
    TORCH_CHECK(list[i].numel() == like.numel(), "weft: ", what, ": tensor ", i, " has ", list[i].numel(),
                " elements, expected ", like.numel(), " as the input");
  }
}

at::Tensor readable(const at::Tensor& t) { return t.resolve_conj().resolve_neg().contiguous(); }

Staged::Staged(at::Tensor user) : user_(std::move(user)) {
  // A conjugate or negative view is contiguous but its memory does not hold the values.
  const bool usable = user_.is_contiguous() && !user_.is_conj() && !user_.is_neg();
  buffer_ = usable ? user_ : readable(user_);
}

void Staged::writeBack() const {
  if (!buffer_.is_same(user_)) user_.copy_(buffer_);
}

Reduction reductionFor(const c10d::ReduceOp& op, at::ScalarType dtype, const char* what) {
  const c10d::ReduceOp::RedOpType kind = op.op_;
  TORCH_CHECK(kind != c10d::ReduceOp::BAND && kind != c10d::ReduceOp::BOR && kind != c10d::ReduceOp::BXOR,
              "weft: ", what, ": ReduceOp.", opName(kind),
              " is not supported by weft (SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM are)");
  Reduction r;
  at::ScalarType real = dtype;
  if (at::isComplexType(dtype)) {
    // (a+bi) + (c+di) is a sum of the parts: SUM, AVG and a real PREMUL_SUM factor apply part by part.
    TORCH_CHECK(kind == c10d::ReduceOp::SUM || kind == c10d::ReduceOp::AVG || kind == c10d::ReduceOp::PREMUL_SUM,
                "weft: ", what, ": ReduceOp.", opName(kind), " of ", dtype,
                " is not supported by weft (complex numbers take SUM, AVG and PREMUL_SUM)");
    real = c10::toRealValueType(dtype);
    r.elementsPerItem = 2;
  }
  std::optional<weft_datatype_t> type = weftType(real);
  TORCH_CHECK(type.has_value(), "weft: ", what, ": ", dtype,
              " has no weft datatype to reduce (weft reduces float32/64, float16, bfloat16, int8, uint8, "
              "int32, int64, bool, complex64/128, and fp8 where PyTorch has it)");
  r.type = *type;
  switch (kind) {
    case c10d::ReduceOp::SUM: r.op = weftSum; break;
    case c10d::ReduceOp::PRODUCT: r.op = weftProd; break;
    case c10d::ReduceOp::MIN: r.op = weftMin; break;
    case c10d::ReduceOp::MAX: r.op = weftMax; break;
    case c10d::ReduceOp::AVG: r.op = weftAvg; break;
    case c10d::ReduceOp::PREMUL_SUM:
      r.preMulSum = true;
      r.factor = preMulFactor(op, real, what);
      break;
    default: TORCH_CHECK(false, "weft: ", what, ": ReduceOp ", static_cast<int>(kind), " is unknown to weft");
  }
  if (dtype == at::kBool) {
    // A bool is 0 or 1: "any" is MAX and "all" is MIN; a sum or product would leave other values.
    TORCH_CHECK(!r.preMulSum && r.op != weftAvg, "weft: ", what, ": ReduceOp.", opName(kind),
                " of bool is not supported by weft");
    if (r.op == weftSum) r.op = weftMax;
    if (r.op == weftProd) r.op = weftMin;
  }
  return r;
}

weft_result_t BoundOp::bind(weft_comm_t* comm) {
  if (!r_.preMulSum) return weftSuccess;
  weft_result_t rc = weft_redop_create_pre_mul_sum(&op_, r_.factor.data_ptr(), r_.type, weftScalarHostImmediate, comm);
  made_ = rc == weftSuccess;
  return rc;
}

void BoundOp::release(weft_comm_t* comm) {
  if (made_ && comm != nullptr) (void)weft_redop_destroy(op_, comm);
  made_ = false;
}

}  // namespace weft_torch
