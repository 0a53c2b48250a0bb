// The one logger. Filtered by level and subsystem (NCCL_DEBUG, NCCL_DEBUG_SUBSYS), written to
// stdout or NCCL_DEBUG_FILE, with NCCL's line prefix so that tools reading NCCL logs keep working.
// The check happens before any formatting: a disabled line costs one load and a compare.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace weft::log {

// Values are ncclDebugLogLevel's.
enum class Level : int { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kAbort = 4, kTrace = 5 };

// Values are ncclDebugLogSubSys's, so masks handed to and from plugins mean the same thing.
enum Subsys : uint64_t {
  kInit = 1ull << 0,
  kColl = 1ull << 1,
  kP2p = 1ull << 2,
  kShm = 1ull << 3,
  kNet = 1ull << 4,
  kGraph = 1ull << 5,
  kTuning = 1ull << 6,
  kEnv = 1ull << 7,
  kAlloc = 1ull << 8,
  kCall = 1ull << 9,
  kProxy = 1ull << 10,
  kNvls = 1ull << 11,
  kBootstrap = 1ull << 12,
  kReg = 1ull << 13,
  kProfile = 1ull << 14,
  kRas = 1ull << 15,
  kAll = ~0ull,
};

// How a line starts. kNccl: "host:pid:tid [dev] NCCL INFO " as NCCL prints it.
// kRank: "[dev] NCCL INFO ", the form of the offline reference logs and of `weft search`.
enum class Prefix { kNccl, kRank };

// The longest line NCCL's logger writes, without its newline.
inline constexpr size_t kNcclLineMax = 1023;

struct Options {
  Level level = Level::kNone;
  uint64_t mask = kInit | kBootstrap | kEnv;  // NCCL's default NCCL_DEBUG_SUBSYS
  Prefix prefix = Prefix::kNccl;
  std::string file;  // empty: stdout. %h and %p expand to host name and pid, as in NCCL.
};

// Parses NCCL_DEBUG ("WARN", "INFO", "TRACE", "VERSION", "ABORT"; case-insensitive; anything else: none).
Level parseLevel(std::string_view text);
// Parses NCCL_DEBUG_SUBSYS: comma list of names (INIT, COLL, …, ALL); a leading '^' inverts the mask.
// Unknown names are ignored, as NCCL does.
uint64_t parseSubsysMask(std::string_view text);
const char* levelName(Level level);

// Receives every emitted line (without the trailing newline). Used by tests and embedders.
using Sink = std::function<void(Level, uint64_t subsys, std::string_view line)>;

// While alive on a thread, receives the INFO lines of `mask` logged on that thread (payload only,
// without prefix), whatever the logger's level: how embedders get NCCL's log of an offline run.
// kCopy: the lines are also written as usual. kTake: they go to the recorder only (a caller that
// shows them its own way, like `weft tune` showing which tuner rule fired in its table).
class ScopedRecorder {
 public:
  enum class Mode { kCopy, kTake };
  explicit ScopedRecorder(std::vector<std::string>* out, uint64_t mask = kGraph, Mode mode = Mode::kCopy);
  ~ScopedRecorder();
  ScopedRecorder(const ScopedRecorder&) = delete;
  ScopedRecorder& operator=(const ScopedRecorder&) = delete;
  bool wants(Level level, uint64_t subsys) const { return level == Level::kInfo && (subsys & mask_) != 0; }
  void add(std::string_view line) { out_->emplace_back(line); }
  bool takes() const { return mode_ == Mode::kTake; }

 private:
  std::vector<std::string>* out_;
  uint64_t mask_;
  Mode mode_;
  ScopedRecorder* saved_;
};
ScopedRecorder* currentRecorder();

class Logger {
 public:
  Logger();
  explicit Logger(Options options);
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  bool enabled(Level level, uint64_t subsys) const {
    if (static_cast<int>(level) <= static_cast<int>(options_.level) &&
        (level <= Level::kWarn || (subsys & options_.mask) != 0))
      return true;
    const ScopedRecorder* r = currentRecorder();
    return r != nullptr && r->wants(level, subsys);
  }
  void setOptions(Options options);
  const Options& options() const { return options_; }

  // Replaces the output (file or stdout) by `sink`; an empty sink restores it.
  void setSink(Sink sink);

  void emit(Level level, uint64_t subsys, const char* file, int line, const char* fmt, ...)
      __attribute__((format(printf, 6, 7)));
  void emitV(Level level, uint64_t subsys, const char* file, int line, const char* fmt, va_list ap);

 private:
  void openFile();
  std::string prefix(Level level, const char* file, int line) const;

  Options options_;
  Sink sink_;
  FILE* out_ = stdout;
  bool ownsOut_ = false;
  mutable std::mutex mutex_;
};

// Options from NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE as the environment has them now.
Options optionsFromEnvironment();

// The process logger, configured once from NCCL_DEBUG, NCCL_DEBUG_SUBSYS and NCCL_DEBUG_FILE
// on first use. Embedders and tools may change its options afterwards.
Logger& processLogger();

// The number printed between brackets in the prefix: the CUDA device in NCCL, the rank in
// offline tools. Per thread, so simulated ranks can log in turn.
int currentDevice();
class ScopedDevice {
 public:
  explicit ScopedDevice(int device);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int saved_;
};

// A C function with ncclDebugLogger_t's signature that forwards to the process logger. Handed
// to plugins so that their lines share the same filter and output.
extern "C" void weftPluginLog(int level, unsigned long flags, const char* file, int line,
                              const char* fmt, ...) __attribute__((format(printf, 5, 6)));

}  // namespace weft::log

#define WEFT_LOG_(lvl, subsys, ...)                                                        \
  do {                                                                                     \
    ::weft::log::Logger& weft_logger_ = ::weft::log::processLogger();                      \
    if (weft_logger_.enabled((lvl), (subsys)))                                             \
      weft_logger_.emit((lvl), (subsys), __FILE__, __LINE__, __VA_ARGS__);                 \
  } while (0)

#define WEFT_WARN(...) WEFT_LOG_(::weft::log::Level::kWarn, ::weft::log::kAll, __VA_ARGS__)
#define WEFT_INFO(subsys, ...) WEFT_LOG_(::weft::log::Level::kInfo, (subsys), __VA_ARGS__)
#define WEFT_TRACE(subsys, ...) WEFT_LOG_(::weft::log::Level::kTrace, (subsys), __VA_ARGS__)
