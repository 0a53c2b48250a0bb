#include "core/topo/system.h"

#include <algorithm>

namespace weft::topo {

std::string_view nodeTypeName(NodeType t) {
  static constexpr std::string_view kNames[] = {"GPU", "PCI", "NVS", "CPU", "NIC", "NET"};
  return kNames[idx(t)];
}

std::string_view linkTypeName(LinkType t) {
  static constexpr std::string_view kNames[] = {"LOC", "NVL", "", "C2C", "PCI", "", "", "", "", "SYS", "NET"};
  return kNames[val(t)];
}

std::string_view pathTypeName(PathType t) {
  static constexpr std::string_view kNames[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB",
                                                "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return kNames[val(t)];
}

float nvlinkBw(int cc) {
  if (cc >= 100) return kSm100NvlinkBw;
  if (cc >= 90) return kSm90NvlinkBw;
  if (cc == 86) return kSm86NvlinkBw;
  if (cc >= 80) return kSm80NvlinkBw;
  if (cc >= 70) return kSm70NvlinkBw;
  if (cc >= 60) return kSm60NvlinkBw;
  return kSm80NvlinkBw;
}

int System::find(NodeType t, int64_t id) const {
  const auto& v = nodes_[idx(t)];
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].id == id) return static_cast<int>(i);
  return -1;
}

int System::gpuIndexOfRank(int rank) const {
  const auto& v = nodes_[idx(NodeType::kGpu)];
  for (size_t i = 0; i < v.size(); ++i)
    if (v[i].gpu.rank == rank) return static_cast<int>(i);
  return -1;
}

int System::addNode(NodeType t, int64_t id) {
  Node n;
  n.type = t;
  n.id = id;
  auto& v = nodes_[idx(t)];
  v.push_back(std::move(n));
  return static_cast<int>(v.size()) - 1;
}

void System::connect(NodeRef from, NodeRef rem, LinkType type, float bw) {
  std::vector<Link>& links = node(from).links;
  size_t i = 0;
  while (i < links.size() && !(links[i].rem == rem && links[i].type == type)) ++i;
  if (i == links.size()) links.push_back(Link{type, 0.0f, rem});
  links[i].bw += bw;
  // Move the link up while the one before it is strictly slower, as NCCL's insertion does.
  while (i > 0 && links[i - 1].bw < links[i].bw) {
    std::swap(links[i - 1], links[i]);
    --i;
  }
}

void System::finalizeLinks() {
  for (auto& kind : nodes_) {
    for (size_t i = 0; i < kind.size(); ++i) {
      Node& n = kind[i];
      NodeRef self{n.type, static_cast<int>(i)};
      for (Link& l : n.links) {
        Node& rem = node(l.rem);
        l.rev = nullptr;
        for (Link& back : rem.links) {
          if (back.rem == self && back.type == l.type) {
            l.rev = &back;
            break;
          }
        }
        l.revCost = RevCost::kNone;
        if (rem.type == NodeType::kGpu && rem.gpu.cudaCompCap < 80) l.revCost = RevCost::kPreAmpereGpu;
        if (rem.type == NodeType::kCpu && rem.cpu.arch == kCpuArchPower && l.type == LinkType::kNvl)
          l.revCost = RevCost::kPowerNvlink;
      }
    }
  }
}

void System::removeNode(NodeType t, int index) {
  for (auto& kind : nodes_) {
    for (Node& n : kind) {
      std::erase_if(n.links, [&](const Link& l) { return l.rem.type == t && l.rem.index == index; });
      for (Link& l : n.links)
        if (l.rem.type == t && l.rem.index > index) --l.rem.index;
      for (auto& p : n.paths) p.clear();
    }
  }
  auto& v = nodes_[idx(t)];
  v.erase(v.begin() + index);
}

}  // namespace weft::topo
