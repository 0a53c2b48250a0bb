// The socket plugin through weft's loader, on loopback only: strangers connecting to a listen
// port (garbage, a truncated hello, silence) are rejected or ignored without disturbing a real
// connection made at the same time.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "plugins/net-socket/wire.h"
#include "tests/unit/plugin_test_support.h"

namespace weft {
namespace {

// Every test in this program talks over lo only, whatever interfaces the machine has.
class LoopbackOnly : public ::testing::Environment {
 public:
  void SetUp() override { setenv("NCCL_SOCKET_IFNAME", "=lo", 1); }
};
const auto* const kLoopbackOnly = ::testing::AddGlobalTestEnvironment(new LoopbackOnly);

class SocketStranger : public test::PluginLogTest {
 protected:
  void SetUp() override {
    auto p = plugin::loadNetPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-socket.so", test::fakeOnlyOptions());
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    auto inst = plugin::initNet(*p, 7);
    ASSERT_TRUE(inst.isOk()) << inst.status().toString();
    net_ = std::move(*inst);
  }
  // A raw TCP connection to the listen port named in `handle`.
  int rawConnect(const char* handle) {
    socket::Handle h;
    std::memcpy(&h, handle, sizeof(h));
    int fd = ::socket(h.addr.sa.sa_family, SOCK_STREAM, 0);
    EXPECT_GE(fd, 0);
    socklen_t len = h.addr.sa.sa_family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    EXPECT_EQ(::connect(fd, &h.addr.sa, len), 0) << std::strerror(errno);
    return fd;
  }
  std::unique_ptr<plugin::NetInstance> net_;
};

TEST_F(SocketStranger, GarbageTruncatedAndSilentConnectionsDoNotDisturbARealOne) {
  expectWarn("rejected a connection from 127.0.0.1");
  plugin::NetApi& api = net_->api();
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_TRUE(api.listen(net_->ctx(), 0, handle, &listen).isOk());
  int garbage = rawConnect(handle);
  const char junk[64] = "GET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\nGET / HTTP/1.0\r\n\r\n";
  ASSERT_EQ(write(garbage, junk, sizeof(junk)), static_cast<ssize_t>(sizeof(junk)));
  int truncated = rawConnect(handle);
  ASSERT_EQ(write(truncated, junk, 10), 10);
  close(truncated);
  int silent = rawConnect(handle);

  void *send = nullptr, *recv = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  for (int i = 0; i < 100000 && (send == nullptr || recv == nullptr); ++i) {
    if (!send) { ASSERT_TRUE(api.connect(net_->ctx(), 0, handle, &send, &dh).isOk()); }
    if (!recv) { ASSERT_TRUE(api.accept(listen, &recv, &dh).isOk()); }
  }
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);
  char out[] = "the real peer", in[32] = {};
  void *sreq = nullptr, *rreq = nullptr;
  void* data = in;
  size_t cap = sizeof(in);
  int tag = 3, done = 0, size = 0;
  ASSERT_TRUE(api.irecv(recv, 1, &data, &cap, &tag, nullptr, nullptr, &rreq).isOk());
  ASSERT_TRUE(api.isend(send, out, sizeof(out), 3, nullptr, nullptr, &sreq).isOk());
  ASSERT_NE(sreq, nullptr);
  for (int i = 0; i < 100000 && !done; ++i) { ASSERT_TRUE(api.test(rreq, &done, &size).isOk()); }
  ASSERT_EQ(done, 1);
  EXPECT_STREQ(in, "the real peer");
  done = 0;
  for (int i = 0; i < 100000 && !done; ++i) { ASSERT_TRUE(api.test(sreq, &done, &size).isOk()); }

  // Later accept calls see the rest of the strangers, and never turn one into a comm.
  for (int i = 0; i < 100000 && logs_.warnings().size() < 2; ++i) {
    void* ghost = nullptr;
    ASSERT_TRUE(api.accept(listen, &ghost, &dh).isOk());
    ASSERT_EQ(ghost, nullptr);
  }
  // The garbage and the truncated hello were each rejected with a WARN naming the peer.
  auto warnings = logs_.warnings();
  EXPECT_EQ(warnings.size(), 2u);
  EXPECT_EQ(linesWith("not a weft socket hello").size(), 1u);
  EXPECT_EQ(linesWith("closed before its hello").size(), 1u);
  // The rejected stranger's socket was closed by the plugin (EOF, or a reset: it had unread data).
  char byte;
  EXPECT_LE(read(garbage, &byte, 1), 0);
  close(garbage);
  close(silent);
  EXPECT_TRUE(api.closeSend(send).isOk());
  EXPECT_TRUE(api.closeRecv(recv).isOk());
  EXPECT_TRUE(api.closeListen(listen).isOk());
}

TEST_F(SocketStranger, ConnectToAClosedPortIsAnErrorNotAHang) {
  expectWarn("Connection refused");
  plugin::NetApi& api = net_->api();
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_TRUE(api.listen(net_->ctx(), 0, handle, &listen).isOk());
  ASSERT_TRUE(api.closeListen(listen).isOk());  // nobody listens on that port any more
  void* send = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  Status s;
  for (int i = 0; i < 100000 && s.isOk() && send == nullptr; ++i) s = api.connect(net_->ctx(), 0, handle, &send, &dh);
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(send, nullptr);
  EXPECT_EQ(s.code(), Code::kRemoteError);
}

}  // namespace
}  // namespace weft
