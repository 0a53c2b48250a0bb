#include "plugins/net-ib/speed.h"

#include <bit>
#include <cstddef>

namespace weft::ib {
namespace {
// Indexed by the position of active_speed's bit; Mb/s per lane.
constexpr int kLaneMbps[] = {2500, 5000, 10000, 10000, 14000, 25000, 50000, 100000};
// Indexed by the position of active_width's bit; lanes.
constexpr int kLanes[] = {1, 4, 8, 12, 2};

template <size_t N>
int lookup(const int (&table)[N], uint8_t bits) {
  if (bits == 0) return table[0];
  size_t i = static_cast<size_t>(std::countr_zero(bits));
  return i < N ? table[i] : table[0];
}
}  // namespace

int portSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth) {
  return lookup(kLaneMbps, activeSpeed) * lookup(kLanes, activeWidth);
}

}  // namespace weft::ib
