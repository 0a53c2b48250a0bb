#include "plugins/net-ib/endpoint.h"

#include <cerrno>
#include <cstring>
#include <random>

#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {

// An IB timer value for "how long the receiver waits before it may NAK for lack of a posted
// receive": 12 is 0.64 ms, what NCCL uses. Every write this plugin sends has a posted receive
// waiting (posted before the FIFO entry that allows the write), so it rarely matters.
constexpr uint8_t kMinRnrTimer = 12;
// rnr_retry 7 means "retry forever" on receiver-not-ready, which the protocol never causes for
// long (see above); retry_cnt (transport errors) is NCCL_IB_RETRY_CNT.
constexpr uint8_t kRnrRetryForever = 7;

uint32_t randomPsn() {
  static thread_local std::mt19937 gen{std::random_device{}()};
  return gen() & 0xffffff;
}

}  // namespace

weft_result_t Endpoint::open(const Device& device, std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> e(new Endpoint(device));
  ibv_context* ctx = device.hca->context.get();
  e->cq_.reset(ibv_create_cq(ctx, kMaxSendWr + kMaxRecvWr, nullptr, nullptr, 0));
  if (!e->cq_) return IB_VERBS_FAIL(weftSystemError, errno, "ibv_create_cq", "%s, %d entries", device.name.c_str(), kMaxSendWr + kMaxRecvWr);
  ibv_qp_init_attr init{};
  init.send_cq = e->cq_.get();
  init.recv_cq = e->cq_.get();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = kMaxSendWr;
  init.cap.max_recv_wr = kMaxRecvWr;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  e->qp_.reset(ibv_create_qp(device.hca->pd.get(), &init));
  if (!e->qp_) return IB_VERBS_FAIL(weftSystemError, errno, "ibv_create_qp", "%s, RC", device.name.c_str());
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = device.port;
  attr.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
  if (int rc = ibv_modify_qp(e->qp_.get(), &attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS)) {
    return IB_VERBS_FAIL(weftSystemError, rc, "ibv_modify_qp", "%s, QP %u to INIT", device.name.c_str(), e->qp_->qp_num);
  }
  e->psn_ = randomPsn();
  *out = std::move(e);
  return weftSuccess;
}

QpInfo Endpoint::describe(uint64_t token) const {
  QpInfo q;
  q.token = token;
  q.qpn = qp_->qp_num;
  q.psn = psn_;
  q.lid = device_.lid;
  q.linkLayer = device_.linkLayer;
  q.mtu = static_cast<uint8_t>(device_.mtu);
  q.ibPort = device_.port;
  q.gidIndex = device_.gidIndex;
  q.gid = device_.gid;
  return q;
}

weft_result_t Endpoint::connectTo(const QpInfo& peer, const Config& config) {
  const char* name = device_.name.c_str();
  if (peer.linkLayer != device_.linkLayer) {
    return IB_FAIL(weftRemoteError, "NET/IB: %s: the peer's port is %s, this one %s", name,
                   peer.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand",
                   device_.linkLayer == IBV_LINK_LAYER_ETHERNET ? "RoCE" : "InfiniBand");
  }
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = static_cast<ibv_mtu>(std::min<int>(peer.mtu, device_.mtu));
  attr.dest_qp_num = peer.qpn;
  attr.rq_psn = peer.psn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = kMinRnrTimer;
  attr.ah_attr.port_num = device_.port;
  attr.ah_attr.sl = 0;
  // RoCE (and IB peers without a LID) route by GID: a global route header.
  if (device_.linkLayer == IBV_LINK_LAYER_ETHERNET || peer.lid == 0) {
    attr.ah_attr.is_global = 1;
    std::memcpy(attr.ah_attr.grh.dgid.raw, peer.gid.data(), peer.gid.size());
    attr.ah_attr.grh.sgid_index = device_.gidIndex;
    attr.ah_attr.grh.hop_limit = 255;
  } else {
    attr.ah_attr.dlid = peer.lid;
  }
  int mask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
  if (int rc = ibv_modify_qp(qp_.get(), &attr, mask)) {
    return IB_VERBS_FAIL(weftSystemError, rc, "ibv_modify_qp", "%s, QP %u to RTR towards QP %u", name, qp_->qp_num, peer.qpn);
  }
  attr = ibv_qp_attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = static_cast<uint8_t>(config.timeout);
  attr.retry_cnt = static_cast<uint8_t>(config.retryCount);
  attr.rnr_retry = kRnrRetryForever;
  attr.sq_psn = psn_;
  attr.max_rd_atomic = 1;
  mask = IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC;
  if (int rc = ibv_modify_qp(qp_.get(), &attr, mask)) {
    return IB_VERBS_FAIL(weftSystemError, rc, "ibv_modify_qp", "%s, QP %u to RTS (timeout %d, retry_cnt %d)", name,
                         qp_->qp_num, config.timeout, config.retryCount);
  }
  return weftSuccess;
}

}  // namespace weft::ib
