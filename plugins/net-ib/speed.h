// A port's data rate from ibv_port_attr: active_speed is one bit per signalling rate (per lane)
// and active_width one bit per lane count; the product, in Mb/s, is what NCCL's topology
// search takes as the NIC's bandwidth.
//
//   active_speed bit   name     Gb/s per lane        active_width bit  lanes
//   0x01               SDR      2.5                  0x01              1x
//   0x02               DDR      5                    0x02              4x
//   0x04               QDR      10                   0x04              8x
//   0x08               FDR10    10                   0x08              12x
//   0x10               FDR      14                   0x10              2x
//   0x20               EDR      25
//   0x40               HDR      50
//   0x80               NDR      100
//
// FDR and faster are quoted at their data rate (FDR 14.0625 Gb/s signals 64b/66b: 14 Gb/s
// usable, rounded as NCCL rounds). Rates newer than the rdma-core 44 headers (XDR) do not fit
// active_speed's 8 bits and are not reported by it.
#pragma once

#include <cstdint>

namespace weft::ib {

// The lowest set bit of each field counts (a field should have exactly one). Unknown or zero
// fields give the slowest entry (SDR, 1x): a port that works but reports nothing sensible
// must not look faster than it is.
int portSpeedMbps(uint8_t activeSpeed, uint8_t activeWidth);

}  // namespace weft::ib
