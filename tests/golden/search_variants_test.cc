// The fast search against the float reference (see search_reference_test.cc) on machines that are
// not in the corpus: every corpus topology changed one way at a time, as other machines of the
// same family would be (a GPU or a NIC fewer, faster or slower NICs, one NVLink per peer or five
// or twelve times as many, PCIe Gen3 switches, no GPUDirect, NICs on the CPU). The shortcuts of
// the fast search must hold on any topology, not only on the files they were measured on; a
// variant that NCCL cannot build is skipped, and the test requires enough comparisons to mean
// something.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "core/topo/offline.h"
#include "tests/golden/float_reference.h"
#include "tests/support/corpus.h"
#include "tests/support/sanitizer.h"

namespace weft::topo {
namespace {

void collect(XmlNode& n, std::string_view name, std::vector<XmlNode*>& out) {
  if (n.name() == name) out.push_back(&n);
  for (const auto& c : n.children()) collect(*c, name, out);
}

std::vector<XmlNode*> all(XmlNode& root, std::string_view name) {
  std::vector<XmlNode*> out;
  collect(root, name, out);
  return out;
}

// Each change returns false when it does not apply to the file (nothing to change).
struct Variant {
  const char* name;
  std::function<bool(XmlNode&)> apply;
  bool nicsOnly = false;  // only changes NIC paths: compared at 2 nodes (one node uses no NIC)
};

bool dropLastGpu(XmlNode& root) {
  std::vector<XmlNode*> gpus;
  for (XmlNode* g : all(root, "gpu"))
    if (g->has("rank")) gpus.push_back(g);
  if (gpus.size() < 3) return false;
  auto rankOf = [](const XmlNode* g) { return std::atoi(g->get("rank").c_str()); };
  XmlNode* last = *std::max_element(gpus.begin(), gpus.end(),
                                    [&](const XmlNode* a, const XmlNode* b) { return rankOf(a) < rankOf(b); });
  // The whole PCI device goes; NVLinks that pointed at it now point at nothing and are ignored.
  XmlNode* device = last->parent();
  if (device == nullptr || device->parent() == nullptr) return false;
  device->parent()->detach(device);
  return true;
}

bool dropLastNic(XmlNode& root) {
  std::vector<XmlNode*> nics = all(root, "nic");
  if (nics.size() < 2 || nics.back()->parent() == nullptr) return false;
  nics.back()->parent()->detach(nics.back());
  return true;
}

// Every NIC taken out of its own PCI device (one that holds no GPU and no switch) and put on the
// CPU above it: NCCL links such a NIC to the CPU at 5,000 GB/s, a "wide" link of the fast search
// (beyond its small integers), which every NET step then crosses.
bool nicsOnTheCpu(XmlNode& root) {
  bool any = false;
  for (XmlNode* nic : all(root, "nic")) {
    XmlNode* card = nic->parent();
    if (card == nullptr || card->name() != "pci" || card->child("pci") != nullptr || !all(*card, "gpu").empty())
      continue;
    XmlNode* cpu = card->parent();
    while (cpu != nullptr && cpu->name() != "cpu") cpu = cpu->parent();
    if (cpu == nullptr) continue;
    cpu->adopt(card->detach(nic));
    if (card->children().empty()) card->parent()->detach(card);
    any = true;
  }
  return any;
}

std::function<bool(XmlNode&)> scaleNetSpeed(int mul, int div) {
  return [mul, div](XmlNode& root) {
    bool any = false;
    for (XmlNode* net : all(root, "net")) {
      const std::string* speed = net->find("speed");
      if (speed == nullptr) continue;
      long long mbps = std::atoll(speed->c_str());
      if (mbps <= 0) continue;
      net->set("speed", std::to_string(mbps * mul / div));
      any = true;
    }
    return any;
  };
}

// NVLink bundles `mul` times wider: NVSwitch links of 1,000-4,000 GB/s, the top of the range the
// fast search keeps as small integers (SearchEngine::kMilliLimit), and beyond it on wider files;
// 12 times: wide links on every NVSwitch machine.
std::function<bool(XmlNode&)> scaleNvlinkCount(int mul) {
  return [mul](XmlNode& root) {
    bool any = false;
    for (XmlNode* link : all(root, "nvlink")) {
      const int count = std::atoi(link->get("count", "0").c_str());
      if (count <= 0) continue;
      link->set("count", std::to_string(count * mul));
      any = true;
    }
    return any;
  };
}

// Sets `key` to `value` on every <name> element that `applies` to.
std::function<bool(XmlNode&)> setWhere(std::string name, std::string key, std::string value,
                                       std::function<bool(const XmlNode&)> applies) {
  return [=](XmlNode& root) {
    bool any = false;
    for (XmlNode* n : all(root, name)) {
      if (!applies(*n)) continue;
      n->set(key, value);
      any = true;
    }
    return any;
  };
}

const std::vector<Variant>& variants() {
  static const std::vector<Variant> all = {
      {"a GPU fewer", dropLastGpu},
      {"a NIC fewer", dropLastNic},
      {"NICs 4x faster", scaleNetSpeed(4, 1)},
      {"NICs 4x slower", scaleNetSpeed(1, 4)},
      {"one NVLink per peer",
       setWhere("nvlink", "count", "1", [](const XmlNode& n) { return std::atoi(n.get("count", "0").c_str()) > 1; })},
      {"PCIe Gen3", setWhere("pci", "link_speed", "8.0 GT/s PCIe",
                             [](const XmlNode& n) { return !n.get("link_speed").empty(); })},
      {"no GPUDirect", setWhere("gpu", "gdr", "0", [](const XmlNode& n) { return n.get("gdr", "0") != "0"; })},
      {"NVLinks 5x wider", scaleNvlinkCount(5)},
      {"NVLinks 12x wider", scaleNvlinkCount(12)},
      {"NICs on the CPU", nicsOnTheCpu, /*nicsOnly=*/true},
  };
  return all;
}

// One test per kind of change, so that each stays short under the sanitizers.
class SearchVariants : public ::testing::TestWithParam<size_t> {};

TEST_P(SearchVariants, FastSearchEqualsTheFloatSearch) {
  WEFT_REQUIRE_CORPUS();
  const Variant& v = variants()[GetParam()];
  int compared = 0, applied = 0;
  constexpr size_t kStride = 3;  // of the corpus under a sanitizer
  for (const auto& file : test::sampleUnderSanitizer(test::corpusTopologies(), kStride, "corpus topologies")) {
    auto topo = TopoXml::load(file.string());
    if (!topo.isOk()) continue;
    TopoXml changed = *topo;
    if (changed.root() == nullptr || !v.apply(*changed.root())) continue;
    ++applied;
    for (int nodes : {1, 2}) {
      if (v.nicsOnly && nodes == 1) continue;
      SCOPED_TRACE(file.string() + " (" + v.name + ") nodes " + std::to_string(nodes));
      OfflineOptions o;
      o.nodes = nodes;
      o.collnet = o.nvls = true;
      if (!::weft::test::fastEqualsFloatReference(changed, o)) break;  // not a file NCCL can build
      ++compared;
    }
  }
  std::printf("[ variant  ] %s: %d corpus topologies changed, %d fast/reference comparisons\n", v.name, applied,
              compared);
  EXPECT_GE(compared, test::expectedUnderSanitizer(16, kStride)) << "too few variants built: is the corpus complete?";
}

INSTANTIATE_TEST_SUITE_P(CorpusVariants, SearchVariants, ::testing::Range<size_t>(0, 10),
                         [](const ::testing::TestParamInfo<size_t>& param) {
                           std::string name;
                           for (char c : std::string(variants()[param.param].name))
                             if (std::isalnum(static_cast<unsigned char>(c))) name += c;
                           return name;
                         });

}  // namespace
}  // namespace weft::topo
