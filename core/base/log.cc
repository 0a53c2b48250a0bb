#include "core/base/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <vector>

#include "core/base/strings.h"

namespace weft::log {
namespace {

struct SubsysName {
  const char* name;
  uint64_t bit;
};

constexpr SubsysName kSubsysNames[] = {
    {"INIT", kInit},   {"COLL", kColl},   {"P2P", kP2p},           {"SHM", kShm},
    {"NET", kNet},     {"GRAPH", kGraph}, {"TUNING", kTuning},     {"ENV", kEnv},
    {"ALLOC", kAlloc}, {"CALL", kCall},   {"PROXY", kProxy},       {"NVLS", kNvls},
    {"BOOTSTRAP", kBootstrap}, {"REG", kReg}, {"PROFILE", kProfile}, {"RAS", kRas},
    {"ALL", kAll},
};

thread_local int tlsDevice = 0;
thread_local ScopedRecorder* tlsRecorder = nullptr;

std::string hostName() {
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  // NCCL prints the host name up to the first dot.
  if (char* dot = std::strchr(buf, '.')) *dot = '\0';
  return buf;
}

std::string expandFileName(const std::string& pattern) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char c = pattern[i + 1];
      if (c == 'h') { out += hostName(); ++i; continue; }
      if (c == 'p') { out += std::to_string(getpid()); ++i; continue; }
      if (c == '%') { out += '%'; ++i; continue; }
    }
    out += pattern[i];
  }
  return out;
}

}  // namespace

Options optionsFromEnvironment() {
  Options o;
  if (const char* v = std::getenv("NCCL_DEBUG")) o.level = parseLevel(v);
  if (const char* v = std::getenv("NCCL_DEBUG_SUBSYS")) o.mask = parseSubsysMask(v);
  if (const char* v = std::getenv("NCCL_DEBUG_FILE")) o.file = v;
  return o;
}

Level parseLevel(std::string_view text) {
  struct { const char* name; Level level; } const table[] = {
      {"VERSION", Level::kVersion}, {"WARN", Level::kWarn}, {"INFO", Level::kInfo},
      {"ABORT", Level::kAbort},     {"TRACE", Level::kTrace},
  };
  for (const auto& e : table) {
    if (text.size() == std::strlen(e.name) && strncasecmp(text.data(), e.name, text.size()) == 0)
      return e.level;
  }
  return Level::kNone;
}

uint64_t parseSubsysMask(std::string_view text) {
  bool invert = !text.empty() && text.front() == '^';
  if (invert) text.remove_prefix(1);
  uint64_t mask = 0;
  while (!text.empty()) {
    size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    for (const auto& e : kSubsysNames) {
      if (item.size() == std::strlen(e.name) && strncasecmp(item.data(), e.name, item.size()) == 0)
        mask |= e.bit;
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return invert ? ~mask : mask;
}

const char* levelName(Level level) {
  switch (level) {
    case Level::kNone: return "NONE";
    case Level::kVersion: return "VERSION";
    case Level::kWarn: return "WARN";
    case Level::kInfo: return "INFO";
    case Level::kAbort: return "ABORT";
    case Level::kTrace: return "TRACE";
  }
  return "NONE";
}

Logger::Logger() = default;

Logger::Logger(Options options) : options_(std::move(options)) { openFile(); }

Logger::~Logger() {
  if (ownsOut_) std::fclose(out_);
}

void Logger::setOptions(Options options) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (ownsOut_) std::fclose(out_);
  out_ = stdout;
  ownsOut_ = false;
  options_ = std::move(options);
  openFile();
}

void Logger::setSink(Sink sink) {
  std::lock_guard<std::mutex> lock(mutex_);
  sink_ = std::move(sink);
}

void Logger::openFile() {
  if (options_.file.empty() || options_.level == Level::kNone) return;
  std::string name = expandFileName(options_.file);
  FILE* f = std::fopen(name.c_str(), "w");
  if (f == nullptr) {
    std::fprintf(stderr, "weft: cannot open NCCL_DEBUG_FILE %s: %s; logging to stdout\n",
                 name.c_str(), std::strerror(errno));
    return;
  }
  out_ = f;
  ownsOut_ = true;
}

std::string Logger::prefix(Level level, const char* file, int line) const {
  // NCCL prints VERSION lines ("NCCL version …") bare: no host, pid, device or level tag.
  if (level == Level::kVersion) return {};
  char buf[512];
  const char* tag = level == Level::kWarn ? "WARN" : level == Level::kTrace ? "TRACE" : "INFO";
  if (options_.prefix == Prefix::kRank) {
    std::snprintf(buf, sizeof(buf), "[%d] NCCL %s ", tlsDevice, tag);
    return buf;
  }
  static const std::string host = hostName();
  long tid = static_cast<long>(syscall(SYS_gettid));
  if (level == Level::kWarn) {
    const char* base = std::strrchr(file, '/');
    std::snprintf(buf, sizeof(buf), "%s:%d:%ld [%d] %s:%d NCCL WARN ", host.c_str(), getpid(), tid,
                  tlsDevice, base ? base + 1 : file, line);
  } else {
    std::snprintf(buf, sizeof(buf), "%s:%d:%ld [%d] NCCL %s ", host.c_str(), getpid(), tid,
                  tlsDevice, tag);
  }
  return buf;
}

void Logger::emit(Level level, uint64_t subsys, const char* file, int line, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  emitV(level, subsys, file, line, fmt, ap);
  va_end(ap);
}

void Logger::emitV(Level level, uint64_t subsys, const char* file, int line, const char* fmt,
                   va_list ap) {
  if (!enabled(level, subsys)) return;
  // The message once, before the prefix: a recorder takes it as it is. "%s" (lines formatted
  // by the caller) is taken without a formatting pass.
  std::string message;
  if (std::strcmp(fmt, "%s") == 0) {
    va_list copy;
    va_copy(copy, ap);
    const char* str = va_arg(copy, const char*);
    va_end(copy);
    message = str != nullptr ? str : "(null)";
  } else {
    appendFormatV(message, fmt, ap);
  }
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (tlsRecorder != nullptr && tlsRecorder->wants(level, subsys)) {
    tlsRecorder->add(message);
    if (tlsRecorder->takes()) return;
    bool normal = static_cast<int>(level) <= static_cast<int>(options_.level) &&
                  (level <= Level::kWarn || (subsys & options_.mask) != 0);
    if (!normal) return;
  }
  std::string text = prefix(level, file, line);
  text += message;
  // NCCL formats a line (host, pid and tid, then its message) into 1024 bytes: 1023 and the
  // newline. The rank-only prefix is weft's own (the reference logs' format) and is not cut.
  if (options_.prefix == Prefix::kNccl && text.size() > kNcclLineMax) text.resize(kNcclLineMax);

  std::lock_guard<std::mutex> lock(mutex_);
  if (sink_) {
    sink_(level, subsys, text);
    return;
  }
  text += '\n';
  std::fwrite(text.data(), 1, text.size(), out_);
  std::fflush(out_);
}

Logger& processLogger() {
  static Logger* logger = new Logger(optionsFromEnvironment());  // never destroyed: usable in atexit paths
  return *logger;
}

int currentDevice() { return tlsDevice; }

ScopedRecorder::ScopedRecorder(std::vector<std::string>* out, uint64_t mask, Mode mode)
    : out_(out), mask_(mask), mode_(mode), saved_(tlsRecorder) {
  tlsRecorder = this;
}
ScopedRecorder::~ScopedRecorder() { tlsRecorder = saved_; }
ScopedRecorder* currentRecorder() { return tlsRecorder; }

ScopedDevice::ScopedDevice(int device) : saved_(tlsDevice) { tlsDevice = device; }
ScopedDevice::~ScopedDevice() { tlsDevice = saved_; }

extern "C" void weftPluginLog(int level, unsigned long flags, const char* file, int line,
                              const char* fmt, ...) {
  Logger& logger = processLogger();
  Level lvl = static_cast<Level>(level);
  if (!logger.enabled(lvl, flags)) return;
  va_list ap;
  va_start(ap, fmt);
  logger.emitV(lvl, flags, file ? file : "plugin", line, fmt, ap);
  va_end(ap);
}

}  // namespace weft::log
