// Opening a built weft net plugin as NCCL opens it, for the plugins' ABI tests: its exported
// tables, their ELF sizes, and whether a function pointer lands inside the plugin.
#pragma once

#include <dlfcn.h>
#include <elf.h>
#include <gtest/gtest.h>
#include <link.h>

#include <string>

#include "weft/net.h"

namespace weft::test {

class PluginAbi : public ::testing::Test {
 protected:
  explicit PluginAbi(std::string path) : path_(std::move(path)) {}
  void SetUp() override {
    handle_ = dlopen(path_.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
  }
  void TearDown() override {
    if (handle_) dlclose(handle_);
  }
  // The exported object and its ELF size; null when not exported.
  const void* symbol(const char* name, size_t* size) {
    void* p = dlsym(handle_, name);
    if (p == nullptr) return nullptr;
    Dl_info info;
    void* extra = nullptr;
    EXPECT_NE(dladdr1(p, &info, &extra, RTLD_DL_SYMENT), 0);
    auto* sym = static_cast<const ElfW(Sym)*>(extra);
    *size = sym ? sym->st_size : 0;
    return p;
  }
  // Whether `fn` is code inside the plugin library.
  bool inPlugin(const void* fn) {
    Dl_info a, b;
    void* self = dlsym(handle_, "ncclNetPlugin_v11");
    return fn != nullptr && dladdr(fn, &a) && dladdr(self, &b) && a.dli_fbase == b.dli_fbase;
  }
  // Checks the exported set (v11, v10, v8 and nothing else) and each table's size and name.
  void expectTables(const char* name) {
    size_t size = 0;
    auto* t11 = static_cast<const weft_net_v11_t*>(symbol("ncclNetPlugin_v11", &size));
    ASSERT_NE(t11, nullptr);
    EXPECT_EQ(size, 176u);  // 22 pointers: NCCL 2.28's ncclNet_v11_t
    EXPECT_STREQ(t11->name, name);
    EXPECT_EQ(t11->makeVDevice, nullptr);
    EXPECT_TRUE(inPlugin(reinterpret_cast<const void*>(t11->finalize)));
    EXPECT_TRUE(inPlugin(reinterpret_cast<const void*>(t11->setNetAttr)));
    auto* t10 = static_cast<const weft_net_v10_t*>(symbol("ncclNetPlugin_v10", &size));
    ASSERT_NE(t10, nullptr);
    EXPECT_EQ(size, 160u);
    EXPECT_STREQ(t10->name, name);
    auto* t8 = static_cast<const weft_net_v8_t*>(symbol("ncclNetPlugin_v8", &size));
    ASSERT_NE(t8, nullptr);
    EXPECT_EQ(size, 152u);
    EXPECT_STREQ(t8->name, name);
    EXPECT_TRUE(inPlugin(reinterpret_cast<const void*>(t8->irecvConsumed)));
    for (const char* s : {"ncclNetPlugin_v12", "ncclNetPlugin_v9", "ncclNetPlugin_v7", "ncclNetPlugin_v6",
                          "ncclCollNetPlugin_v11"})
      EXPECT_EQ(symbol(s, &size), nullptr) << s;
  }

  std::string path_;
  void* handle_ = nullptr;
};

}  // namespace weft::test
