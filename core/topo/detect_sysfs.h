// Reads Linux sysfs the way NCCL's topology detection does, under a root directory that tests
// point at a tree of their own.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::topo {

// "BBBB:BB:DD.F" with hex digits, nothing more (NCCL's checkBDFFormat).
bool isBdf(std::string_view text);

class Sysfs {
 public:
  explicit Sysfs(std::string root = "/sys") : root_(std::move(root)) {}
  const std::string& root() const { return root_; }

  // The real path of a PCI device's directory, found as NCCL finds it: through
  // class/pci_bus/<domain:bus>/../../<bus id>. Nothing when the device is not there.
  std::optional<std::string> pciPath(std::string_view busId) const;

  // A sysfs attribute file as NCCL reads it: at most 255 bytes, the last one (the newline)
  // dropped. "" when the file cannot be read, with NCCL's INFO line.
  std::string read(const std::string& dir, std::string_view file) const;

  // The last component of realpath(dir/subsystem) ("pci", "virtio", …); "" when there is none.
  std::string subsystem(const std::string& dir) const;

  // Broadcom PEX peer links of a switch: the entries of
  // kernel/pci_switch_link/virtual_switch_links/<bus id>/ that name a present PCI device.
  std::vector<std::string> bcmLinks(std::string_view busId) const;

  // A NUMA node's CPU set as the kernel prints it (devices/system/node/node<N>/cpumap).
  std::string numaCpumap(std::string_view numaId) const;

 private:
  std::string root_;
};

}  // namespace weft::topo
