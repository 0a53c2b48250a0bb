// The net transport: one connection of the selected net plugin per channel, peer and direction,
// its NCCL_STEPS host buffers registered once. The plugin's own calls (listen/connect/accept,
// isend/irecv/test) are non-blocking; these classes only keep NCCL's slot accounting over them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/base/status.h"
#include "core/plugin/net_loader.h"
#include "core/runtime/transport.h"

namespace weft::runtime {

// Host memory for the slots, page aligned, freed on destruction.
class SlotBuffer {
 public:
  explicit SlotBuffer(size_t bytes);
  ~SlotBuffer();
  SlotBuffer(const SlotBuffer&) = delete;
  SlotBuffer& operator=(const SlotBuffer&) = delete;
  char* data() const { return data_; }

 private:
  char* data_ = nullptr;
};

// A message moved straight from or to user memory: registered once, up to kSteps steps in flight.
struct Direct {
  char* data = nullptr;
  size_t bytes = 0;
  void* mhandle = nullptr;
  size_t posted = 0;  // bytes handed to isend/irecv
  uint64_t issued = 0, done = 0;
  std::array<void*, kSteps> requests{};
  std::array<size_t, kSteps> sizes{};
};

// Messages from this size on move without the staging copy (registering user memory costs more
// than copying small ones).
inline constexpr size_t kDirectMinBytes = size_t{1} << 20;

// The caller's buffers registered on one plugin comm for a collective (sendFrom, postInto),
// until it ends.
class UserRegions {
 public:
  // The registration of [base, base + bytes), made at its first use; null when the plugin
  // refuses it.
  void* find(plugin::NetInstance& net, void* comm, const void* base, size_t bytes);
  void clear(plugin::NetInstance& net, void* comm);

 private:
  struct Region {
    const void* base;
    size_t bytes;
    void* mhandle;
  };
  std::vector<Region> regions_;
};

class NetRecv : public RecvConnection {
 public:
  // Listens on plugin device `dev`; handle() is what the sender needs.
  static Result<std::unique_ptr<NetRecv>> create(plugin::NetInstance& net, int dev, size_t stepSize, int peerRank);
  ~NetRecv() override;
  const std::array<char, WEFT_NET_HANDLE_MAXSIZE>& handle() const { return handle_; }
  // Accepts (non-blocking); true once connected and the buffers are registered.
  Result<bool> finishSetup();

  size_t stepSize() const override { return stepSize_; }
  Result<const void*> peek(size_t* bytes, bool* last, int want) override;
  bool carriesLast() const override { return false; }
  Status release() override;
  void markFailed(int) override {}
  Result<bool> beginDirect(void* data, size_t bytes) override;
  Result<bool> progressDirect(bool* progressed) override;
  bool postsInto() const override { return true; }
  Result<bool> postInto(void* data, size_t bytes, const void* base, size_t baseBytes) override;
  void endInto() override;

 private:
  // Posts the next receive into `data` (registered as `mh`), `size` bytes at most.
  Result<bool> postOne(char* data, size_t size, void* mh);

  plugin::NetInstance* net_ = nullptr;
  size_t stepSize_ = 0;
  int peerRank_ = -1;
  Direct direct_;
  UserRegions user_;
  bool driven_ = false;  // between postInto and endInto: the caller posts
  // Plugins read the handle as their own struct: keep it aligned as NCCL's are.
  alignas(16) std::array<char, WEFT_NET_HANDLE_MAXSIZE> handle_{};
  void* listenComm_ = nullptr;
  void* recvComm_ = nullptr;
  void* mhandle_ = nullptr;
  std::unique_ptr<SlotBuffer> slots_;
  std::array<void*, kSteps> requests_{};
  std::array<size_t, kSteps> sizes_{};
  std::array<char*, kSteps> data_{};  // where each posted receive lands: its slot or the caller's
  std::array<bool, kSteps> arrived_{};
  uint64_t posted_ = 0;  // irecv issued
  uint64_t head_ = 0;    // consumed
};

class NetSend : public SendConnection {
 public:
  static Result<std::unique_ptr<NetSend>> create(plugin::NetInstance& net, int dev, const char* handle,
                                                 size_t stepSize, int peerRank);
  ~NetSend() override;
  // Connects (non-blocking); true once connected and the buffers are registered.
  Result<bool> finishSetup();

  size_t stepSize() const override { return stepSize_; }
  Result<void*> acquire() override;
  Status post(size_t bytes, bool last) override;
  Result<bool> drain() override;
  void markFailed(int) override {}
  Result<bool> beginDirect(const void* data, size_t bytes) override;
  Result<bool> progressDirect(bool* progressed) override;
  Result<bool> sendFrom(const void* data, size_t bytes, const void* base, size_t baseBytes) override;
  void endSendFrom() override;

 private:
  Direct direct_;
  UserRegions user_;
  plugin::NetInstance* net_ = nullptr;
  int dev_ = 0;
  size_t stepSize_ = 0;
  int peerRank_ = -1;
  alignas(16) std::array<char, WEFT_NET_HANDLE_MAXSIZE> handle_{};
  void* sendComm_ = nullptr;
  void* mhandle_ = nullptr;
  std::unique_ptr<SlotBuffer> slots_;
  std::array<void*, kSteps> requests_{};
  std::array<size_t, kSteps> sizes_{};
  std::array<const char*, kSteps> data_{};  // where each posted step's bytes are: its slot or the caller's
  std::array<void*, kSteps> mhandles_{};    // and their registration
  uint64_t posted_ = 0;  // filled by the caller
  uint64_t issued_ = 0;  // isend accepted by the plugin
  uint64_t done_ = 0;    // completed
};

}  // namespace weft::runtime
