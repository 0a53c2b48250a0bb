// Connection setup without blocking. listen() opens the bootstrap TCP socket and writes its
// address and a random token into the handle. connect() opens a QP, sends its description (with
// the FIFO the receiver will write) over TCP, waits for the acceptor's, moves the QP to RTS and
// sends one "ready" byte; it returns "not yet" (a null comm) until then. accept() does the
// mirror image per incoming connection and hands out the receive comm once "ready" arrived, so
// neither side writes to a QP that is not ready to receive. A stranger's connection (wrong
// token, garbage) is dropped with a WARN and does not disturb the others.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "plugins/net-ib/bootstrap.h"
#include "plugins/net-ib/comm.h"
#include "plugins/net-ib/config.h"
#include "plugins/net-ib/devices.h"

namespace weft::ib {

// One half-open connection's TCP exchange: our description out, the peer's in, a ready byte.
struct Exchange {
  Fd fd;
  std::string peer;
  uint8_t out[kQpInfoBytes] = {};
  uint8_t in[kQpInfoBytes] = {};
  size_t sent = 0, got = 0, readyMoved = 0;
  uint8_t ready = 1;
};

struct Connecting {
  std::unique_ptr<Endpoint> ep;
  std::unique_ptr<FifoEntry[]> fifo;
  MrPtr fifoMr;
  Exchange x;
  bool connected = false;  // the QP is in RTS; only the ready byte is left
};

// Advances connect() for the host's handle bytes: the first call starts it, the last one
// returns the comm.
weft_result_t connectStep(const Device& device, void* handleBytes, const Config& config, SendComm** comm);
// Frees an unfinished connect's state.
void abandonConnect(void* handleBytes);

class Listener {
 public:
  static weft_result_t open(const Device& device, const Config& config, void* handleBytes, Listener** out);
  ~Listener() { kind_ = Kind::kFreed; }
  Kind kind() const { return kind_; }
  weft_result_t acceptStep(RecvComm** comm);

 private:
  struct Incoming {
    Exchange x;
    std::unique_ptr<RecvComm> comm;  // made once the connector's description arrived
    std::unique_ptr<Endpoint> ep;
    bool answered = false;
  };
  Listener(const Device& d, const Config& c, Fd fd, uint64_t token) : device_(d), config_(c), fd_(std::move(fd)), token_(token) {}
  // Advances one connection; true when it is finished (handed out or dropped).
  bool advance(Incoming& in, RecvComm** comm);
  weft_result_t answer(Incoming& in);

  Kind kind_ = Kind::kListen;
  Device device_;
  Config config_;
  Fd fd_;
  uint64_t token_;
  std::vector<std::unique_ptr<Incoming>> incoming_;
};

}  // namespace weft::ib
