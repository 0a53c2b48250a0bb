// NCCL_IB_HCA: which device ports the IB plugin uses. The syntax is NCCL's:
//   [^][=]name[:port],name[:port],…
// A leading '^' turns the whole list into an exclusion list; a leading '=' (after any '^')
// makes names match exactly, otherwise each entry's name is a prefix ("mlx5" selects mlx5_0,
// mlx5_1, …). An entry without ":port" matches every port of its devices. An empty setting
// selects everything.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace weft::ib {

struct HcaFilter {
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };
  bool exclude = false;  // '^': use every port that matches no entry
  bool exact = false;    // '=': names match whole device names
  std::vector<Entry> entries;

  // Whether port `port` of device `device` is to be used.
  bool selects(std::string_view device, int port) const;
};

// Parses a setting. nullopt, with `*problem` set, for an entry whose port is not a positive
// integer ("mlx5_0:x") or whose name is empty (":1"); empty entries (",,") are ignored, as NCCL
// ignores them.
std::optional<HcaFilter> parseHcaFilter(std::string_view text, std::string* problem);

}  // namespace weft::ib
