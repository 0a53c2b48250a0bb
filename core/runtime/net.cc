#include "core/runtime/net.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "core/base/strings.h"

namespace weft::runtime {

SlotBuffer::SlotBuffer(size_t bytes) {
  void* p = nullptr;
  if (posix_memalign(&p, 4096, bytes) != 0) throw std::bad_alloc();
  data_ = static_cast<char*>(p);
}

SlotBuffer::~SlotBuffer() { std::free(data_); }

// ---- receiver ---------------------------------------------------------------------------------

Result<std::unique_ptr<NetRecv>> NetRecv::create(plugin::NetInstance& net, int dev, size_t stepSize, int peerRank) {
  std::unique_ptr<NetRecv> r(new NetRecv());
  r->net_ = &net;
  r->stepSize_ = stepSize;
  r->peerRank_ = peerRank;
  WEFT_TRY_CTX(net.api().listen(net.ctx(), dev, r->handle_.data(), &r->listenComm_),
               strprintf("NET/%s listen on device %d", net.api().name(), dev));
  return r;
}

Result<bool> NetRecv::finishSetup() {
  if (recvComm_ != nullptr) return true;
  weft_net_device_handle_v11_t* devComm = nullptr;
  WEFT_TRY_CTX(net_->api().accept(listenComm_, &recvComm_, &devComm),
               strprintf("NET/%s accept from rank %d", net_->api().name(), peerRank_));
  if (recvComm_ == nullptr) return false;
  slots_ = std::make_unique<SlotBuffer>(kSteps * stepSize_);
  WEFT_TRY_CTX(net_->api().regMr(recvComm_, slots_->data(), kSteps * stepSize_, WEFT_PTR_HOST, &mhandle_),
               strprintf("NET/%s regMr of the receive buffers", net_->api().name()));
  (void)net_->api().closeListen(listenComm_);
  listenComm_ = nullptr;
  return true;
}

NetRecv::~NetRecv() {
  plugin::NetApi& api = net_->api();
  user_.clear(*net_, recvComm_);
  if (mhandle_ != nullptr) (void)api.deregMr(recvComm_, mhandle_);
  if (recvComm_ != nullptr) (void)api.closeRecv(recvComm_);
  if (listenComm_ != nullptr) (void)api.closeListen(listenComm_);
}

Result<bool> NetRecv::postOne(char* data, size_t size, void* mh) {
  plugin::NetApi& api = net_->api();
  size_t slot = posted_ % kSteps;
  void* ptr = data;
  int tag = 0;
  void* req = nullptr;
  void* ph = nullptr;
  WEFT_TRY_CTX(api.irecv(recvComm_, 1, &ptr, &size, &tag, &mh, &ph, &req),
               strprintf("NET/%s irecv from rank %d", api.name(), peerRank_));
  if (req == nullptr) return false;  // the plugin is busy: try again later
  requests_[slot] = req;
  data_[slot] = data;
  arrived_[slot] = false;
  ++posted_;
  return true;
}

Result<bool> NetRecv::postInto(void* data, size_t bytes, const void* base, size_t baseBytes) {
  if (posted_ - head_ >= kSteps || recvComm_ == nullptr) return false;
  driven_ = true;
  size_t slot = posted_ % kSteps;
  if (data != nullptr) {
    if (void* mh = user_.find(*net_, recvComm_, base, baseBytes); mh != nullptr)
      return postOne(static_cast<char*>(data), bytes, mh);
    // Not registered: the slot, and the caller copies out of it as usual.
  }
  return postOne(slots_->data() + slot * stepSize_, stepSize_, mhandle_);
}

void NetRecv::endInto() {
  if (posted_ != head_) return;  // receives still posted: keep the mode and the registrations
  driven_ = false;
  user_.clear(*net_, recvComm_);
}

Result<const void*> NetRecv::peek(size_t* bytes, bool* last, int want) {
  plugin::NetApi& api = net_->api();
  uint64_t ahead = static_cast<uint64_t>(std::min(want, kSteps));
  while (!driven_ && posted_ < head_ + ahead) {
    size_t slot = posted_ % kSteps;
    WEFT_ASSIGN_OR_RETURN(bool posted, postOne(slots_->data() + slot * stepSize_, stepSize_, mhandle_));
    if (!posted) break;
  }
  if (head_ >= posted_) return static_cast<const void*>(nullptr);
  size_t slot = head_ % kSteps;
  if (!arrived_[slot]) {
    int done = 0;
    int size = 0;
    WEFT_TRY_CTX(api.test(requests_[slot], &done, &size),
                 strprintf("NET/%s receiving from rank %d", api.name(), peerRank_));
    if (!done) return static_cast<const void*>(nullptr);
    arrived_[slot] = true;
    sizes_[slot] = static_cast<size_t>(size);
  }
  *bytes = sizes_[slot];
  *last = false;
  return static_cast<const void*>(data_[slot]);
}

Status NetRecv::release() {
  ++head_;
  return Status::ok();
}

// ---- sender -----------------------------------------------------------------------------------

Result<std::unique_ptr<NetSend>> NetSend::create(plugin::NetInstance& net, int dev, const char* handle, size_t stepSize,
                                                 int peerRank) {
  std::unique_ptr<NetSend> s(new NetSend());
  s->net_ = &net;
  s->dev_ = dev;
  s->stepSize_ = stepSize;
  s->peerRank_ = peerRank;
  std::memcpy(s->handle_.data(), handle, s->handle_.size());
  return s;
}

Result<bool> NetSend::finishSetup() {
  if (sendComm_ != nullptr) return true;
  weft_net_device_handle_v11_t* devComm = nullptr;
  WEFT_TRY_CTX(net_->api().connect(net_->ctx(), dev_, handle_.data(), &sendComm_, &devComm),
               strprintf("NET/%s connect to rank %d", net_->api().name(), peerRank_));
  if (sendComm_ == nullptr) return false;
  slots_ = std::make_unique<SlotBuffer>(kSteps * stepSize_);
  WEFT_TRY_CTX(net_->api().regMr(sendComm_, slots_->data(), kSteps * stepSize_, WEFT_PTR_HOST, &mhandle_),
               strprintf("NET/%s regMr of the send buffers", net_->api().name()));
  return true;
}

NetSend::~NetSend() {
  plugin::NetApi& api = net_->api();
  user_.clear(*net_, sendComm_);
  if (mhandle_ != nullptr) (void)api.deregMr(sendComm_, mhandle_);
  if (sendComm_ != nullptr) (void)api.closeSend(sendComm_);
}

Result<void*> NetSend::acquire() {
  WEFT_ASSIGN_OR_RETURN(bool idle, drain());
  (void)idle;
  if (posted_ - done_ >= kSteps) return static_cast<void*>(nullptr);
  return static_cast<void*>(slots_->data() + (posted_ % kSteps) * stepSize_);
}

Status NetSend::post(size_t bytes, bool /*last*/) {
  size_t slot = posted_ % kSteps;
  sizes_[slot] = bytes;
  data_[slot] = slots_->data() + slot * stepSize_;
  mhandles_[slot] = mhandle_;
  ++posted_;
  WEFT_ASSIGN_OR_RETURN(bool idle, drain());
  (void)idle;
  return Status::ok();
}

Result<bool> NetSend::drain() {
  plugin::NetApi& api = net_->api();
  while (issued_ < posted_) {
    size_t slot = issued_ % kSteps;
    void* req = nullptr;
    WEFT_TRY_CTX(api.isend(sendComm_, const_cast<char*>(data_[slot]), sizes_[slot], 0, mhandles_[slot], nullptr, &req),
                 strprintf("NET/%s isend to rank %d", api.name(), peerRank_));
    if (req == nullptr) break;
    requests_[slot] = req;
    ++issued_;
  }
  while (done_ < issued_) {
    int done = 0;
    int size = 0;
    WEFT_TRY_CTX(api.test(requests_[done_ % kSteps], &done, &size),
                 strprintf("NET/%s sending to rank %d", api.name(), peerRank_));
    if (!done) break;
    ++done_;
  }
  return done_ == posted_;
}

void* UserRegions::find(plugin::NetInstance& net, void* comm, const void* base, size_t bytes) {
  for (const Region& r : regions_)
    if (r.base == base && r.bytes == bytes) return r.mhandle;
  void* mh = nullptr;
  if (!net.api().regMr(comm, const_cast<void*>(base), bytes, WEFT_PTR_HOST, &mh).isOk() || mh == nullptr) return nullptr;
  regions_.push_back({base, bytes, mh});
  return mh;
}

void UserRegions::clear(plugin::NetInstance& net, void* comm) {
  for (const Region& r : regions_) (void)net.api().deregMr(comm, r.mhandle);
  regions_.clear();
}

Result<bool> NetSend::sendFrom(const void* data, size_t bytes, const void* base, size_t baseBytes) {
  if (posted_ - done_ >= kSteps || sendComm_ == nullptr) return false;
  // Not registered (the plugin takes no host memory of the caller's): the caller copies instead.
  void* mh = user_.find(*net_, sendComm_, base, baseBytes);
  if (mh == nullptr) return false;
  size_t slot = posted_ % kSteps;
  sizes_[slot] = bytes;
  data_[slot] = static_cast<const char*>(data);
  mhandles_[slot] = mh;
  ++posted_;
  WEFT_ASSIGN_OR_RETURN(bool idle, drain());
  (void)idle;
  return true;
}

void NetSend::endSendFrom() {
  if (done_ == posted_) user_.clear(*net_, sendComm_);  // otherwise kept until the next call or the end
}

// ---- zero-copy messages -----------------------------------------------------------------------

namespace {

// Registers `data` on `comm` for one message; false (and no error) when the plugin will not.
Result<bool> registerDirect(plugin::NetInstance& net, void* comm, Direct& d, void* data, size_t bytes) {
  if (bytes < kDirectMinBytes || comm == nullptr) return false;
  void* mh = nullptr;
  if (!net.api().regMr(comm, data, bytes, WEFT_PTR_HOST, &mh).isOk()) return false;
  d = Direct{};
  d.data = static_cast<char*>(data);
  d.bytes = bytes;
  d.mhandle = mh;
  return true;
}

}  // namespace

Result<bool> NetSend::beginDirect(const void* data, size_t bytes) {
  WEFT_ASSIGN_OR_RETURN(bool idle, drain());
  if (!idle) return false;  // staged steps still in flight: keep their order
  return registerDirect(*net_, sendComm_, direct_, const_cast<void*>(data), bytes);
}

namespace {

// Drives a message moved straight from or to user memory: posts its steps while fewer than
// kSteps are in flight (`post` returns the plugin's request, or nullptr when it is busy), tests
// them in order (`check` sees each finished step's size against the posted one), and gives the
// registration back once every step is done.
template <typename Post, typename Check>
Result<bool> driveDirect(plugin::NetApi& api, void* comm, Direct& d, size_t stepSize, const std::string& what,
                         Post&& post, Check&& check, bool* progressed) {
  while (d.posted < d.bytes && d.issued - d.done < kSteps) {
    size_t n = std::min(stepSize, d.bytes - d.posted);
    WEFT_ASSIGN_OR_RETURN(void* req, post(d.data + d.posted, n));
    if (req == nullptr) break;
    d.requests[d.issued % kSteps] = req;
    d.sizes[d.issued % kSteps] = n;
    d.posted += n;
    ++d.issued;
    *progressed = true;
  }
  while (d.done < d.issued) {
    int done = 0;
    int size = 0;
    WEFT_TRY_CTX(api.test(d.requests[d.done % kSteps], &done, &size), what);
    if (!done) break;
    WEFT_TRY(check(static_cast<size_t>(size), d.sizes[d.done % kSteps]));
    ++d.done;
    *progressed = true;
  }
  if (d.posted < d.bytes || d.done < d.issued) return false;
  (void)api.deregMr(comm, d.mhandle);
  d = Direct{};
  return true;
}

}  // namespace

Result<bool> NetSend::progressDirect(bool* progressed) {
  plugin::NetApi& api = net_->api();
  auto post = [&](char* data, size_t n) -> Result<void*> {
    void* req = nullptr;
    WEFT_TRY_CTX(api.isend(sendComm_, data, n, 0, direct_.mhandle, nullptr, &req),
                 strprintf("NET/%s isend to rank %d", api.name(), peerRank_));
    return req;
  };
  auto check = [](size_t, size_t) { return Status::ok(); };
  return driveDirect(api, sendComm_, direct_, stepSize_, strprintf("NET/%s sending to rank %d", api.name(), peerRank_),
                     post, check, progressed);
}

Result<bool> NetRecv::beginDirect(void* data, size_t bytes) {
  if (posted_ != head_) return false;  // receives of staged steps are still posted
  return registerDirect(*net_, recvComm_, direct_, data, bytes);
}

Result<bool> NetRecv::progressDirect(bool* progressed) {
  plugin::NetApi& api = net_->api();
  auto post = [&](char* data, size_t n) -> Result<void*> {
    void* ptr = data;
    size_t size = n;
    int tag = 0;
    void* mh = direct_.mhandle;
    void* ph = nullptr;
    void* req = nullptr;
    WEFT_TRY_CTX(api.irecv(recvComm_, 1, &ptr, &size, &tag, &mh, &ph, &req),
                 strprintf("NET/%s irecv from rank %d", api.name(), peerRank_));
    return req;
  };
  auto check = [&](size_t got, size_t expected) -> Status {
    if (got == expected) return Status::ok();
    return invalidUsage(strprintf("receiving %zu bytes from rank %d: got a step of %zu bytes where %zu were expected "
                                  "(the sender's count differs from the receiver's)",
                                  direct_.bytes, peerRank_, got, expected));
  };
  return driveDirect(api, recvComm_, direct_, stepSize_,
                     strprintf("NET/%s receiving from rank %d", api.name(), peerRank_), post, check, progressed);
}

}  // namespace weft::runtime
