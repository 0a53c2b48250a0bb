#include "plugins/net-ofi/connect.h"

#include <rdma/fi_errno.h>

#include <cstring>
#include <random>

#include "plugins/net-ofi/log.h"

namespace weft::ofi {
namespace {

uint64_t random64() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

size_t helloBytes(const Hello& h) { return offsetof(Hello, addr) + h.addrLen; }

Hello makeHello(HelloKind kind, uint64_t token, uint64_t connId, uint32_t key, const std::vector<uint8_t>& addr) {
  Hello h{};
  h.magic = kHelloMagic;
  h.version = kWireVersion;
  h.kind = kind;
  h.token = token;
  h.connId = connId;
  h.dataKey = key;
  h.addrLen = static_cast<uint32_t>(addr.size());
  std::memcpy(h.addr, addr.data(), addr.size());
  return h;
}

weft_result_t startConnect(Device& device, const Handle& h, const Config& config, Connecting** out) {
  auto c = std::make_unique<Connecting>();
  if (weft_result_t rc = device.domain(&c->domain); rc != weftSuccess) return rc;
  if (weft_result_t rc = Endpoint::open(c->domain, &c->ep); rc != weftSuccess) return rc;
  if (c->ep->name().size() > sizeof(Hello::addr)) {
    return OFI_FAIL(weftInternalError, "NET/OFI: connect: %zu-byte endpoint address does not fit a hello", c->ep->name().size());
  }
  if (weft_result_t rc = c->ep->insert(h.addr, h.addrLen, &c->listener); rc != weftSuccess) return rc;
  c->tags = device.tags;
  c->registerAlways = config.registerAlways;
  c->timeout = std::chrono::seconds(config.connectTimeoutSeconds);
  // The key keeps this connection's data tags apart from any other sender's.
  uint32_t key = static_cast<uint32_t>(random64());
  c->request = makeHello(HelloKind::kConnect, h.token, random64(), key, c->ep->name());
  c->sendOp = Op{{}, c.get(), 0};
  c->recvOp = Op{{}, c.get(), 1};
  ssize_t rc = c->ep->recv(&c->answer, sizeof(c->answer), nullptr, FI_ADDR_UNSPEC, c->tags.control(kAcceptTag), &c->recvOp);
  if (rc != 0) return OFI_FI_FAIL(weftSystemError, static_cast<int>(rc), "fi_trecv", "answer from %s", c->ep->describe(c->listener).c_str());
  *out = c.release();
  return weftSuccess;
}

// Posts the request (once there is room), reads completions, and checks what arrived.
weft_result_t advance(Connecting& c) {
  if (!c.requestPosted) {
    ssize_t rc = c.ep->send(&c.request, helloBytes(c.request), nullptr, c.listener, c.tags.control(kConnectTag), &c.sendOp);
    if (rc != 0 && rc != -FI_EAGAIN) {
      return OFI_FI_FAIL(weftSystemError, static_cast<int>(rc), "fi_tsend", "connection request to %s", c.ep->describe(c.listener).c_str());
    }
    c.requestPosted = rc == 0;
  }
  if (weft_result_t rc = c.ep->progress(); rc != weftSuccess) return rc;
  if (c.error != weftSuccess) return OFI_FAIL(c.error, "NET/OFI: connect to %s: %s", c.ep->describe(c.listener).c_str(), c.errorText.c_str());
  // A listener that has not taken the request by then is gone (closed, or its process died):
  // rxm over tcp would retry the refused connection forever.
  if (!c.sent && std::chrono::steady_clock::now() - c.startedAt > c.timeout) {
    return OFI_FAIL(weftRemoteError, "NET/OFI: connect to %s: the listener did not take the connection request in %lld s "
                    "(WEFT_OFI_CONNECT_TIMEOUT)", c.ep->describe(c.listener).c_str(), static_cast<long long>(c.timeout.count()));
  }
  if (!c.answered) return weftSuccess;
  auto problem = helloProblem(c.answer, c.answerBytes, HelloKind::kAccept, c.request.token, c.request.connId);
  if (!problem) return weftSuccess;
  OFI_WARN("NET/OFI: connect: ignored an answer from %s: %s", c.ep->describe(c.listener).c_str(), problem->c_str());
  c.answered = false;
  ssize_t rc = c.ep->recv(&c.answer, sizeof(c.answer), nullptr, FI_ADDR_UNSPEC, c.tags.control(kAcceptTag), &c.recvOp);
  return rc == 0 ? weftSuccess : OFI_FI_FAIL(weftSystemError, static_cast<int>(rc), "fi_trecv", "answer");
}

}  // namespace

void Connecting::opDone(int slot, size_t length) {
  if (slot == 0) {
    sent = true;
  } else {
    answered = true;
    answerBytes = length;
  }
}

void Connecting::opFailed(int slot, int err, const std::string& text) {
  if (error != weftSuccess) return;
  error = codeForCompletionError(err);
  errorText = (slot == 0 ? "connection request: " : "answer: ") + text;
}

weft_result_t connectStep(Device& device, Handle* handle, const Config& config, SendComm** comm) {
  *comm = nullptr;
  if (handle->connecting == nullptr) {
    if (weft_result_t rc = startConnect(device, *handle, config, &handle->connecting); rc != weftSuccess) return rc;
  }
  Connecting& c = *handle->connecting;
  if (weft_result_t rc = advance(c); rc != weftSuccess) {
    abandonConnect(handle);
    return rc;
  }
  if (!c.sent || !c.answered) return weftSuccess;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  if (weft_result_t rc = c.ep->insert(c.answer.addr, c.answer.addrLen, &peer); rc != weftSuccess) {
    abandonConnect(handle);
    return rc;
  }
  *comm = new SendComm(Kind::kSend, c.domain, std::move(c.ep), peer, c.request.dataKey, c.tags, c.registerAlways);
  abandonConnect(handle);
  return weftSuccess;
}

void abandonConnect(Handle* handle) {
  delete handle->connecting;
  handle->connecting = nullptr;
}

Listener::Listener(std::shared_ptr<Domain> domain, std::unique_ptr<Endpoint> ep, const TagLayout& tags, bool registerAlways)
    : domain_(std::move(domain)), ep_(std::move(ep)), tags_(tags), registerAlways_(registerAlways), token_(random64()) {
  for (int i = 0; i < kPosted; ++i) ops_[i] = Op{{}, this, i};
}

Listener::~Listener() {
  ep_.reset();  // before the slots libfabric may still write into
  kind_ = Kind::kFreed;
}

weft_result_t Listener::open(Device& device, bool registerAlways, Handle* handle, Listener** out) {
  std::shared_ptr<Domain> domain;
  if (weft_result_t rc = device.domain(&domain); rc != weftSuccess) return rc;
  std::unique_ptr<Endpoint> ep;
  if (weft_result_t rc = Endpoint::open(domain, &ep); rc != weftSuccess) return rc;
  if (ep->name().size() > kMaxHandleAddr) {
    return OFI_FAIL(weftInternalError, "NET/OFI: listen: the %zu-byte address of %s does not fit the handle",
                    ep->name().size(), device.name.c_str());
  }
  std::unique_ptr<Listener> l(new Listener(std::move(domain), std::move(ep), device.tags, registerAlways));
  for (int i = 0; i < kPosted; ++i)
    if (weft_result_t rc = l->post(i); rc != weftSuccess) return rc;
  std::memset(handle, 0, sizeof(Handle));
  handle->magic = kHandleMagic;
  handle->version = kWireVersion;
  handle->addrLen = static_cast<uint16_t>(l->ep_->name().size());
  handle->token = l->token_;
  handle->connecting = nullptr;
  std::memcpy(handle->addr, l->ep_->name().data(), l->ep_->name().size());
  *out = l.release();
  return weftSuccess;
}

weft_result_t Listener::post(int slot) {
  ssize_t rc = ep_->recv(&slots_[slot], sizeof(Hello), nullptr, FI_ADDR_UNSPEC, tags_.control(kConnectTag), &ops_[slot]);
  if (rc == -FI_EAGAIN) {
    repost_.push_back(slot);
    return weftSuccess;
  }
  return rc == 0 ? weftSuccess : OFI_FI_FAIL(weftSystemError, static_cast<int>(rc), "fi_trecv", "connection requests");
}

void Listener::opDone(int slot, size_t length) { arrived_.emplace_back(slot, length); }

void Listener::opFailed(int slot, int, const std::string& text) {
  OFI_WARN("NET/OFI: rejected a connection request: %s", text.c_str());
  repost_.push_back(slot);
}

weft_result_t Listener::acceptStep(RecvComm** comm) {
  *comm = nullptr;
  if (weft_result_t rc = ep_->progress(); rc != weftSuccess) return rc;
  for (size_t n = repost_.size(); n > 0; --n) {
    int slot = repost_.front();
    repost_.pop_front();
    if (weft_result_t rc = post(slot); rc != weftSuccess) return rc;
  }
  while (!arrived_.empty()) {
    auto [slot, bytes] = arrived_.front();
    arrived_.pop_front();
    weft_result_t rc = handle(slot, bytes);
    if (weft_result_t again = post(slot); again != weftSuccess) return again;
    if (rc != weftSuccess) return rc;
  }
  return finishAnswers(comm);
}

weft_result_t Listener::finishAnswers(RecvComm** comm) {
  for (auto it = answering_.begin(); it != answering_.end();) {
    bool sent = false;
    if ((*it)->answerSent(&sent) != weftSuccess) {
      it = answering_.erase(it);  // the connector went away; the comm logged why
      continue;
    }
    if (sent) {
      *comm = it->release();
      answering_.erase(it);
      return weftSuccess;
    }
    ++it;
  }
  return weftSuccess;
}

weft_result_t Listener::handle(int slot, size_t bytes) {
  const Hello& h = slots_[slot];
  if (auto problem = helloProblem(h, bytes, HelloKind::kConnect, token_, std::nullopt)) {
    OFI_WARN("NET/OFI: rejected a connection request: %s", problem->c_str());
    return weftSuccess;
  }
  std::unique_ptr<Endpoint> ep;
  if (weft_result_t rc = Endpoint::open(domain_, &ep); rc != weftSuccess) return rc;
  fi_addr_t peer = FI_ADDR_UNSPEC;
  if (weft_result_t rc = ep->insert(h.addr, h.addrLen, &peer); rc != weftSuccess) return rc;
  Hello answer = makeHello(HelloKind::kAccept, token_, h.connId, h.dataKey, ep->name());
  auto c = std::make_unique<RecvComm>(Kind::kRecv, domain_, std::move(ep), peer, h.dataKey, tags_, registerAlways_);
  if (weft_result_t rc = c->start(answer); rc != weftSuccess) return rc;
  answering_.push_back(std::move(c));
  return weftSuccess;
}

}  // namespace weft::ofi
