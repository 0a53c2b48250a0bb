#include "core/runtime/shm.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "core/base/strings.h"

namespace weft::runtime {

namespace {

constexpr size_t kCtrlBytes = 4096;  // the control page before the slots
constexpr uint32_t kLastFlag = uint32_t{1} << 31;  // steps are < 2 GiB (NCCL_BUFFSIZE <= 1 GiB)

constexpr uint32_t kFromFlag = uint32_t{1} << 30;  // the step is in the sender's memory (postFrom)
constexpr size_t kInlineBytes = 48;  // a step this small travels in its slot's header line

// Smallest step worth a system call (process_vm_readv: about a microsecond before it copies, plus
// the sender's wait for the receiver to have read it). On the shared 2-vCPU VM 16 KiB steps won
// with 2 ranks (2-rank allgather of 32 KiB: 2.5 against 3.2 us) but lost with 4 ranks on the 2
// CPUs (64 KiB: 23 against 15 us), 32 KiB steps won or tied in both.
constexpr size_t kFromMinBytes = size_t{32} << 10;

// What the receiver reads in the sender's memory to know that process_vm_readv reaches it.
constexpr uint64_t kCmaCanaryValue = 0x77656674636d6121ull;  // "weftcma!"
const volatile uint64_t gCmaCanary = kCmaCanaryValue;

enum : int32_t { kCmaUnknown = 0, kCmaYes = 1, kCmaNo = 2 };

constexpr size_t kSignatureHistory = 8;

// A slot's header: the step's number and size, and the bytes of a small step, in one cache line,
// so a small step costs the receiver one line (as NCCL's LL protocol puts flag and data together).
struct alignas(64) SlotHeader {
  std::atomic<uint64_t> seq;  // 1 + the step's index once it is published (0: none yet)
  uint32_t size;              // bytes | kLastFlag
  uint32_t tag;               // signatureTag of the sender's collective (0: none)
  unsigned char data[kInlineBytes];  // the step's bytes when size <= kInlineBytes
};
static_assert(sizeof(SlotHeader) == 64);

// The control page of a connection. Each side writes only its own words; cache lines apart.
struct ShmCtrl {
  SlotHeader slots[kSteps];                // written by the sender only, read by the receiver
  alignas(64) std::atomic<uint64_t> head;  // receiver: steps consumed (credits)
  alignas(64) std::atomic<int32_t> senderMapped;
  std::atomic<int32_t> senderFailed;    // rank + 1 of a failure the sender reported, 0: none
  std::atomic<int32_t> receiverFailed;
  std::atomic<int32_t> cma;             // receiver: whether it reads the sender's memory (kCma*)
  int32_t senderPid;                    // sender, before senderMapped
  uint64_t senderCanary;                // sender: the address of gCmaCanary in its process
  // Sender: the signatures of its last collectives on this connection (by seq), written before
  // their first step. Read by the receiver only when a step's tag is not the one it expects, so
  // these lines stay in the sender's cache.
  struct alignas(64) SignatureLine {  // one line each: writing one touches a single line
    CollSignature sig;
  };
  SignatureLine signatures[kSignatureHistory];
};
static_assert(sizeof(ShmCtrl) <= kCtrlBytes);

ShmCtrl* ctrlOf(const ShmSegment& s) { return static_cast<ShmCtrl*>(s.data()); }

// Reports `failedRank` in one side's flag of the segment and wakes the peer.
void flagFailure(const ShmSegment& seg, std::atomic<int32_t> ShmCtrl::*side, int failedRank, Bell* peerBell) {
  if (seg.data() == nullptr) return;
  // The first report stands: an abort after a peer's death must not rename who failed.
  int32_t none = 0;
  (ctrlOf(seg)->*side).compare_exchange_strong(none, failedRank + 1);
  ringBell(peerBell);
}
char* slotsOf(const ShmSegment& s) { return static_cast<char*>(s.data()) + kCtrlBytes; }

std::atomic<uint64_t> gSegmentCounter{0};

Status peerFailure(int reported, int peerRank) {
  if (reported - 1 == peerRank)
    return remoteError(strprintf("rank %d failed or aborted during a shared-memory transfer", peerRank)).withFailedRank(peerRank);
  return remoteError(strprintf("rank %d failed or aborted (reported by rank %d over shared memory)", reported - 1, peerRank))
      .withFailedRank(reported - 1);
}

std::string mib(double bytes) { return strprintf("%.1f MiB", bytes / (1024.0 * 1024.0)); }

Status shmSpaceError(const std::string& name, size_t size, int err) {
  std::string room;
  struct statvfs fs {};
  if (statvfs("/dev/shm", &fs) == 0)
    room = strprintf("; /dev/shm has %s free of %s", mib(double(fs.f_bavail) * double(fs.f_frsize)).c_str(),
                     mib(double(fs.f_blocks) * double(fs.f_frsize)).c_str());
  return systemError(strprintf(
      "cannot reserve %s for shared-memory segment %s in /dev/shm (%s%s). Ways out: a larger /dev/shm "
      "(docker run --shm-size=1g, a Kubernetes emptyDir with medium Memory), a smaller NCCL_BUFFSIZE "
      "(each channel and peer takes NCCL_BUFFSIZE), or NCCL_SHM_DISABLE=1 (local ranks then use the net plugin)",
      mib(double(size)).c_str(), name.c_str(), std::strerror(err), room.c_str()));
}

}  // namespace

Result<ShmSegment> ShmSegment::create(size_t size, const std::string& what) {
  ShmSegment s;
  for (int attempt = 0; attempt < 16; ++attempt) {
    s.name_ = strprintf("/weft-%d-%llu-%08llx-%s", static_cast<int>(getpid()),
                        static_cast<unsigned long long>(gSegmentCounter.fetch_add(1)),
                        static_cast<unsigned long long>(randomMagic() & 0xffffffffull), what.c_str());
    int fd = shm_open(s.name_.c_str(), O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return errnoError("shm_open(" + s.name_ + ") in /dev/shm", errno);
    s.linked_ = true;
    Fd owner(fd);
    if (ftruncate(fd, static_cast<off_t>(size)) != 0)
      return errnoError(strprintf("ftruncate of %s to %zu bytes (is /dev/shm full?)", s.name_.c_str(), size), errno);
    // tmpfs hands out pages when they are first touched: without reserving them here, a
    // /dev/shm smaller than the job's segments (Docker's 64 MiB default) kills the process with
    // SIGBUS at its first transfer instead of failing init with a reason.
    if (int err = posix_fallocate(fd, 0, static_cast<off_t>(size)); err != 0) return shmSpaceError(s.name_, size, err);
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) return errnoError("mmap of " + s.name_, errno);
    s.data_ = p;
    s.size_ = size;
    return s;
  }
  return systemError("could not find a free /dev/shm name");
}

Result<ShmSegment> ShmSegment::open(const std::string& name, size_t size, int ownerRank) {
  ShmSegment s;
  s.name_ = name;
  int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0600);
  if (fd < 0 && errno == ENOENT && ownerRank >= 0)
    return remoteError(strprintf("rank %d failed or aborted before this rank mapped its shared-memory segment %s",
                                 ownerRank, name.c_str()))
        .withFailedRank(ownerRank);
  if (fd < 0) return errnoError("shm_open(" + name + ") of a peer's segment", errno);
  Fd owner(fd);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) return errnoError("mmap of " + name, errno);
  s.data_ = p;
  s.size_ = size;
  return s;
}

ShmSegment::~ShmSegment() {
  unlink();
  if (data_ != nullptr) munmap(data_, size_);
}

ShmSegment::ShmSegment(ShmSegment&& o) noexcept
    : name_(std::move(o.name_)), data_(o.data_), size_(o.size_), linked_(o.linked_) {
  o.data_ = nullptr;
  o.linked_ = false;
}

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    unlink();
    if (data_ != nullptr) munmap(data_, size_);
    name_ = std::move(o.name_);
    data_ = o.data_;
    size_ = o.size_;
    linked_ = o.linked_;
    o.data_ = nullptr;
    o.linked_ = false;
  }
  return *this;
}

void ShmSegment::unlink() {
  if (linked_) shm_unlink(name_.c_str());
  linked_ = false;
}

Result<BellSegment> BellSegment::create() {
  BellSegment b;
  WEFT_ASSIGN_OR_RETURN(b.seg_, ShmSegment::create(sizeof(Bell) < 64 ? 64 : sizeof(Bell), "bell"));
  new (b.seg_.data()) Bell{};
  return b;
}

Result<BellSegment> BellSegment::open(const std::string& name) {
  BellSegment b;
  WEFT_ASSIGN_OR_RETURN(b.seg_, ShmSegment::open(name, 64));
  return b;
}

void futexWait(std::atomic<uint32_t>* word, uint32_t expected, std::chrono::microseconds timeout) {
  timespec ts{static_cast<time_t>(timeout.count() / 1000000), static_cast<long>((timeout.count() % 1000000) * 1000)};
  // Shared (not PRIVATE) futex: the word lives in memory mapped by several processes.
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void ringBell(Bell* bell) {
  if (bell == nullptr) return;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  ringBellAfterBarrier(bell);
}

void ringBellAfterBarrier(Bell* bell) {
  if (bell == nullptr) return;
  if (bell->sleepers.load(std::memory_order_seq_cst) == 0) return;
  bell->seq.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&bell->seq), FUTEX_WAKE, INT32_MAX, nullptr, nullptr, 0);
}

// ---- receiver ---------------------------------------------------------------------------------

Result<std::unique_ptr<ShmRecv>> ShmRecv::create(size_t stepSize, Bell* peerBell, int peerRank, bool singleCopy) {
  std::unique_ptr<ShmRecv> r(new ShmRecv());
  WEFT_ASSIGN_OR_RETURN(r->seg_, ShmSegment::create(kCtrlBytes + kSteps * stepSize, "conn"));
  new (r->seg_.data()) ShmCtrl{};
  r->stepSize_ = stepSize;
  r->peerBell_ = peerBell;
  r->peerRank_ = peerRank;
  r->singleCopy_ = singleCopy;
  return r;
}

namespace {

// Copies `bytes` at `addr` in process `pid` into `dst`; false when the kernel refuses (no
// permission, no such process, a seccomp filter, a kernel without cross-memory attach).
bool readPeer(int pid, uint64_t addr, void* dst, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    iovec local{static_cast<char*>(dst) + done, bytes - done};
    iovec remote{reinterpret_cast<void*>(addr + done), bytes - done};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace

Result<bool> ShmRecv::finishSetup() {
  ShmCtrl* c = ctrlOf(seg_);
  if (c->senderMapped.load(std::memory_order_acquire) == 0) {
    if (int f = c->senderFailed.load(); f != 0) return peerFailure(f, peerRank_);
    return false;
  }
  seg_.unlink();
  uint64_t canary = 0;
  bool cma = singleCopy_ && readPeer(c->senderPid, c->senderCanary, &canary, sizeof canary) && canary == kCmaCanaryValue;
  c->cma.store(cma ? kCmaYes : kCmaNo, std::memory_order_release);
  return true;
}

Result<const void*> ShmRecv::peek(size_t* bytes, bool* last, int /*want*/) {
  ShmCtrl* c = ctrlOf(seg_);
  size_t slot = head_ % kSteps;
  SlotHeader& h = c->slots[slot];
  if (h.seq.load(std::memory_order_acquire) <= head_) {
    if (int f = c->senderFailed.load(std::memory_order_relaxed); f != 0) return peerFailure(f, peerRank_);
    return static_cast<const void*>(nullptr);
  }
  uint32_t s = h.size;
  *bytes = static_cast<size_t>(s & ~(kLastFlag | kFromFlag));
  *last = (s & kLastFlag) != 0;
  if ((s & kFromFlag) != 0) {
    std::memcpy(&remoteAddr_, h.data, sizeof remoteAddr_);
    return static_cast<const void*>(h.data);  // not the data: copyOut reads it
  }
  if (*bytes <= kInlineBytes) return static_cast<const void*>(h.data);
  return static_cast<const void*>(slotsOf(seg_) + slot * stepSize_);
}

Result<bool> ShmRecv::copyOut(void* dst, const void* peeked, size_t bytes) {
  if (remoteAddr_ == 0) return RecvConnection::copyOut(dst, peeked, bytes);
  ShmCtrl* c = ctrlOf(seg_);
  if (readPeer(c->senderPid, remoteAddr_, dst, bytes)) return true;
  int err = errno;
  if (int f = c->senderFailed.load(std::memory_order_relaxed); f != 0) return peerFailure(f, peerRank_);
  if (err == ESRCH) return false;  // the sender exited with the step posted
  return errnoError(strprintf("process_vm_readv of a %zu-byte step from rank %d (pid %d)", bytes, peerRank_, c->senderPid), err);
}

Status ShmRecv::release() {
  remoteAddr_ = 0;
  ++head_;
  // A full barrier (the exchange) between publishing and looking for a sleeper: see sleepOnBell.
  ctrlOf(seg_)->head.exchange(head_, std::memory_order_seq_cst);
  ringBellAfterBarrier(peerBell_);
  return Status::ok();
}

uint32_t ShmRecv::peekedTag() const { return ctrlOf(seg_)->slots[head_ % kSteps].tag; }

std::optional<CollSignature> ShmRecv::senderSignature(uint32_t tag) const {
  // The sender writes a signature just after its first step (ShmSend::publish): give it a moment.
  auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  do {
    for (const ShmCtrl::SignatureLine& line : ctrlOf(seg_)->signatures) {
      CollSignature copy = line.sig;  // the sender may be writing a later one: keep only a consistent copy
      if (copy.magic == CollSignature::kMagic && signatureTag(copy) == tag) return copy;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  } while (std::chrono::steady_clock::now() < until);
  return std::nullopt;
}

void ShmRecv::markFailed(int failedRank) { flagFailure(seg_, &ShmCtrl::receiverFailed, failedRank, peerBell_); }

// ---- sender -----------------------------------------------------------------------------------

Result<std::unique_ptr<ShmSend>> ShmSend::open(const std::string& name, size_t stepSize, Bell* peerBell, int peerRank) {
  std::unique_ptr<ShmSend> s(new ShmSend());
  WEFT_ASSIGN_OR_RETURN(s->seg_, ShmSegment::open(name, kCtrlBytes + kSteps * stepSize, peerRank));
  s->stepSize_ = stepSize;
  s->peerBell_ = peerBell;
  s->peerRank_ = peerRank;
  ShmCtrl* c = ctrlOf(s->seg_);
  c->senderPid = static_cast<int32_t>(getpid());
  c->senderCanary = reinterpret_cast<uint64_t>(&gCmaCanary);
  c->senderMapped.store(1, std::memory_order_release);
  ringBell(peerBell);
  return s;
}

Result<void*> ShmSend::acquire() {
  ShmCtrl* c = ctrlOf(seg_);
  if (int f = c->receiverFailed.load(std::memory_order_relaxed); f != 0) return peerFailure(f, peerRank_);
  // The receiver's head is read only when the credits seen so far are used up: while they last,
  // its cache line stays with the receiver (one line less to move per step).
  if (tail_ - headSeen_ >= kSteps) {
    headSeen_ = c->head.load(std::memory_order_acquire);
    if (tail_ - headSeen_ >= kSteps) return static_cast<void*>(nullptr);
  }
  return static_cast<void*>(slotsOf(seg_) + (tail_ % kSteps) * stepSize_);
}

Status ShmSend::post(size_t bytes, bool last) {
  SlotHeader& h = ctrlOf(seg_)->slots[tail_ % kSteps];
  if (bytes <= kInlineBytes) std::memcpy(h.data, slotsOf(seg_) + (tail_ % kSteps) * stepSize_, bytes);
  publish(static_cast<uint32_t>(bytes) | (last ? kLastFlag : 0));
  return Status::ok();
}

Result<bool> ShmSend::postFrom(const void* data, size_t bytes) {
  ShmCtrl* c = ctrlOf(seg_);
  if (bytes < kFromMinBytes || c->cma.load(std::memory_order_acquire) != kCmaYes) return false;
  uint64_t addr = reinterpret_cast<uint64_t>(data);
  std::memcpy(c->slots[tail_ % kSteps].data, &addr, sizeof addr);
  publish(static_cast<uint32_t>(bytes) | kFromFlag);
  fromUntil_ = tail_;
  return true;
}

Result<bool> ShmSend::drain() {
  if (headSeen_ >= fromUntil_) return true;
  ShmCtrl* c = ctrlOf(seg_);
  headSeen_ = c->head.load(std::memory_order_acquire);
  if (headSeen_ >= fromUntil_) return true;
  if (int f = c->receiverFailed.load(std::memory_order_relaxed); f != 0) return peerFailure(f, peerRank_);
  return false;
}

void ShmSend::sign(const CollSignature& sig) {
  tag_ = signatureTag(sig);
  signature_ = sig;
  signatureDue_ = true;
}

void ShmSend::publish(uint32_t size) {
  SlotHeader& h = ctrlOf(seg_)->slots[tail_ % kSteps];
  h.size = size;
  h.tag = tag_;
  ++tail_;
  // A full barrier (the exchange) between publishing and looking for a sleeper: see sleepOnBell.
  h.seq.exchange(tail_, std::memory_order_seq_cst);
  ringBellAfterBarrier(peerBell_);
  // The signature is kept for the receiver's message only, after the step: written before it,
  // the exchange above would wait for that line too, on every collective's critical path.
  if (signatureDue_) {
    ctrlOf(seg_)->signatures[signature_.seq % kSignatureHistory].sig = signature_;
    signatureDue_ = false;
  }
}

void ShmSend::markFailed(int failedRank) { flagFailure(seg_, &ShmCtrl::senderFailed, failedRank, peerBell_); }

}  // namespace weft::runtime
