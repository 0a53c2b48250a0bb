#include "core/device/plan.h"

namespace weft::device {

static_assert(kDevSend == static_cast<int>(coll::Prim::kSend) && kDevCopySend == static_cast<int>(coll::Prim::kCopySend) &&
                  kDevRecv == static_cast<int>(coll::Prim::kRecv) &&
                  kDevRecvReduceSend == static_cast<int>(coll::Prim::kRecvReduceSend) &&
                  kDevRecvReduceCopySend == static_cast<int>(coll::Prim::kRecvReduceCopySend) &&
                  kDevRecvCopySend == static_cast<int>(coll::Prim::kRecvCopySend) &&
                  kDevRecvReduceCopy == static_cast<int>(coll::Prim::kRecvReduceCopy),
              "DevPrim numbers the primitives as coll::Prim");

bool devSteps(const std::vector<coll::Step>& steps, std::vector<DevStep>* out) {
  out->clear();
  out->reserve(steps.size());
  for (const coll::Step& s : steps) {
    if (s.peer >= 0) {
      out->clear();
      return false;
    }
    DevStep d{};
    d.in = s.in;
    d.out = s.out;
    d.count = s.count;
    d.prim = static_cast<uint8_t>(s.prim);
    d.flags = static_cast<uint8_t>((s.fromOutput ? kStepFromOutput : 0) | (s.remoteFirst ? kStepRemoteFirst : 0) |
                                   (s.partial ? kStepPartial : 0));
    out->push_back(d);
  }
  return true;
}

DevRed devRed(const coll::RedOp& op) {
  switch (op.kind) {
    case coll::RedKind::kSum: return kDevSum;
    case coll::RedKind::kProd: return kDevProd;
    case coll::RedKind::kMinMax: return (op.arg & 1) != 0 ? kDevMax : kDevMin;
    case coll::RedKind::kPreMulSum: return kDevPreMulSum;
    case coll::RedKind::kSumPostDiv: return kDevSumPostDiv;
  }
  return kDevSum;
}

}  // namespace weft::device
