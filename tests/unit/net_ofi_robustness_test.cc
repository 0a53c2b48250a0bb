// The OFI plugin through weft's loader, on libfabric's tcp provider over loopback only:
// strangers writing to a listener (garbage, a hello with the wrong token or kind, an oversized
// message) are dropped with a WARN without disturbing a real connection made at the same time,
// and connecting to a listener that is gone is an error, not a hang.
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>

#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <vector>

#include "plugins/net-ofi/wire.h"
#include "tests/unit/plugin_test_support.h"

namespace weft {
namespace {

class LoopbackOnly : public ::testing::Environment {
 public:
  void SetUp() override {
    setenv("FI_PROVIDER", "tcp", 1);
    setenv("FI_TCP_IFACE", "lo", 1);
    setenv("WEFT_OFI_CONNECT_TIMEOUT", "2", 1);
  }
};
const auto* const kLoopbackOnly = ::testing::AddGlobalTestEnvironment(new LoopbackOnly);

// A bare libfabric endpoint on the same provider: the stranger.
class Stranger {
 public:
  Stranger() {
    fi_info* hints = fi_allocinfo();
    hints->caps = FI_TAGGED | FI_SEND | FI_RECV;
    hints->ep_attr->type = FI_EP_RDM;
    EXPECT_EQ(fi_getinfo(FI_VERSION(1, 9), nullptr, nullptr, 0, hints, &info_), 0);
    fi_freeinfo(hints);
    EXPECT_EQ(fi_fabric(info_->fabric_attr, &fabric_, nullptr), 0);
    EXPECT_EQ(fi_domain(fabric_, info_, &domain_, nullptr), 0);
    fi_cq_attr cq{};
    cq.format = FI_CQ_FORMAT_TAGGED;
    EXPECT_EQ(fi_cq_open(domain_, &cq, &cq_, nullptr), 0);
    fi_av_attr av{};
    EXPECT_EQ(fi_av_open(domain_, &av, &av_, nullptr), 0);
    EXPECT_EQ(fi_endpoint(domain_, info_, &ep_, nullptr), 0);
    EXPECT_EQ(fi_ep_bind(ep_, &cq_->fid, FI_TRANSMIT | FI_RECV), 0);
    EXPECT_EQ(fi_ep_bind(ep_, &av_->fid, 0), 0);
    EXPECT_EQ(fi_enable(ep_), 0);
  }
  ~Stranger() {
    fi_close(&ep_->fid);
    fi_close(&av_->fid);
    fi_close(&cq_->fid);
    fi_close(&domain_->fid);
    fi_close(&fabric_->fid);
    fi_freeinfo(info_);
  }
  // Posts `bytes` with `tag` to the listener named in `handle`; `bytes` must outlive the send.
  // The listener's provider takes the connection only while the plugin drives it: `pump` calls
  // accept() while the provider asks the stranger to wait.
  void post(const char* handle, const void* bytes, size_t len, uint64_t tag, const std::function<void()>& pump) {
    ofi::Handle h;
    std::memcpy(&h, handle, sizeof(h));
    fi_addr_t dest = FI_ADDR_UNSPEC;
    ASSERT_EQ(fi_av_insert(av_, h.addr, 1, &dest, 0, nullptr), 1);
    contexts_.emplace_back();
    ssize_t rc;
    for (int i = 0; i < 1000000 && (rc = fi_tsend(ep_, bytes, len, nullptr, dest, tag, &contexts_.back())) == -FI_EAGAIN; ++i) {
      poll();
      pump();
    }
    ASSERT_EQ(rc, 0);
    ++posted_;
  }
  // Reads completions; true once every posted message has left.
  bool poll() {
    fi_cq_tagged_entry e;
    while (fi_cq_read(cq_, &e, 1) == 1) ++sent_;
    return sent_ == posted_;
  }

 private:
  std::deque<fi_context2> contexts_;  // stable addresses while sends are in flight
  int posted_ = 0, sent_ = 0;
  fi_info* info_ = nullptr;
  fid_fabric* fabric_ = nullptr;
  fid_domain* domain_ = nullptr;
  fid_cq* cq_ = nullptr;
  fid_av* av_ = nullptr;
  fid_ep* ep_ = nullptr;
};

// The tcp provider's tags have 64 bits: control messages carry the top one.
constexpr uint64_t kConnectTag = (uint64_t{1} << 63) | ofi::kConnectTag;

class OfiStranger : public test::PluginLogTest {
 protected:
  void SetUp() override {
    auto p = plugin::loadNetPlugin(std::string(WEFT_PLUGIN_OUTPUT_DIR) + "/libweft-net-ofi.so", test::fakeOnlyOptions());
    ASSERT_TRUE(p.isOk()) << p.status().toString();
    auto inst = plugin::initNet(*p, 7);
    ASSERT_TRUE(inst.isOk()) << inst.status().toString();
    net_ = std::move(*inst);
  }
  std::unique_ptr<plugin::NetInstance> net_;
};

ofi::Hello hello(ofi::HelloKind kind, uint64_t token) {
  ofi::Hello h{};
  h.magic = ofi::kHelloMagic;
  h.version = ofi::kWireVersion;
  h.kind = kind;
  h.token = token;
  h.addrLen = 16;
  return h;
}

TEST_F(OfiStranger, GarbageWrongTokensAndOversizedRequestsDoNotDisturbARealConnection) {
  expectWarn("rejected a connection request");
  plugin::NetApi& api = net_->api();
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_TRUE(api.listen(net_->ctx(), 0, handle, &listen).isOk());
  uint64_t token = reinterpret_cast<ofi::Handle*>(handle)->token;
  weft_net_device_handle_v11_t* dh = nullptr;
  auto pump = [&] {
    void* ghost = nullptr;
    ASSERT_TRUE(api.accept(listen, &ghost, &dh).isOk());
    ASSERT_EQ(ghost, nullptr);  // a stranger never becomes a comm
  };
  Stranger stranger;
  const char junk[10] = "GET / HTT";
  stranger.post(handle, junk, sizeof(junk), kConnectTag, pump);
  ofi::Hello wrongToken = hello(ofi::HelloKind::kConnect, token + 1);
  stranger.post(handle, &wrongToken, sizeof(wrongToken), kConnectTag, pump);
  ofi::Hello wrongKind = hello(ofi::HelloKind::kAccept, token);
  stranger.post(handle, &wrongKind, sizeof(wrongKind), kConnectTag, pump);
  std::vector<char> oversized(sizeof(ofi::Hello) + 100, 'x');
  stranger.post(handle, oversized.data(), oversized.size(), kConnectTag, pump);
  bool left = false;
  for (int i = 0; i < 1000000 && (!left || logs_.warnings().size() < 4); ++i) {
    pump();
    left = stranger.poll();
  }
  ASSERT_TRUE(left) << "the stranger's messages never left";
  EXPECT_EQ(logs_.warnings().size(), 4u);
  EXPECT_EQ(linesWith("-byte message is not a weft hello").size(), 1u);
  EXPECT_EQ(linesWith("wrong token").size(), 1u);
  EXPECT_EQ(linesWith("unexpected hello kind").size(), 1u);
  EXPECT_EQ(linesWith("fi_cq_readerr").size(), 1u);  // truncated: larger than any hello

  // A real connection through the same listener still works.
  void *send = nullptr, *recv = nullptr;
  for (int i = 0; i < 1000000 && (send == nullptr || recv == nullptr); ++i) {
    if (!send) { ASSERT_TRUE(api.connect(net_->ctx(), 0, handle, &send, &dh).isOk()); }
    if (!recv) { ASSERT_TRUE(api.accept(listen, &recv, &dh).isOk()); }
  }
  ASSERT_NE(send, nullptr);
  ASSERT_NE(recv, nullptr);
  char out[] = "the real peer", in[32] = {};
  void *sreq = nullptr, *rreq = nullptr, *data = in;
  size_t cap = sizeof(in);
  int tag = 3, done = 0, size = 0;
  ASSERT_TRUE(api.irecv(recv, 1, &data, &cap, &tag, nullptr, nullptr, &rreq).isOk());
  ASSERT_TRUE(api.isend(send, out, sizeof(out), 3, nullptr, nullptr, &sreq).isOk());
  ASSERT_TRUE(sreq != nullptr && rreq != nullptr);
  for (int i = 0; i < 1000000 && !done; ++i) { ASSERT_TRUE(api.test(rreq, &done, &size).isOk()); }
  ASSERT_EQ(done, 1);
  EXPECT_STREQ(in, "the real peer");
  done = 0;
  for (int i = 0; i < 1000000 && !done; ++i) { ASSERT_TRUE(api.test(sreq, &done, &size).isOk()); }

  EXPECT_TRUE(api.closeSend(send).isOk());
  EXPECT_TRUE(api.closeRecv(recv).isOk());
  EXPECT_TRUE(api.closeListen(listen).isOk());
}

TEST_F(OfiStranger, ConnectToAClosedListenerIsAnErrorNotAHang) {
  expectWarn("did not take the connection request");
  // WEFT_OFI_CONNECT_TIMEOUT=2 (set for this program) bounds the wait.
  plugin::NetApi& api = net_->api();
  char handle[WEFT_NET_HANDLE_MAXSIZE] = {};
  void* listen = nullptr;
  ASSERT_TRUE(api.listen(net_->ctx(), 0, handle, &listen).isOk());
  ASSERT_TRUE(api.closeListen(listen).isOk());  // nobody listens at that address any more
  void* send = nullptr;
  weft_net_device_handle_v11_t* dh = nullptr;
  Status s;
  while (s.isOk() && send == nullptr) s = api.connect(net_->ctx(), 0, handle, &send, &dh);
  EXPECT_FALSE(s.isOk());
  EXPECT_EQ(send, nullptr);
  EXPECT_EQ(s.code(), Code::kRemoteError);
}

}  // namespace
}  // namespace weft
