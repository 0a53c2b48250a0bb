// Checks of endings: closing in the orders NCCL closes (including ncclCommAbort's, with requests
// pending), and a peer process that dies mid-operation (NCCL reports ncclRemoteError only if
// the plugin's test fails).
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <thread>
#include <utility>

#include "core/base/strings.h"
#include "core/plugin/conformance_checks.h"
#include "core/plugin/conformance_support.h"

namespace weft::plugin::conformance {

std::string checkCloseOrder(const Plugin& plugin, const Options& o) {
  Session s(plugin, o);
  const char* ncclDoes = "NCCL: ncclCommDestroy or ncclCommAbort returns the error";
  // 1. The listen comm closes first, right after accept, as NCCL closes it; the comms work.
  Pair a = s.connect();
  s.transfer(a, 4096, 1);
  // 2. The receiving end closes before the sending end.
  requireOk(s.api().closeRecv(a.recv), "closeRecv before closeSend", ncclDoes);
  requireOk(s.api().closeSend(a.send), "closeSend after closeRecv", ncclDoes);
  // 3. Comms closed with requests never tested to completion, as ncclCommAbort leaves them:
  // memory deregistered, then the comms closed. A plugin may say so in a WARN.
  expectWarn("");
  Pair b = s.connect();
  {
    RegisteredBuffer src(s, b.send, size_t{8} << 20, "send"), dst(s, b.recv, size_t{16} << 20, "recv");
    void* data[2] = {dst.data(), dst.data() + (size_t{8} << 20)};
    void* mh = dst.mhandle();
    size_t cap = size_t{8} << 20;
    int tag = 5;
    (void)s.postRecv(b.recv, 1, &data[0], &cap, &tag, &mh);
    (void)s.postRecv(b.recv, 1, &data[1], &cap, &tag, &mh);  // no send will ever match this one
    (void)s.postSend(b.send, src.data(), src.size(), tag, src.mhandle());
    src.release();
    dst.release();
  }
  s.close(b);
  // 4. A fresh connection still works after all that.
  Pair c = s.connect();
  s.transfer(c, 1 << 20, 2);
  s.close(c);
  return "listen closed after accept, recv before send, and close with requests pending all return";
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

// The peer process: connects to the handle it reads and sends one message (or, as the
// receiver, listens, publishes its handle, accepts and receives one message), says so, then
// waits to be killed. Never returns.
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
    }
    RegisteredBuffer msg(s, comm, 64, "peer message");
    void* data = msg.data();
    void* mh = msg.mhandle();
    size_t cap = msg.size();
    int tag = 1;
    void* req = receiver ? s.postRecv(comm, 1, &data, &cap, &tag, &mh) : s.postSend(comm, data, cap, tag, mh);
    s.wait(req, 1, "peer message");
    msg.release();
    char ready = 1;
    (void)!write(out, &ready, 1);
  } catch (...) {
  }
  for (;;) pause();
}

// What became of the request posted after the peer died: the plugin's error, or a hang.
struct AfterDeath {
  std::string error;  // the plugin's message when it failed the post or a test
  bool hung = false;
};

// Posts with `post` and tests the request until something fails: the post itself or a test.
// A success fails the check; no failure within `seconds` is a hang.
template <typename Post>
AfterDeath expectFailure(Session& s, Post post, const char* what, double seconds) {
  Deadline d(seconds);
  void* request = nullptr;
  while (request == nullptr) {
    Status st = post(&request);
    if (!st.isOk()) return {st.message()};
    if (d.expired()) return {"", true};
  }
  int done = 0, sizes[1] = {-1};
  for (;;) {
    Status st = s.api().test(request, &done, sizes);
    if (!st.isOk()) return {st.message()};
    require(!done, std::string(what) + " succeeded although the peer was killed", nccl::kWrongData);
    if (d.expired()) return {"", true};
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

namespace {

// How long a plugin gets to notice its peer's death, per direction: both must fit in the
// check's time limit with room to report. With the default limit (120 s) that is 36 s, about
// what NCCL's own IB transport takes to report a dead peer (NCCL_IB_TIMEOUT 20: 4.3 s per try,
// NCCL_IB_RETRY_CNT 7: 8 tries, 34 s).
double deathWindow(const Options& o) { return o.timeoutSeconds * 0.3; }

// The sender dies after one message: the next receive must fail. A Session that hung stays
// open on purpose (closing comms with a request the plugin still runs may block as well); its
// process ends right after.
AfterDeath receiveFromDeadPeer(const Plugin& plugin, const Options& o) {
  PipePair toPeer, fromPeer;
  Peer peer(plugin, o, false, toPeer, fromPeer);  // before any plugin thread exists here
  auto s = std::make_unique<Session>(plugin, o);
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  void* recv = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  requireOk(s->api().listen(s->ctx(), s->dev(), handle, &listen), "listen");
  (void)!write(toPeer.fd[1], handle, sizeof(handle));
  Deadline d = s->deadline();
  while (recv == nullptr && !d.expired()) requireOk(s->api().accept(listen, &recv, &dh), "accept");
  require(recv != nullptr, "the peer process did not connect");
  // The first message arrives while this side keeps calling the plugin, as NCCL's proxy does (a
  // plugin may need the receiver's progress to finish the connection or the send).
  auto buf = std::make_unique<RegisteredBuffer>(*s, recv, 64, "recv");
  void* data = buf->data();
  void* mh = buf->mhandle();
  size_t cap = buf->size();
  int tag = 1;
  s->wait(s->postRecv(recv, 1, &data, &cap, &tag, &mh), 1, "first receive");
  peer.kill();
  AfterDeath r = expectFailure(
      *s, [&](void** req) { return s->api().irecv(recv, 1, &data, &cap, &tag, &mh, nullptr, req); },
      "a receive from the dead peer", deathWindow(o));
  if (r.hung) {
    (void)buf.release();
    (void)s.release();
    return r;
  }
  buf->release();
  (void)s->api().closeRecv(recv);
  (void)s->api().closeListen(listen);
  return r;
}

// The receiver dies after one message: a send larger than socket buffers hold must fail.
AfterDeath sendToDeadPeer(const Plugin& plugin, const Options& o) {
  PipePair toPeer, fromPeer;
  Peer peer(plugin, o, true, toPeer, fromPeer);
  auto s = std::make_unique<Session>(plugin, o);
  char handle[WEFT_NET_HANDLE_MAXSIZE];
  require(readAll(fromPeer.fd[0], handle, sizeof(handle)), "the peer process did not listen");
  void* send = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  Deadline d = s->deadline();
  while (send == nullptr && !d.expired()) requireOk(s->api().connect(s->ctx(), s->dev(), handle, &send, &dh), "connect");
  require(send != nullptr, "the peer process did not accept");
  auto big = std::make_unique<RegisteredBuffer>(*s, send, size_t{64} << 20, "send");
  s->wait(s->postSend(send, big->data(), 64, 1, big->mhandle()), 1, "first send");
  char ready = 0;
  require(readAll(fromPeer.fd[0], &ready, 1), "the peer process did not receive the first message");
  peer.kill();
  AfterDeath r = expectFailure(
      *s, [&](void** req) { return s->api().isend(send, big->data(), big->size(), 1, big->mhandle(), nullptr, req); },
      "a 64 MiB send to the dead peer", deathWindow(o));
  if (r.hung) {
    (void)big.release();
    (void)s.release();
    return r;
  }
  big->release();
  (void)s->api().closeSend(send);
  return r;
}

// Runs one half in a process of its own, so that a plugin left running after a hang cannot
// disturb the other half (its peer is forked while no plugin thread exists). A half that blocks
// inside a plugin call past its time is a hang too.
AfterDeath inOwnProcess(AfterDeath (*half)(const Plugin&, const Options&), const Plugin& plugin, const Options& o) {
  PipePair result;
  pid_t pid = fork();
  require(pid >= 0, "fork() failed");
  if (pid == 0) {
    std::string msg;
    try {
      AfterDeath r = half(plugin, o);
      msg = r.hung ? "H" : "E" + r.error;
    } catch (const CheckSkipped& e) {
      msg = std::string("S") + e.what();
    } catch (const std::exception& e) {
      msg = std::string("F") + e.what();
    }
    (void)!write(result.fd[1], msg.data(), msg.size());
    _exit(0);
  }
  close(std::exchange(result.fd[1], -1));
  pollfd pfd{result.fd[0], POLLIN, 0};
  bool answered = poll(&pfd, 1, static_cast<int>(o.timeoutSeconds * 0.45 * 1000)) > 0;
  std::string msg;
  char buf[4096];
  ssize_t n;
  while (answered && (n = read(result.fd[0], buf, sizeof(buf))) > 0) msg.append(buf, static_cast<size_t>(n));
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  if (!answered) return {"", true};
  if (msg.empty()) throw CheckFailed("the process of one half crashed (NCCL: its process would crash too)");
  if (msg[0] == 'S') throw CheckSkipped(msg.substr(1));
  if (msg[0] == 'F') throw CheckFailed(msg.substr(1));
  return msg[0] == 'H' ? AfterDeath{"", true} : AfterDeath{msg.substr(1)};
}

std::string describe(const AfterDeath& r, const char* what, double seconds) {
  if (!r.hung) return std::string(what) + " failed: " + r.error;
  return strprintf("%s neither failed nor completed within %.0f s of the peer's death", what, seconds);
}

}  // namespace

std::string checkPeerDeath(const Plugin& plugin, const Options& o) {
  expectWarn("");  // the plugin should say that its peer went away
  AfterDeath recv = inOwnProcess(receiveFromDeadPeer, plugin, o);
  AfterDeath send = inOwnProcess(sendToDeadPeer, plugin, o);
  std::string both = describe(recv, "a receive from the dead peer", deathWindow(o)) + "; " +
                     describe(send, "a 64 MiB send to it", deathWindow(o));
  require(!recv.hung && !send.hung, both,
          "NCCL: its proxy tests the request forever, so the communicator hangs instead of returning an error, until "
          "the application aborts it; NCCL's own transports report a dead peer, IB within about 34 s");
  return both;
}

}  // namespace weft::plugin::conformance
