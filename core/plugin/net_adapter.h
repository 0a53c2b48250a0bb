// Adapters from each net ABI version (v6 … v11) to the internal NetApi. Each converts its
// version's calls and structs field by field; none casts one version's struct to another's.
#pragma once

#include <memory>

#include "core/plugin/net_api.h"

namespace weft::plugin {

// Wraps the table a plugin exports as ncclNetPlugin_v<version>. Returns null for a version weft
// does not know. `table` must stay valid (its library loaded) for the adapter's lifetime.
std::unique_ptr<NetApi> makeNetAdapter(int version, const void* table);

// Property conversions, one per distinct layout (v10 shares v9's). Fields an older version
// lacks get the values NCCL assumes for it: vProps = {dev}, 1 GiB / 512 MiB size limits,
// maxMultiRequestSize 1, host device type.
NetProperties toNetProperties(const weft_net_properties_v6_t& p, int dev);
NetProperties toNetProperties(const weft_net_properties_v7_t& p, int dev);
NetProperties toNetProperties(const weft_net_properties_v8_t& p, int dev);
NetProperties toNetProperties(const weft_net_properties_v9_t& p, int dev);
NetProperties toNetProperties(const weft_net_properties_v11_t& p, int dev);

// A plugin's return code as a Status: "<plugin>: <call> returned <code name>". Shared by the
// net and tuner loaders.
Status pluginStatus(const char* plugin, const char* call, int rc);

// The host logger handed to every plugin's init: weft's process logger behind NCCL's
// ncclDebugLogger_t signature.
weft_debug_logger_t hostLogger();

}  // namespace weft::plugin
