// One side of an RC connection: its completion queue and queue pair on one device port, and the
// transitions INIT → RTR → RTS with the peer's description. NCCL_IB_TIMEOUT and
// NCCL_IB_RETRY_CNT go into the RTS attributes.
#pragma once

#include <memory>

#include "plugins/net-ib/config.h"
#include "plugins/net-ib/devices.h"
#include "plugins/net-ib/requests.h"
#include "plugins/net-ib/verbs.h"
#include "plugins/net-ib/wire.h"
#include "weft/weft.h"

namespace weft::ib {

// Work requests a comm may have outstanding: one send (or FIFO write) per request slot each
// way, and one posted receive per buffer of every receive slot.
inline constexpr int kMaxSendWr = 2 * kMaxRequests;
inline constexpr int kMaxRecvWr = kMaxRequests * kMaxRecvs;

class Endpoint {
 public:
  // Creates the CQ and the QP (moved to INIT) on `device`.
  static weft_result_t open(const Device& device, std::unique_ptr<Endpoint>* out);
  // This side's description, for the peer (no FIFO fields).
  QpInfo describe(uint64_t token) const;
  // INIT → RTR → RTS towards `peer`.
  weft_result_t connectTo(const QpInfo& peer, const Config& config);

  ibv_qp* qp() const { return qp_.get(); }
  ibv_cq* cq() const { return cq_.get(); }
  ibv_pd* pd() const { return hca_->pd.get(); }
  const Device& device() const { return device_; }

 private:
  explicit Endpoint(const Device& d) : device_(d), hca_(d.hca) {}
  Device device_;
  std::shared_ptr<Hca> hca_;  // first: the CQ and QP go before the device's PD and context
  CqPtr cq_;
  QpPtr qp_;
  uint32_t psn_ = 0;
};

}  // namespace weft::ib
