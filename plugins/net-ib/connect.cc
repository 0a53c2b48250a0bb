#include "plugins/net-ib/connect.h"

#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <random>

#include "plugins/net-ib/log.h"

namespace weft::ib {
namespace {

uint64_t random64() {
  static thread_local std::mt19937_64 gen{std::random_device{}()};
  return gen();
}

// Opens the connector's QP and its FIFO, registered for the receiver's writes.
weft_result_t startConnect(const Device& device, const Handle& h, std::unique_ptr<Connecting>* out) {
  auto c = std::make_unique<Connecting>();
  if (weft_result_t rc = Endpoint::open(device, &c->ep); rc != weftSuccess) return rc;
  c->fifo.reset(new FifoEntry[kMaxRequests]());
  const size_t bytes = sizeof(FifoEntry) * kMaxRequests;
  c->fifoMr.reset(ibv_reg_mr(c->ep->pd(), c->fifo.get(), bytes, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!c->fifoMr) return IB_VERBS_FAIL(weftSystemError, errno, "ibv_reg_mr", "%s, FIFO, %zu bytes", device.name.c_str(), bytes);
  if (weft_result_t rc = connectTo(h.addr, &c->x.fd); rc != weftSuccess) return rc;
  c->x.peer = addressToString(h.addr);
  QpInfo mine = c->ep->describe(h.token);
  mine.fifoAddr = reinterpret_cast<uint64_t>(c->fifo.get());
  mine.fifoRkey = c->fifoMr->rkey;
  encodeQpInfo(mine, c->x.out);
  *out = std::move(c);
  return weftSuccess;
}

weft_result_t stepConnect(Connecting& c, uint64_t token, const Config& config, bool* finished) {
  *finished = false;
  bool done = false;
  if (weft_result_t rc = sendSome(c.x.fd.get(), c.x.out, kQpInfoBytes, &c.x.sent, &done, "the QP description"); rc != weftSuccess || !done) return rc;
  if (!c.connected) {
    if (weft_result_t rc = recvSome(c.x.fd.get(), c.x.in, kQpInfoBytes, &c.x.got, &done, "the acceptor's QP description"); rc != weftSuccess || !done) return rc;
    std::string why;
    std::optional<QpInfo> peer = decodeQpInfo(c.x.in, &why);
    if (!peer || peer->token != token) {
      return IB_FAIL(weftRemoteError, "NET/IB: connect to %s: bad answer: %s", c.x.peer.c_str(), peer ? "wrong token" : why.c_str());
    }
    if (weft_result_t rc = c.ep->connectTo(*peer, config); rc != weftSuccess) return rc;
    c.connected = true;
  }
  if (weft_result_t rc = sendSome(c.x.fd.get(), &c.x.ready, 1, &c.x.readyMoved, &done, "the ready byte"); rc != weftSuccess || !done) return rc;
  *finished = true;
  return weftSuccess;
}

}  // namespace

weft_result_t connectStep(const Device& device, void* handleBytes, const Config& config, SendComm** comm) {
  *comm = nullptr;
  std::string why;
  std::optional<Handle> h = decodeHandle(handleBytes, &why);
  if (!h) return IB_FAIL(weftInvalidArgument, "NET/IB: connect: %s", why.c_str());
  if (h->connecting == nullptr) {
    std::unique_ptr<Connecting> c;
    if (weft_result_t rc = startConnect(device, *h, &c); rc != weftSuccess) return rc;
    h->connecting = c.release();
    storeConnecting(handleBytes, h->connecting);
  }
  bool finished = false;
  weft_result_t rc = stepConnect(*h->connecting, h->token, config, &finished);
  if (rc != weftSuccess) {
    abandonConnect(handleBytes);
    return rc;
  }
  if (!finished) return weftSuccess;
  Connecting& c = *h->connecting;
  *comm = new SendComm(std::move(c.ep), std::move(c.fifo), std::move(c.fifoMr));
  abandonConnect(handleBytes);
  return weftSuccess;
}

void abandonConnect(void* handleBytes) {
  std::string why;
  std::optional<Handle> h = decodeHandle(handleBytes, &why);
  if (!h) return;
  delete h->connecting;
  storeConnecting(handleBytes, nullptr);
}

weft_result_t Listener::open(const Device& device, const Config& config, void* handleBytes, Listener** out) {
  Handle h;
  h.addr = bootstrapAddress();
  Fd fd;
  if (weft_result_t rc = listenOn(&h.addr, &fd); rc != weftSuccess) return rc;
  h.token = random64();
  encodeHandle(h, handleBytes);
  *out = new Listener(device, config, std::move(fd), h.token);
  return weftSuccess;
}

weft_result_t Listener::answer(Incoming& in) {
  std::string why;
  std::optional<QpInfo> peer = decodeQpInfo(in.x.in, &why);
  if (!peer || peer->token != token_) {
    IB_WARN("NET/IB: rejected a connection from %s: %s", in.x.peer.c_str(), peer ? "wrong token (not for this listener)" : why.c_str());
    return weftRemoteError;
  }
  std::unique_ptr<Endpoint> ep;
  if (weft_result_t rc = Endpoint::open(device_, &ep); rc != weftSuccess) return rc;
  if (weft_result_t rc = ep->connectTo(*peer, config_); rc != weftSuccess) return rc;
  encodeQpInfo(ep->describe(token_), in.x.out);
  in.comm = std::make_unique<RecvComm>(std::move(ep), peer->fifoAddr, peer->fifoRkey);
  return in.comm->init();
}

bool Listener::advance(Incoming& in, RecvComm** comm) {
  bool done = false;
  if (!in.answered) {
    if (recvSome(in.x.fd.get(), in.x.in, kQpInfoBytes, &in.x.got, &done, "a QP description") != weftSuccess) return true;
    if (!done) return false;
    if (answer(in) != weftSuccess) return true;
    in.answered = true;
  }
  if (sendSome(in.x.fd.get(), in.x.out, kQpInfoBytes, &in.x.sent, &done, "the QP description") != weftSuccess) return true;
  if (!done) return false;
  uint8_t ready = 0;
  if (recvSome(in.x.fd.get(), &ready, 1, &in.x.readyMoved, &done, "the ready byte") != weftSuccess) return true;
  if (!done) return false;
  *comm = in.comm.release();
  return true;
}

weft_result_t Listener::acceptStep(RecvComm** comm) {
  *comm = nullptr;
  for (;;) {
    int fd = ::accept4(fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) break;  // EAGAIN, or a connection reset before we got to it: nothing to do
    auto in = std::make_unique<Incoming>();
    in->x.fd = Fd(fd);
    SockAddr peer{};
    socklen_t len = sizeof(peer);
    in->x.peer = ::getpeername(fd, &peer.sa, &len) == 0 ? addressToString(peer) : "?";
    incoming_.push_back(std::move(in));
  }
  for (size_t i = 0; i < incoming_.size();) {
    if (!advance(*incoming_[i], comm)) {
      ++i;
      continue;
    }
    incoming_.erase(incoming_.begin() + static_cast<long>(i));
    if (*comm != nullptr) return weftSuccess;
  }
  return weftSuccess;
}

}  // namespace weft::ib
