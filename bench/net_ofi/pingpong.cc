#include "bench/net_ofi/pingpong.h"

#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "bench/common/processes.h"
#include "core/plugin/net_loader.h"

namespace weft::bench {
namespace {

using Clock = std::chrono::steady_clock;

void check(const Status& s, const char* what) {
  if (!s.isOk()) throw std::runtime_error(std::string(what) + ": " + s.message());
}

// One side's connections: a send comm to the peer and a receive comm from it, each with a
// registered buffer, set up through the pipes that carry the listen handles.
struct Side {
  std::unique_ptr<plugin::NetInstance> net;
  void *listen = nullptr, *send = nullptr, *recv = nullptr, *sendMr = nullptr, *recvMr = nullptr;
  std::vector<char> out, in;
  bool yield = false;  // sched_yield() between test() calls that find nothing done

  Side(const std::string& path, size_t bytes, int handleOut, int handleIn);
  ~Side();
  void* post(bool sending);
  void wait(void* request);
};

Side::Side(const std::string& path, size_t bytes, int handleOut, int handleIn) : out(bytes, 'p'), in(bytes) {
  auto p = plugin::loadNetPlugin(path, plugin::NetLoaderOptions{});
  if (!p.isOk()) throw std::runtime_error(p.status().message());
  auto n = plugin::initNet(*p, 1);
  if (!n.isOk()) throw std::runtime_error(n.status().message());
  net = std::move(*n);
  plugin::NetApi& api = net->api();
  char mine[WEFT_NET_HANDLE_MAXSIZE] = {}, theirs[WEFT_NET_HANDLE_MAXSIZE];
  check(api.listen(net->ctx(), 0, mine, &listen), "listen");
  writeAll(handleOut, mine, sizeof(mine));
  readAll(handleIn, theirs, sizeof(theirs));
  weft_net_device_handle_v11_t* dh = nullptr;
  while (send == nullptr || recv == nullptr) {  // both at once: each side's accept drives the other's connect
    if (send == nullptr) check(api.connect(net->ctx(), 0, theirs, &send, &dh), "connect");
    if (recv == nullptr) check(api.accept(listen, &recv, &dh), "accept");
  }
  check(api.regMr(send, out.data(), out.size(), WEFT_PTR_HOST, &sendMr), "regMr");
  check(api.regMr(recv, in.data(), in.size(), WEFT_PTR_HOST, &recvMr), "regMr");
}

Side::~Side() {
  plugin::NetApi& api = net->api();
  (void)api.deregMr(send, sendMr);
  (void)api.deregMr(recv, recvMr);
  (void)api.closeSend(send);
  (void)api.closeRecv(recv);
  (void)api.closeListen(listen);
}

void* Side::post(bool sending) {
  void* request = nullptr;
  while (request == nullptr) {
    if (sending) {
      check(net->api().isend(send, out.data(), out.size(), 0, sendMr, nullptr, &request), "isend");
    } else {
      void* data = in.data();
      size_t size = in.size();
      int tag = 0;
      check(net->api().irecv(recv, 1, &data, &size, &tag, &recvMr, nullptr, &request), "irecv");
    }
  }
  return request;
}

void Side::wait(void* request) {
  for (int done = 0;;) {
    check(net->api().test(request, &done, nullptr), "test");
    if (done) return;
    if (yield) sched_yield();
  }
}

// The initiator posts its receive, sends, and waits for both; the responder answers each message.
double initiate(Side& s, int total, int timed) {
  Clock::time_point start = Clock::now();
  for (int i = 0; i < total; ++i) {
    if (i == total - timed) start = Clock::now();
    void* r = s.post(false);
    void* t = s.post(true);
    s.wait(t);
    s.wait(r);
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void respond(Side& s, int total) {
  for (int i = 0; i < total; ++i) {
    s.wait(s.post(false));
    s.wait(s.post(true));
  }
}

}  // namespace

PingPong pluginPingPong(const std::string& path, size_t bytes, int iters, bool yield) {
  Pipe toInitiator, toResponder, result;
  const int total = iters + iters / 10;
  pid_t responder = forkRole([&] {
    Side s(path, bytes, toInitiator.fd[1], toResponder.fd[0]);
    s.yield = yield;
    respond(s, total);
  });
  pid_t initiator = forkRole([&] {
    Side s(path, bytes, toResponder.fd[1], toInitiator.fd[0]);
    s.yield = yield;
    double seconds = initiate(s, total, iters);
    writeAll(result.fd[1], &seconds, sizeof(seconds));
  });
  waitOk(initiator);
  waitOk(responder);
  PingPong p;
  readAll(result.fd[0], &p.seconds, sizeof(p.seconds));
  p.iters = iters;
  p.bytes = bytes;
  return p;
}

namespace {

std::string readToEnd(int fd) {
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof(buf))) > 0;) text.append(buf, static_cast<size_t>(n));
  return text;
}

// fi_pingpong's result line: "4m  200  =200  1.5g  9.59s  175.03  23962.80  0.00". The client
// retries its control connection until the server listens (it has no wait of its own).
PingPong parseResult(const std::string& out, size_t bytes, int iters) {
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream f(line);
    std::string size, sent, acked, total, time;
    double mbps = 0, usec = 0;
    if (!(f >> size >> sent >> acked >> total >> time >> mbps >> usec) || time.empty() || time.back() != 's') continue;
    PingPong p;
    p.iters = iters;
    p.bytes = bytes;
    p.seconds = usec * 2.0 * iters / 1e6;
    return p;
  }
  throw std::runtime_error("fi_pingpong printed no result: " + out.substr(0, 300));
}

}  // namespace

PingPong fiPingPong(const std::string& provider, const std::string& domain, size_t bytes, int iters) {
  const std::string port = std::to_string(freePort());
  const std::vector<std::string> common = {"-p", provider, "-e", "rdm", "-m", "tagged", "-d", domain,
                                           "-I", std::to_string(iters), "-S", std::to_string(bytes)};
  std::vector<std::string> server = {"fi_pingpong", "-B", port};
  server.insert(server.end(), common.begin(), common.end());
  Pipe serverOut;
  pid_t s = spawn(server, serverOut.fd[1], serverOut.fd[1]);
  for (int attempt = 0;; ++attempt) {
    std::vector<std::string> client = {"fi_pingpong", "-P", port};
    client.insert(client.end(), common.begin(), common.end());
    client.push_back("127.0.0.1");
    Pipe clientOut;
    pid_t c = spawn(client, clientOut.fd[1], clientOut.fd[1]);
    close(clientOut.fd[1]);
    clientOut.fd[1] = -1;
    std::string out = readToEnd(clientOut.fd[0]);
    int status = 0;
    waitpid(c, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      waitpid(s, nullptr, 0);
      return parseResult(out, bytes, iters);
    }
    if (attempt == 200) {
      kill(s, SIGTERM);
      waitpid(s, nullptr, 0);
      throw std::runtime_error("fi_pingpong client failed: " + out.substr(0, 300));
    }
    usleep(10000);  // the server is not listening yet
  }
}

}  // namespace weft::bench
