// What the conformance checks share: a session on one device, connection and transfer helpers
// that loop on the non-blocking calls against a deadline, registered buffers, NCCL's way of
// testing requests, and failure by exception (checks run in their own process, so an exception
// only ends the check).
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/plugin/conformance.h"
#include "core/plugin/net_loader.h"

namespace weft::plugin::conformance {

// What NCCL 2.28 does when a plugin call fails the way a check saw it fail; appended to the
// failure so a vendor reads the consequence, not only the symptom.
namespace nccl {
inline constexpr const char* kInitFails =
    "NCCL: 'Failed to initialize NET plugin', then it falls back to its internal IB, then Socket";
inline constexpr const char* kSetupFails = "NCCL: the connection cannot be set up and communicator init fails";
inline constexpr const char* kOpFails =
    "NCCL: its proxy thread returns the error and the communicator fails (ncclCommGetAsyncError)";
inline constexpr const char* kHangs = "NCCL: its proxy thread would wait forever, and the communicator hang";
inline constexpr const char* kWrongData = "NCCL: the data would be wrong, silently";
}  // namespace nccl

// Thrown by a check to fail (or skip) with a reason.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CheckSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Fails with "<reason> (<consequence>)" when `consequence` is given.
void require(bool condition, const std::string& reason, const char* consequence = nullptr);
void requireOk(const Status& s, const std::string& what, const char* consequence = nullptr);

// The check's mode, set by the runner in the check's process.
void setStrict(bool strict);
bool strictMode();
// A strict expectation: fails with --strict; otherwise the reason becomes a note of the result.
// `ncclDoes` says what NCCL does with the plugin's answer instead.
void requireStrict(bool condition, const std::string& reason, const std::string& ncclDoes);
// The notes gathered so far in this check's process (the runner reads them at the end).
std::vector<std::string> takeNotes();

// Allows WARN lines containing `fragment` for the rest of the check.
void expectWarn(const std::string& fragment);

class Deadline {
 public:
  explicit Deadline(double seconds)
      : end_(std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                     std::chrono::duration<double>(seconds))) {}
  bool expired() const { return std::chrono::steady_clock::now() > end_; }

 private:
  std::chrono::steady_clock::time_point end_;
};

struct Pair {
  void* listen = nullptr;
  void* send = nullptr;
  void* recv = nullptr;
};

// A request and what the check expects of it, as NCCL's proxy tracks one step.
struct Pending {
  void* request;
  int n;
  const char* what;
  std::vector<int> sizes = {};
  bool done = false;
};

class Session {
 public:
  Session(std::shared_ptr<LoadedNet> plugin, const Options& options);
  NetApi& api() const { return instance_->api(); }
  void* ctx() const { return instance_->ctx(); }
  int dev() const { return options_.dev; }
  int deviceCount() const { return instance_->deviceCount(); }
  const NetProperties& props() const { return props_; }
  const Options& options() const { return options_; }
  Deadline deadline() const { return Deadline(options_.timeoutSeconds * 0.9); }
  // How many requests NCCL keeps in flight on one comm: NCCL_STEPS (8), which v6's limit allows.
  static constexpr int kNcclSteps = 8;

  // NCCL's setup of one connection: listen, then connect and accept looped until both ends
  // exist, then the listen comm closed as NCCL closes it; `keepListen` leaves it open.
  Pair connect(bool keepListen = false);
  void close(Pair& p);
  // regMr of host memory on `comm`, as NCCL registers every buffer it sends from or receives into.
  void* regMr(void* comm, void* data, size_t size, const char* what);
  void deregMr(void* comm, void* mhandle, const char* what);
  // Posts a send, retrying while the plugin answers "not now".
  void* postSend(void* comm, void* data, size_t size, int tag, void* mhandle);
  void* postRecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles);
  // Calls test until done; returns the sizes reported.
  std::vector<int> wait(void* request, int n, const char* what);
  // Tests the requests of each comm oldest first, one comm after the other, as NCCL's proxy
  // does (a request is tested only once every older one of its comm completed).
  void waitInOrder(std::vector<std::vector<Pending>>& perComm);
  // Tests every request in turn, in the order given, whatever completed before (strict extras).
  void waitAll(std::vector<Pending>& requests);
  // One message from send to recv, both driven from this thread, with registered buffers;
  // checks every byte.
  void transfer(Pair& p, size_t size, int tag);

 private:
  std::unique_ptr<NetInstance> instance_;
  Options options_;
  NetProperties props_;
};

// Deterministic bytes for message `seed`, so the receiver can check each one.
void fillPattern(char* data, size_t size, uint64_t seed);
// Index of the first wrong byte, or -1.
long long firstMismatch(const char* data, size_t size, uint64_t seed);
std::string humanBytes(size_t n);

// A buffer from mmap: large ones without touching the heap, freed on destruction.
class Buffer {
 public:
  explicit Buffer(size_t size);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  char* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  char* data_;
  size_t size_;
};

// A buffer registered on one comm for the check's lifetime: deregistered on destruction (a
// failure there is ignored: the check already failed or release() reported it).
class RegisteredBuffer {
 public:
  RegisteredBuffer(Session& s, void* comm, size_t size, const char* what);
  ~RegisteredBuffer();
  RegisteredBuffer(const RegisteredBuffer&) = delete;
  RegisteredBuffer& operator=(const RegisteredBuffer&) = delete;
  char* data() const { return buffer_.data(); }
  size_t size() const { return buffer_.size(); }
  void* mhandle() const { return mhandle_; }
  // deregMr now, failing the check if the plugin refuses.
  void release();

 private:
  Session& session_;
  void* comm_;
  Buffer buffer_;
  void* mhandle_ = nullptr;
  bool registered_ = false;
  const char* what_;
};

}  // namespace weft::plugin::conformance
