#include <gtest/gtest.h>

#include "core/topo/xml.h"
#include "tests/support/corpus.h"

namespace weft::topo {
namespace {

TEST(TopoXml, KeepsAttributeOrderAndUnknownElements) {
  auto xml = TopoXml::parse(
      "<system version=\"1\">\n"
      "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
      "    <xgmi target=\"0000:01:00.0\" count=\"7\"/>\n"
      "  </cpu>\n"
      "</system>\n",
      "t.xml");
  ASSERT_TRUE(xml.isOk()) << xml.status().toString();
  EXPECT_TRUE(xml->expectRoot("system").isOk());
  const XmlNode* cpu = xml->root()->child("cpu");
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(cpu->attrs().size(), 3u);
  EXPECT_EQ(cpu->attrs()[1].first, "arch");
  EXPECT_EQ(cpu->line(), 2);
  ASSERT_NE(cpu->child("xgmi"), nullptr);
  EXPECT_EQ(xml->toString(),
            "<system version=\"1\">\n"
            "  <cpu numaid=\"0\" arch=\"x86_64\" vendor=\"AuthenticAMD\">\n"
            "    <xgmi target=\"0000:01:00.0\" count=\"7\"/>\n"
            "  </cpu>\n"
            "</system>\n");
}

TEST(TopoXml, MalformedSyntaxNamesFileLineAndColumn) {
  auto xml = TopoXml::parse("<system version=\"1\">\n  <cpu numaid=\"0\">\n</system>\n", "bad.xml");
  ASSERT_FALSE(xml.isOk());
  EXPECT_NE(xml.status().message().find("bad.xml:3:"), std::string::npos) << xml.status().message();
}

TEST(TopoXml, WrongVersionIsAnError) {
  auto xml = TopoXml::parse("<system version=\"2\"/>", "v.xml");
  ASSERT_TRUE(xml.isOk());
  Status s = xml->expectRoot("system");
  EXPECT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("wrong version 2, 1 needed"), std::string::npos) << s.message();
}

TEST(TopoXml, EveryCorpusTopologyRoundTripsExactly) {
  WEFT_REQUIRE_CORPUS();
  auto files = test::corpusTopologies();
  ASSERT_GT(files.size(), 90u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    auto first = TopoXml::load(path.string());
    ASSERT_TRUE(first.isOk()) << first.status().toString();
    std::string saved = first->toString();
    auto second = TopoXml::parse(saved, "saved");
    ASSERT_TRUE(second.isOk()) << second.status().toString();
    EXPECT_TRUE(*first == *second);
    EXPECT_EQ(second->toString(), saved);
  }
}

}  // namespace
}  // namespace weft::topo
