// Connection setup without blocking: listen() opens a port, connect() and accept() each make
// what progress they can and return "not yet" (a null comm) until all of a comm's sockets are
// connected and have said hello. A connection without the listener's token, or with garbage
// instead of a hello, is closed with a WARN and does not disturb the others.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "plugins/net-socket/comm.h"
#include "plugins/net-socket/config.h"
#include "plugins/common/fd.h"
#include "plugins/net-socket/interfaces.h"
#include "plugins/net-socket/wire.h"

namespace weft::socket {

using netplugin::Fd;

struct Connecting {
  uint64_t connId;
  int nSocks, nThreads;
  std::string peer;
  std::vector<Fd> fds;         // [0] control, then data sockets
  std::vector<Hello> hellos;
  std::vector<size_t> sent;    // hello bytes written per socket
};

// Advances connect() for `handle`: the first call starts it, the last one returns the comm.
weft_result_t connectStep(Handle* handle, const Config& config, SendComm** comm);
// Frees an unfinished connect's state (a handle the host gives up on).
void abandonConnect(Handle* handle);

class Listener {
 public:
  static weft_result_t open(const Interface& dev, Handle* handle, Listener** out);
  weft_result_t acceptStep(RecvComm** comm);
  Kind kind() const { return kind_; }
  ~Listener() { kind_ = Kind::kFreed; }

 private:
  struct Incoming {  // an accepted TCP connection that has not finished its hello
    Fd fd;
    Hello hello{};
    size_t got = 0;
    std::string peer;
  };
  struct Group {  // the sockets of one connecting comm, by index
    std::vector<Fd> fds;
    int arrived = 0;
    uint32_t nThreads = 0;
    std::string peer;
  };
  Listener(Fd fd, uint64_t token) : fd_(std::move(fd)), token_(token) {}
  void acceptPending();
  // Reads hellos; a complete valid one moves its socket into its group.
  void readHellos();
  bool validHello(const Incoming& in) const;

  Kind kind_ = Kind::kListen;
  Fd fd_;
  uint64_t token_;
  std::vector<Incoming> incoming_;
  std::map<uint64_t, Group> groups_;
};

}  // namespace weft::socket
