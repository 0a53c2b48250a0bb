// The checks themselves. Each runs in its own process (conformance_runner.cc), throws
// CheckFailed / CheckSkipped, and on success returns a short note of what it measured. The
// first group uses the plugin as NCCL 2.28 does; the strict extras ask for more.
#pragma once

#include <memory>
#include <string>

#include "core/plugin/conformance.h"
#include "core/plugin/net_loader.h"

namespace weft::plugin::conformance {

using Plugin = std::shared_ptr<LoadedNet>;

std::string checkInit(const Plugin& plugin, const Options& o);
std::string checkProperties(const Plugin& plugin, const Options& o);
std::string checkHandle(const Plugin& plugin, const Options& o);
std::string checkConnect(const Plugin& plugin, const Options& o);
std::string checkSizes(const Plugin& plugin, const Options& o);
std::string checkTags(const Plugin& plugin, const Options& o);
std::string checkMultiRecv(const Plugin& plugin, const Options& o);
std::string checkRegistration(const Plugin& plugin, const Options& o);
std::string checkInFlight(const Plugin& plugin, const Options& o);
std::string checkInterleaved(const Plugin& plugin, const Options& o);
std::string checkCloseOrder(const Plugin& plugin, const Options& o);
std::string checkPeerDeath(const Plugin& plugin, const Options& o);

// Strict extras.
std::string checkTagsAnyOrder(const Plugin& plugin, const Options& o);
std::string checkInFlightEager(const Plugin& plugin, const Options& o);
std::string checkListenReuse(const Plugin& plugin, const Options& o);
std::string checkBadArguments(const Plugin& plugin, const Options& o);

}  // namespace weft::plugin::conformance
