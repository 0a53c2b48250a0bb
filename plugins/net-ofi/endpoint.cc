#include "plugins/net-ofi/endpoint.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstring>

#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {
// Completions read per fi_cq_read: enough to drain a burst of small messages in one call.
constexpr size_t kCompletionBatch = 16;
}  // namespace

weft_result_t Domain::open(const fi_info* info, std::shared_ptr<Domain>* out) {
  auto d = std::shared_ptr<Domain>(new Domain());
  d->info_.reset(fi_dupinfo(info));
  if (!d->info_) return OFI_FAIL(weftSystemError, "NET/OFI: fi_dupinfo: out of memory");
  const char* name = info->domain_attr->name;
  fid_fabric* fabric = nullptr;
  if (int rc = fi_fabric(d->info_->fabric_attr, &fabric, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_fabric", "%s", info->fabric_attr->name);
  }
  d->fabric_.reset(fabric);
  fid_domain* domain = nullptr;
  if (int rc = fi_domain(fabric, d->info_.get(), &domain, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_domain", "%s", name);
  }
  d->domain_.reset(domain);
  *out = std::move(d);
  return weftSuccess;
}

Endpoint::~Endpoint() = default;

weft_result_t Endpoint::open(std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint>* out) {
  std::unique_ptr<Endpoint> e(new Endpoint(std::move(domain)));
  const fi_info* info = e->domain_->info();
  const char* dom = info->domain_attr->name;
  fi_cq_attr cqAttr{};
  cqAttr.format = FI_CQ_FORMAT_TAGGED;
  cqAttr.wait_obj = FI_WAIT_NONE;  // polled by test(), like NCCL's proxy thread polls
  fid_cq* cq = nullptr;
  if (int rc = fi_cq_open(e->domain_->get(), &cqAttr, &cq, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_cq_open", "%s", dom);
  }
  e->cq_.reset(cq);
  fi_av_attr avAttr{};
  avAttr.type = info->domain_attr->av_type;  // FI_AV_UNSPEC lets the provider choose
  avAttr.count = 4;                           // the peer and the listener: a hint, not a limit
  fid_av* av = nullptr;
  if (int rc = fi_av_open(e->domain_->get(), &avAttr, &av, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_av_open", "%s", dom);
  }
  e->av_.reset(av);
  fid_ep* ep = nullptr;
  if (int rc = fi_endpoint(e->domain_->get(), const_cast<fi_info*>(info), &ep, nullptr); rc != 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_endpoint", "%s", dom);
  }
  e->ep_.reset(ep);
  int rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV);
  if (rc == 0) rc = fi_ep_bind(ep, &av->fid, 0);
  if (rc != 0) return OFI_FI_FAIL(weftSystemError, rc, "fi_ep_bind", "%s", dom);
  if (rc = fi_enable(ep); rc != 0) return OFI_FI_FAIL(weftSystemError, rc, "fi_enable", "%s", dom);
  size_t len = 0;
  (void)fi_getname(&ep->fid, nullptr, &len);  // -FI_ETOOSMALL, with the size needed
  e->name_.resize(len);
  if (rc = fi_getname(&ep->fid, e->name_.data(), &len); rc != 0 || len == 0) {
    return OFI_FI_FAIL(weftSystemError, rc, "fi_getname", "%s", dom);
  }
  e->name_.resize(len);
  *out = std::move(e);
  return weftSuccess;
}

weft_result_t Endpoint::insert(const uint8_t* addr, size_t len, fi_addr_t* out) {
  // The provider knows its addresses' length from its address format; len is for messages.
  int n = fi_av_insert(av_.get(), addr, 1, out, 0, nullptr);
  if (n != 1) return OFI_FI_FAIL(weftSystemError, n < 0 ? n : -FI_EINVAL, "fi_av_insert", "%zu-byte address", len);
  return weftSuccess;
}

std::string Endpoint::describe(fi_addr_t addr) const {
  char text[128] = "?";
  size_t len = sizeof(text);
  std::vector<uint8_t> raw(256);
  size_t rawLen = raw.size();
  if (fi_av_lookup(av_.get(), addr, raw.data(), &rawLen) == 0 && rawLen <= raw.size()) {
    fi_av_straddr(av_.get(), raw.data(), text, &len);
  }
  return text;
}

ssize_t Endpoint::send(const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag, Op* op) {
  return fi_tsend(ep_.get(), buf, len, desc, dest, tag, &op->ctx);
}

ssize_t Endpoint::recv(void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag, Op* op) {
  return fi_trecv(ep_.get(), buf, len, desc, src, tag, 0, &op->ctx);
}

weft_result_t Endpoint::progress() {
  fi_cq_tagged_entry entries[kCompletionBatch];
  for (;;) {
    ssize_t n = fi_cq_read(cq_.get(), entries, kCompletionBatch);
    if (n == -FI_EAGAIN) return weftSuccess;
    if (n == -FI_EAVAIL) {
      failedCompletion();
      continue;
    }
    if (n < 0) return OFI_FI_FAIL(weftSystemError, static_cast<int>(n), "fi_cq_read", "%s", domain_->info()->domain_attr->name);
    for (ssize_t i = 0; i < n; ++i) {
      auto* op = static_cast<Op*>(entries[i].op_context);
      if (op != nullptr && op->owner != nullptr) op->owner->opDone(op->slot, entries[i].len);
    }
    if (static_cast<size_t>(n) < kCompletionBatch) return weftSuccess;
  }
}

void Endpoint::failedCompletion() {
  fi_cq_err_entry err{};
  if (fi_cq_readerr(cq_.get(), &err, 0) != 1) return;
  char providerText[256] = "";
  const char* said = fi_cq_strerror(cq_.get(), err.prov_errno, err.err_data, providerText, sizeof(providerText));
  std::string text = std::string("fi_cq_readerr: ") + fiErrorText(err.err);
  if (said != nullptr && *said != '\0') text += std::string(", provider: ") + said;
  auto* op = static_cast<Op*>(err.op_context);
  if (op != nullptr && op->owner != nullptr) {
    op->owner->opFailed(op->slot, err.err, text);
  } else {
    OFI_WARN("NET/OFI: error completion without an operation on %s: %s", domain_->info()->domain_attr->name, text.c_str());
  }
}

}  // namespace weft::ofi
