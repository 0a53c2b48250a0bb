#include "tools/weft/picture_dot.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "core/base/files.h"
#include "core/base/strings.h"

extern char** environ;

namespace weft::tool {
namespace {

namespace fs = std::filesystem;

bool executable(const std::string& path) { return !path.empty() && ::access(path.c_str(), X_OK) == 0 && !fs::is_directory(path); }

// A private directory for dot's input and output, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base && *base ? base : "/tmp") + "/weft-dot-XXXXXX";
    if (::mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// How a program ended: its exit status, or that it ran out of time (and was killed).
struct Ended {
  int status = 0;
  bool timedOut = false;
};

// Runs argv[0] (a path) with argv and waits for it, at most `limit`: past it, the program is
// killed and reaped. Returns its exit status or the spawn error.
Result<Ended> runProgram(const std::vector<std::string>& args, std::chrono::seconds limit) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (int err = ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ); err != 0)
    return errnoError("cannot run " + args[0], err);
  auto deadline = std::chrono::steady_clock::now() + limit;
  auto nap = std::chrono::milliseconds(1);
  int status = 0;
  for (;;) {
    pid_t got = ::waitpid(pid, &status, WNOHANG);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return errnoError("waiting for " + args[0], errno);
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      return Ended{0, true};
    }
    // Polled, not slept on: a child's end cannot be waited for with a deadline otherwise
    // without taking SIGCHLD from the caller. Most pictures take milliseconds.
    std::this_thread::sleep_for(nap);
    nap = std::min(nap * 2, std::chrono::milliseconds(20));
  }
  if (WIFSIGNALED(status)) return Ended{128 + WTERMSIG(status), false};
  return Ended{WEXITSTATUS(status), false};
}

// WEFT_DOT_TIMEOUT: seconds Graphviz may take for one picture.
Result<std::chrono::seconds> dotTimeout() {
  const char* text = std::getenv("WEFT_DOT_TIMEOUT");
  if (text == nullptr || *text == '\0') return std::chrono::seconds(kDotTimeoutSeconds);
  auto v = parseInt(text);
  if (!v || *v < 1 || *v > 86400)
    return invalidUsage(strprintf("WEFT_DOT_TIMEOUT=%s: expected whole seconds, 1 to 86400", text));
  return std::chrono::seconds(*v);
}

std::string withExtension(const std::string& path, const std::string& ext) {
  fs::path p(path);
  p.replace_extension(ext);
  return p.string();
}

Status writeOut(const std::string& path, std::string_view bytes) {
  if (path != "-") return writeFileAtomic(path, bytes);
  if (std::fwrite(bytes.data(), 1, bytes.size(), stdout) != bytes.size()) return systemError("cannot write to stdout");
  return Status::ok();
}

}  // namespace

std::string dotQuote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  out += '"';
  return out;
}

std::string htmlEscape(std::string_view text) { return xmlEscaped(text); }

LinkStyle linkStyle(std::string_view type) {
  // NVLink in NVIDIA green, the PCIe tree in blue, the inter-CPU link in red, the network in
  // grey: the widest classes first catch the eye, the slow ones are dashed.
  if (type == "NVL" || type == "NVB") return {"#4d9900", "solid"};
  if (type == "C2C") return {"#8a2be2", "solid"};
  if (type == "PIX" || type == "PXB" || type == "PCI" || type == "P2C") return {"#1f5fbf", "solid"};
  if (type == "PXN") return {"#2e8b57", "dashed"};
  if (type == "PHB") return {"#d2691e", "solid"};
  if (type == "SYS") return {"#c0392b", "dashed"};
  if (type == "NET") return {"#555555", "dashed"};
  return {"#999999", "dotted"};
}

std::string findDot() {
  if (const char* env = std::getenv("WEFT_DOT"); env != nullptr) return executable(env) ? env : "";
  const char* path = std::getenv("PATH");
  for (std::string_view dir : split(path ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    std::string candidate = std::string(dir) + "/dot";
    if (executable(candidate)) return candidate;
  }
  return "";
}

Result<std::string> renderDot(const std::string& dotProgram, const std::string& dot, const std::string& format) {
  WEFT_ASSIGN_OR_RETURN(std::chrono::seconds limit, dotTimeout());
  TempDir dir;
  if (dir.path().empty()) return errnoError("cannot create a temporary directory for dot", errno);
  std::string in = dir.path() + "/picture.dot", out = dir.path() + "/picture." + format;
  WEFT_TRY(writeFileAtomic(in, dot));
  WEFT_ASSIGN_OR_RETURN(Ended ended, runProgram({dotProgram, "-T" + format, "-o", out, in}, limit));
  std::string instead = strprintf("; to draw it elsewhere, write the DOT text (a .dot file name) and render it "
                                  "with `dot -T%s`", format.c_str());
  if (ended.timedOut)
    return systemError(strprintf("Graphviz (%s -T%s) did not finish within %lld s (WEFT_DOT_TIMEOUT) and was stopped: "
                                 "draw less (--picture-channels 0-1, --picture-graphs ring) or allow more time",
                                 dotProgram.c_str(), format.c_str(), static_cast<long long>(limit.count())) +
                       instead);
  if (ended.status != 0)
    return systemError(strprintf("Graphviz (%s -T%s) failed with exit status %d (its messages are above): try "
                                 "another Graphviz version (WEFT_DOT names the program)",
                                 dotProgram.c_str(), format.c_str(), ended.status) +
                       instead);
  return readWholeFile(out);
}

std::string pictureFormat(const std::string& path) {
  std::string ext = toLower(fs::path(path).extension().string());
  if (ext == ".png" || ext == ".pdf" || ext == ".dot" || ext == ".gv") return ext == ".gv" ? "dot" : ext.substr(1);
  return "svg";
}

Status writePicture(const std::string& dot, const std::string& path, const std::string& format) {
  if (format == "dot") return writeOut(path, dot);
  std::string program = findDot();
  if (program.empty()) {
    std::string dotPath = path == "-" ? "-" : withExtension(path, ".dot");
    WEFT_TRY(writeOut(dotPath, dot));
    std::fprintf(stderr,
                 "weft: Graphviz's dot was not found (set WEFT_DOT or install graphviz); wrote the DOT text%s%s: "
                 "render it with `dot -T%s %s -o %s`\n",
                 dotPath == "-" ? "" : " to ", dotPath == "-" ? "" : dotPath.c_str(), format.c_str(),
                 dotPath == "-" ? "FILE.dot" : dotPath.c_str(), path == "-" ? ("FILE." + format).c_str() : path.c_str());
    return Status::ok();
  }
  WEFT_ASSIGN_OR_RETURN(std::string rendered, renderDot(program, dot, format));
  return writeOut(path, rendered);
}

}  // namespace weft::tool
