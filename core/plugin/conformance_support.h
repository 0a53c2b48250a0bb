// What the conformance checks share: a session on one device, connection and transfer helpers
// that loop on the non-blocking calls against a deadline, and failure by exception (checks run
// in their own process, so an exception only ends the check).
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

// Thrown by a check to fail (or skip) with a reason.
struct CheckFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct CheckSkipped : std::runtime_error {
  using std::runtime_error::runtime_error;
};
void require(bool condition, const std::string& reason);
void requireOk(const Status& s, const std::string& what);

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

  // listen + connect/accept looped until both ends exist.
  Pair connect();
  void close(Pair& p);
  // Posts a send, retrying while the plugin answers "not now".
  void* postSend(void* comm, void* data, size_t size, int tag, void* mhandle);
  void* postRecv(void* comm, int n, void** data, size_t* sizes, int* tags, void** mhandles);
  // Calls test until done; returns the sizes reported.
  std::vector<int> wait(void* request, int n, const char* what);
  // Tests every request in turn, in the order given, until all are done, as a host's progress
  // thread does (a plugin may move a send's bytes only when that send is tested).
  struct Pending {
    void* request;
    int n;
    const char* what;
    std::vector<int> sizes = {};
    bool done = false;
  };
  void waitAll(std::vector<Pending>& requests);
  // One message from send to recv, both driven from this thread; checks every byte.
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

}  // namespace weft::plugin::conformance
