// Checks of endings: closing in every order, and a peer process that dies mid-operation.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"

namespace weft::plugin::conformance {

std::string checkCloseOrder(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  // 1. The listen comm closes first; the accepted comms keep working.
  Pair a = s.connect();
  requireOk(s.api().closeListen(a.listen), "closeListen before the comms");
  a.listen = nullptr;
  s.transfer(a, 4096, 1);
  // 2. The receiving end closes before the sending end.
  requireOk(s.api().closeRecv(a.recv), "closeRecv before closeSend");
  requireOk(s.api().closeSend(a.send), "closeSend after closeRecv");
  // 3. Comms closed with requests never completed (the host is tearing down after an error).
  Pair b = s.connect();
  Buffer buf(size_t{8} << 20);
  void* data = buf.data();
  size_t cap = buf.size();
  int tag = 5;
  (void)s.postRecv(b.recv, 1, &data, &cap, &tag, nullptr);
  (void)s.postSend(b.send, buf.data(), buf.size(), 6, nullptr);  // a tag nobody receives
  s.close(b);
  // 4. A fresh connection still works after all that.
  Pair c = s.connect();
  s.transfer(c, 1 << 20, 2);
  s.close(c);
  return "listen-first, recv-first and close-with-pending-requests all return";
}

namespace {

struct PipePair {
  int fd[2] = {-1, -1};
  PipePair() { require(pipe(fd) == 0, "pipe() failed"); }
  ~PipePair() {
    for (int f : fd)
      if (f >= 0) close(f);
  }
};

bool readAll(int fd, void* data, size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    ssize_t n = read(fd, p, size);
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// The peer process: connects to the handle it reads, sends one message (or, as the receiver,
// listens, publishes its handle and accepts), then waits to be killed. Never returns.
[[noreturn]] void peerMain(const Plugin& plugin, const Options& o, bool receiver, int in, int out) {
  try {
    Session s(plugin, o);
    char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
    void* comm = nullptr;
    weft_net_device_handle_v11_t* dh = nullptr;
    if (receiver) {
      void* listen = nullptr;
      requireOk(s.api().listen(s.ctx(), s.dev(), handle, &listen), "peer listen");
      (void)!write(out, handle, sizeof(handle));
      while (comm == nullptr) requireOk(s.api().accept(listen, &comm, &dh), "peer accept");
    } else {
      require(readAll(in, handle, sizeof(handle)), "peer: no handle");
      while (comm == nullptr) requireOk(s.api().connect(s.ctx(), s.dev(), handle, &comm, &dh), "peer connect");
      char msg[64] = "hello from a peer that will die";
      void* req = s.postSend(comm, msg, sizeof(msg), 1, nullptr);
      s.wait(req, 1, "peer send");
    }
    char ready = 1;
    (void)!write(out, &ready, 1);
  } catch (...) {
  }
  for (;;) pause();
}

// Posts with `post` and tests the request until something fails: the post itself or a test.
// A success or a timeout fails the check. Returns the plugin's error message.
template <typename Post>
std::string expectFailure(Session& s, Post post, const char* what) {
  Deadline d = s.deadline();
  void* request = nullptr;
  while (request == nullptr) {
    Status st = post(&request);
    if (!st.isOk()) return st.message();
    require(!d.expired(), std::string(what) + ": the plugin kept answering 'not now'");
  }
  int done = 0;
  for (;;) {
    Status st = s.api().test(request, &done, nullptr);
    if (!st.isOk()) return st.message();
    require(!done, std::string(what) + " succeeded although the peer was killed");
    require(!d.expired(), std::string(what) + " neither failed nor completed after the peer died (hang)");
    std::this_thread::yield();
  }
}

// The peer process, killed at the latest when the check leaves its scope: a check that skips
// or fails before killing it on purpose (no device, a refused listen) must not leave it behind,
// holding the runner's result pipe open so that the runner waits forever.
class Peer {
 public:
  Peer(const Plugin& plugin, const Options& o, bool receiver, PipePair& toPeer, PipePair& fromPeer) {
    pid_ = fork();
    require(pid_ >= 0, "fork() failed");
    if (pid_ == 0) peerMain(plugin, o, receiver, toPeer.fd[0], fromPeer.fd[1]);
  }
  ~Peer() { kill(); }
  Peer(const Peer&) = delete;
  Peer& operator=(const Peer&) = delete;
  void kill() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  pid_t pid_ = -1;
};

}  // namespace

std::string checkPeerDeath(const Plugin& plugin, const Options& o) {
  expectWarn("");  // the plugin should say that its peer went away
  std::string recvError, sendError;
  {  // The sender dies after one message: our pending receive must fail.
    PipePair toPeer, fromPeer;
    Peer peer(plugin, o, false, toPeer, fromPeer);  // before any plugin thread exists here
    Session s(plugin, o);
    char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
    void* listen = nullptr;
    void* recv = nullptr;
    weft_net_device_handle_v11_t* dh = nullptr;
    requireOk(s.api().listen(s.ctx(), s.dev(), handle, &listen), "listen");
    (void)!write(toPeer.fd[1], handle, sizeof(handle));
    Deadline d = s.deadline();
    while (recv == nullptr && !d.expired()) requireOk(s.api().accept(listen, &recv, &dh), "accept");
    char ready = 0;
    require(recv != nullptr && readAll(fromPeer.fd[0], &ready, 1), "the peer process did not connect");
    char buf[64];
    void* data = buf;
    size_t cap = sizeof(buf);
    int tag = 1;
    s.wait(s.postRecv(recv, 1, &data, &cap, &tag, nullptr), 1, "first receive");
    peer.kill();
    tag = 2;
    recvError = expectFailure(
        s, [&](void** r) { return s.api().irecv(recv, 1, &data, &cap, &tag, nullptr, nullptr, r); },
        "a receive from the dead peer");
    (void)s.api().closeRecv(recv);
    (void)s.api().closeListen(listen);
  }
  {  // The receiver dies without reading: our large send must fail.
    PipePair toPeer, fromPeer;
    Peer peer(plugin, o, true, toPeer, fromPeer);
    Session s(plugin, o);
    char handle[WEFT_NET_HANDLE_MAXSIZE];
    require(readAll(fromPeer.fd[0], handle, sizeof(handle)), "the peer process did not listen");
    void* send = nullptr;
    weft_net_device_handle_v11_t* dh = nullptr;
    Deadline d = s.deadline();
    while (send == nullptr && !d.expired()) requireOk(s.api().connect(s.ctx(), s.dev(), handle, &send, &dh), "connect");
    char ready = 0;
    require(send != nullptr && readAll(fromPeer.fd[0], &ready, 1), "the peer process did not accept");
    peer.kill();
    Buffer big(size_t{64} << 20);  // more than socket buffers hold: the send cannot finish
    sendError = expectFailure(
        s, [&](void** r) { return s.api().isend(send, big.data(), big.size(), 1, nullptr, nullptr, r); },
        "a 64 MiB send to the dead peer");
    (void)s.api().closeSend(send);
  }
  return "receive: " + recvError + "; send: " + sendError;
}

}  // namespace weft::plugin::conformance
