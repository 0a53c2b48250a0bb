#include "core/coll/numeric.h"

namespace weft::coll {

size_t typeSize(weft_datatype_t type) {
  switch (type) {
    case weftInt8:
    case weftUint8:
    case weftFloat8e4m3:
    case weftFloat8e5m2:
      return 1;
    case weftFloat16:
    case weftBfloat16:
      return 2;
    case weftInt32:
    case weftUint32:
    case weftFloat32:
      return 4;
    case weftInt64:
    case weftUint64:
    case weftFloat64:
      return 8;
    default:
      return 0;
  }
}

bool isIntegerType(weft_datatype_t type) {
  return type == weftInt8 || type == weftUint8 || type == weftInt32 || type == weftUint32 ||
         type == weftInt64 || type == weftUint64;
}

bool isSignedIntegerType(weft_datatype_t type) {
  return type == weftInt8 || type == weftInt32 || type == weftInt64;
}

double elementToDouble(weft_datatype_t type, uint64_t bits) {
  switch (type) {
    case weftInt8: return double(int8_t(bits));
    case weftUint8: return double(uint8_t(bits));
    case weftInt32: return double(int32_t(bits));
    case weftUint32: return double(uint32_t(bits));
    case weftInt64: return double(int64_t(bits));
    case weftUint64: return double(bits);
    case weftFloat16: return halfToFloat(uint16_t(bits));
    case weftFloat32: return std::bit_cast<float>(uint32_t(bits));
    case weftFloat64: return std::bit_cast<double>(bits);
    case weftBfloat16: return bf16ToFloat(uint16_t(bits));
    case weftFloat8e4m3: return fp8ToFloat(uint8_t(bits), Fp8Format::kE4M3);
    case weftFloat8e5m2: return fp8ToFloat(uint8_t(bits), Fp8Format::kE5M2);
    default: return 0.0;
  }
}

uint64_t elementFromDouble(weft_datatype_t type, double value) {
  const float f = float(value);
  if (isIntegerType(type)) {
    // Through int64 for negatives: converting a negative double to an unsigned type is undefined.
    const uint64_t wide = value < 0 ? uint64_t(int64_t(value)) : uint64_t(value);
    const size_t bits = 8 * typeSize(type);
    return bits == 64 ? wide : wide & ((uint64_t(1) << bits) - 1);
  }
  switch (type) {
    case weftFloat16: return floatToHalf(f);
    case weftFloat32: return std::bit_cast<uint32_t>(f);
    case weftFloat64: return std::bit_cast<uint64_t>(value);
    case weftBfloat16: return floatToBf16(f);
    case weftFloat8e4m3: return floatToFp8(f, Fp8Format::kE4M3);
    case weftFloat8e5m2: return floatToFp8(f, Fp8Format::kE5M2);
    default: return 0;
  }
}

}  // namespace weft::coll
