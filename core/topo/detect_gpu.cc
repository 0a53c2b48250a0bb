#include "core/topo/detect_gpu.h"

#include "core/base/strings.h"

namespace weft::topo {
namespace {

Result<int64_t> intAttr(const TopoXml& xml, const XmlNode& n, std::string_view key) {
  auto v = parseInt(n.get(key), 0);
  if (!v) return invalidArgument(xml.where(n) + std::string(key) + "=\"" + n.get(key) + "\": expected an integer");
  return *v;
}

Status addNvLinks(DetectContext& ctx, XmlNode& gpuNode, const NvmlGpu& gpu, int sm) {
  if (gpuNode.child("nvlink") != nullptr) return Status::ok();  // described by the base file
  for (const NvmlLink& link : gpu.links) {
    if (link.link >= maxNvLinks(sm)) continue;
    // Several links to the same device make one element with a count.
    if (XmlNode* same = gpuNode.childWith("nvlink", "target", link.target)) {
      WEFT_ASSIGN_OR_RETURN(int64_t count, intAttr(ctx.xml(), *same, "count"));
      same->set("count", std::to_string(count + 1));
    } else {
      XmlNode& nvl = gpuNode.addChild("nvlink");
      nvl.set("target", link.target);
      nvl.set("count", "1");
    }
  }
  return Status::ok();
}

void addC2c(XmlNode& gpuNode, const NvmlGpu& gpu, int sm) {
  if (gpuNode.child("c2c") != nullptr || sm < 90 || gpu.c2cCount == 0) return;
  XmlNode& c2c = gpuNode.addChild("c2c");
  c2c.set("bw", std::to_string(gpu.c2cBw));
  c2c.set("count", std::to_string(gpu.c2cCount));
}

// The PCI class of what each NVLink reaches; a device that sysfs does not show (inside a VM,
// or NVML's "fffffff:ffff:ff") is taken to be an NVSwitch.
void fillTargetClasses(const DetectContext& ctx, XmlNode& gpuNode) {
  for (const auto& sub : gpuNode.children()) {
    if (sub->name() != "nvlink" || sub->has("tclass")) continue;
    std::string target = sub->get("target");
    auto path = ctx.sysfs().pciPath(target);
    if (!path || target == "fffffff:ffff:ff") {
      sub->set("tclass", "0x068000");
    } else if (std::string cls = ctx.sysfs().read(*path, "class"); !cls.empty()) {
      sub->set("tclass", cls);
    }
  }
}

}  // namespace

unsigned maxNvLinks(int sm) { return sm < 60 ? 0 : sm < 70 ? 4 : sm < 80 ? 6 : sm < 90 ? 12 : 18; }

Result<XmlNode*> fillGpu(DetectContext& ctx, const NvmlGpu& gpu) {
  WEFT_ASSIGN_OR_RETURN(XmlNode * pci, ctx.placePci(gpu.busId, "0x03"));
  XmlNode* gpuNode = pci->child("gpu");
  if (gpuNode == nullptr) gpuNode = &pci->addChild("gpu");
  gpuNode->init("dev", std::to_string(gpu.index));
  WEFT_ASSIGN_OR_RETURN(int64_t dev, intAttr(ctx.xml(), *gpuNode, "dev"));
  if (dev == -1) return static_cast<XmlNode*>(nullptr);
  gpuNode->init("sm", std::to_string(gpu.sm));
  WEFT_ASSIGN_OR_RETURN(int64_t sm, intAttr(ctx.xml(), *gpuNode, "sm"));
  WEFT_TRY(addNvLinks(ctx, *gpuNode, gpu, static_cast<int>(sm)));
  addC2c(*gpuNode, gpu, static_cast<int>(sm));
  fillTargetClasses(ctx, *gpuNode);
  return gpuNode;
}

}  // namespace weft::topo
