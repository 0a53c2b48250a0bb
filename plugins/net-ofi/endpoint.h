// The libfabric objects of the OFI plugin. A Domain (fabric + domain) is shared by every
// endpoint on one device and closes when the last of them goes. An Endpoint is one
// reliable-datagram endpoint with its own completion queue and address vector: each listen,
// send and receive comm has one, so a comm's completions reach only the thread driving it.
#pragma once

#include <rdma/fabric.h>
#include <rdma/fi_endpoint.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "plugins/net-ofi/fi_objects.h"
#include "weft/net.h"

namespace weft::ofi {

// Whoever waits for an operation's completion: a request, a connection being set up, a listener.
class OpOwner {
 public:
  virtual void opDone(int slot, size_t length) = 0;
  // `err` is the positive errno of the error completion; `text` says what the provider said.
  virtual void opFailed(int slot, int err, const std::string& text) = 0;

 protected:
  ~OpOwner() = default;
};

// One posted operation. libfabric hands back &ctx (FI_CONTEXT2 mode: room it may use until the
// completion), from which the completion finds its owner.
struct Op {
  fi_context2 ctx;  // first member: a completion's op_context is this struct's address
  OpOwner* owner = nullptr;
  int slot = 0;
};

class Domain {
 public:
  // Opens the fabric and domain that `info` describes; `info` is copied.
  static weft_result_t open(const fi_info* info, std::shared_ptr<Domain>* out);
  fid_domain* get() const { return domain_.get(); }
  const fi_info* info() const { return info_.get(); }
  // Memory registration rules of this domain (fi_domain(3) mr_mode).
  bool needsLocalMr() const { return (info_->domain_attr->mr_mode & FI_MR_LOCAL) != 0; }
  bool mrPerEndpoint() const { return (info_->domain_attr->mr_mode & FI_MR_ENDPOINT) != 0; }
  bool providerKeys() const { return (info_->domain_attr->mr_mode & FI_MR_PROV_KEY) != 0; }
  uint64_t nextKey() { return nextKey_.fetch_add(1, std::memory_order_relaxed); }

 private:
  InfoPtr info_;
  Fabric fabric_;
  DomainPtr domain_;
  std::atomic<uint64_t> nextKey_{1};
};

class Endpoint {
 public:
  static weft_result_t open(std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint>* out);
  Endpoint(const Endpoint&) = delete;
  Endpoint& operator=(const Endpoint&) = delete;
  ~Endpoint();

  // This endpoint's provider address, as fi_getname gives it.
  const std::vector<uint8_t>& name() const { return name_; }
  Domain& domain() const { return *domain_; }
  fid_ep* ep() const { return ep_.get(); }
  // Adds a peer's address; logs and fails on error.
  weft_result_t insert(const uint8_t* addr, size_t len, fi_addr_t* out);
  // "127.0.0.1:4242" (or the provider's notation) of an inserted address, for messages.
  std::string describe(fi_addr_t addr) const;
  // Tagged send/receive. Return 0, -FI_EAGAIN (no room now: progress and retry) or an fi error.
  ssize_t send(const void* buf, size_t len, void* desc, fi_addr_t dest, uint64_t tag, Op* op);
  ssize_t recv(void* buf, size_t len, void* desc, fi_addr_t src, uint64_t tag, Op* op);
  // Reads the completion queue and hands each completion to its operation's owner. Fails only
  // when the queue itself fails; a failed operation goes to its owner.
  weft_result_t progress();

 private:
  explicit Endpoint(std::shared_ptr<Domain> domain) : domain_(std::move(domain)) {}
  void failedCompletion();

  std::shared_ptr<Domain> domain_;
  CqPtr cq_;
  AvPtr av_;
  EpPtr ep_;
  std::vector<uint8_t> name_;
};

}  // namespace weft::ofi
