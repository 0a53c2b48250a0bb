#include "tools/weft/perf_data.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace weft::tool::perf {
namespace {

// How an element's bits are laid out.
struct Layout {
  int bytes;
  bool isFloat;
  bool isSigned;
  int expBits;   // floating point only
  int mantBits;  // stored mantissa bits
  bool hasInf;   // IEEE-style infinities (f8e4m3 has none: its top exponent is finite)
};

Layout layoutOf(DataType type) {
  switch (type) {
    case DataType::kInt8:
      return {1, false, true, 0, 0, false};
    case DataType::kUint8:
      return {1, false, false, 0, 0, false};
    case DataType::kInt32:
      return {4, false, true, 0, 0, false};
    case DataType::kUint32:
      return {4, false, false, 0, 0, false};
    case DataType::kInt64:
      return {8, false, true, 0, 0, false};
    case DataType::kUint64:
      return {8, false, false, 0, 0, false};
    case DataType::kHalf:
      return {2, true, true, 5, 10, true};
    case DataType::kFloat:
      return {4, true, true, 8, 23, true};
    case DataType::kDouble:
      return {8, true, true, 11, 52, true};
    case DataType::kBfloat16:
      return {2, true, true, 8, 7, true};
    case DataType::kF8e4m3:
      return {1, true, true, 4, 3, false};
    case DataType::kF8e5m2:
      return {1, true, true, 5, 2, true};
  }
  return {1, false, false, 0, 0, false};
}

uint64_t maskOf(const Layout& l) { return l.bytes == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * l.bytes)) - 1; }
uint64_t signBitOf(const Layout& l) { return uint64_t{1} << (8 * l.bytes - 1); }

// splitmix64's finaliser: a bijection that scrambles every bit.
uint64_t mix(uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
// One stream per (seed, rank); distinct indices of a stream give distinct draws.
uint64_t streamOf(uint64_t seed, uint64_t rank) { return mix(mix(seed) ^ (rank + 1) * 0xd1b54a32d192ed03ULL); }
uint64_t draw(uint64_t stream, uint64_t index) { return mix(stream ^ index * 0x9e3779b97f4a7c15ULL); }
constexpr uint64_t kCommonStream = 0xffffffffULL;  // the stream that picks the contributing ranks

// Round to nearest even into a narrow format (half, bfloat16, fp8): sign, exponent, mantissa.
uint64_t encodeNarrow(double value, const Layout& l) {
  const int e = l.expBits, m = l.mantBits, bias = (1 << (e - 1)) - 1;
  const uint64_t sign = std::signbit(value) ? uint64_t{1} << (e + m) : 0;
  const uint64_t expAllOnes = (uint64_t{1} << e) - 1;
  if (std::isnan(value)) return sign | expAllOnes << m | ((uint64_t{1} << m) - 1);
  double a = std::fabs(value);
  if (a == 0) return sign;
  int exp2 = 0;
  std::frexp(a, &exp2);  // a = f * 2^exp2, f in [0.5, 1)
  int64_t biased = exp2 - 1 + bias;
  uint64_t mant;
  if (biased >= 1) {
    mant = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, m - (exp2 - 1))));  // in [2^m, 2^(m+1)]
    if (mant >> (m + 1)) {
      mant >>= 1;
      ++biased;
    }
    mant -= uint64_t{1} << m;
  } else {  // subnormal: units of 2^(1 - bias - m)
    mant = static_cast<uint64_t>(std::nearbyint(std::ldexp(a, m - 1 + bias)));
    biased = 0;
    if (mant >> m) {
      biased = 1;
      mant -= uint64_t{1} << m;
    }
  }
  const uint64_t mantAllOnes = (uint64_t{1} << m) - 1;
  if (l.hasInf ? biased >= static_cast<int64_t>(expAllOnes)
               : biased > static_cast<int64_t>(expAllOnes) ||
                     (biased == static_cast<int64_t>(expAllOnes) && mant == mantAllOnes)) {
    return l.hasInf ? (sign | expAllOnes << m) : (sign | expAllOnes << m | mantAllOnes);  // inf; e4m3: NaN
  }
  return sign | static_cast<uint64_t>(biased) << m | mant;
}

uint64_t encodeWith(double value, const Layout& l) {
  if (!l.isFloat) return static_cast<uint64_t>(static_cast<int64_t>(value)) & maskOf(l);
  if (l.bytes == 8) return std::bit_cast<uint64_t>(value);
  if (l.bytes == 4 && l.expBits == 8) return std::bit_cast<uint32_t>(static_cast<float>(value));
  return encodeNarrow(value, l);
}

// A finite, non-zero value with a random sign, mantissa and mid-range exponent (nccl-tests'
// genInput for copies and min/max): never an infinity, a NaN or a zero.
uint64_t randomFinite(uint64_t r, const Layout& l) {
  const int e = l.expBits, m = l.mantBits;
  uint64_t sign = r & 1;
  r ^= r >> 1;
  uint64_t exp = (r & ((uint64_t{1} << (e - 1)) - 1)) + (uint64_t{1} << (e - 2));
  r ^= r >> e;
  uint64_t mant = r & ((uint64_t{1} << m) - 1);
  return sign << (e + m) | exp << m | mant;
}

// Orders floating-point bits as their values (sign and magnitude to a signed integer).
int64_t orderKey(uint64_t bits, const Layout& l) {
  uint64_t sign = signBitOf(l);
  int64_t mag = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

int64_t signExtend(uint64_t bits, const Layout& l) {
  if (l.bytes == 8) return static_cast<int64_t>(bits);
  int shift = 64 - 8 * l.bytes;
  return static_cast<int64_t>(bits << shift) >> shift;
}

// Integers up to 2^(mant+1) are exact, as is every partial sum of them that stays below that.
class IntEncoder {
 public:
  explicit IntEncoder(const Layout& l) : l_(l) {
    if (l.isFloat && l.mantBits <= 10) {
      limit_ = int64_t{1} << (l.mantBits + 1);
      table_.resize(static_cast<size_t>(2 * limit_ + 1));
      for (int64_t v = -limit_; v <= limit_; ++v) table_[static_cast<size_t>(v + limit_)] = encodeNarrow(double(v), l);
    }
  }
  uint64_t operator()(int64_t v) const {
    if (!table_.empty() && v >= -limit_ && v <= limit_) return table_[static_cast<size_t>(v + limit_)];
    return encodeWith(static_cast<double>(v), l_);
  }

 private:
  Layout l_;
  int64_t limit_ = 0;
  std::vector<uint64_t> table_;
};

// Inputs and results of one reduction. See the header for the scheme.
class ReduceGen {
 public:
  ReduceGen(DataType type, RedOp op, int nranks, uint64_t seed)
      : l_(layoutOf(type)), op_(op), n_(nranks), enc_(l_), common_(streamOf(seed, kCommonStream)) {
    for (int r = 0; r < nranks; ++r) streams_.push_back(streamOf(seed, static_cast<uint64_t>(r)));
    if (l_.isFloat) {
      exactLimit_ = int64_t{1} << (l_.mantBits + 1);
      int64_t smax = (op == RedOp::kMulSum && nranks > 1) ? 2 : 1;
      spread_ = exactLimit_ / (int64_t{nranks} * smax);
      soloLimit_ = exactLimit_ / smax;
    } else if (op == RedOp::kAvg) {
      uint64_t maxPositive = l_.isSigned ? maskOf(l_) >> 1 : maskOf(l_);
      avgRange_ = maxPositive / static_cast<uint64_t>(nranks);
    }
  }

  uint64_t input(int rank, uint64_t index) const {
    uint64_t r = draw(streams_[static_cast<size_t>(rank)], index);
    return l_.isFloat ? floatInput(rank, index, r) : intInput(r);
  }

  uint64_t expected(uint64_t index) const { return l_.isFloat ? floatExpected(index) : intExpected(index); }

  static uint64_t scalar(int rank) { return rank % 2 == 0 ? 1 : 2; }

 private:
  uint64_t intInput(uint64_t r) const {
    uint64_t bits = r & maskOf(l_);
    if (op_ == RedOp::kProd && bits == 0) return 1;  // a zero would hide every other factor
    if (op_ == RedOp::kAvg) return avgRange_ == ~uint64_t{0} ? r : r % (avgRange_ + 1);  // no overflow
    return bits;
  }

  uint64_t intExpected(uint64_t index) const {
    uint64_t acc = input(0, index);
    if (op_ == RedOp::kMulSum) acc *= scalar(0);
    for (int r = 1; r < n_; ++r) {
      uint64_t x = input(r, index);
      switch (op_) {
        case RedOp::kSum:
        case RedOp::kAvg:
          acc += x;
          break;
        case RedOp::kMulSum:
          acc += x * scalar(r);
          break;
        case RedOp::kProd:
          acc *= x;
          break;
        case RedOp::kMax:
          acc = lessInt(acc, x) ? x : acc;
          break;
        case RedOp::kMin:
          acc = lessInt(x, acc) ? x : acc;
          break;
      }
    }
    if (op_ == RedOp::kAvg) acc /= static_cast<uint64_t>(n_);
    return acc & maskOf(l_);
  }

  bool lessInt(uint64_t a, uint64_t b) const {
    return l_.isSigned ? signExtend(a & maskOf(l_), l_) < signExtend(b & maskOf(l_), l_)
                       : (a & maskOf(l_)) < (b & maskOf(l_));
  }

  int activeRank(uint64_t index) const { return static_cast<int>(draw(common_, index) % static_cast<uint64_t>(n_)); }

  // The integer a rank contributes to a float sum, product or average.
  int64_t floatValue(int rank, uint64_t index, uint64_t r) const {
    switch (op_) {
      case RedOp::kSum:
      case RedOp::kMulSum:
        if (spread_ >= 1) return static_cast<int64_t>(r % static_cast<uint64_t>(2 * spread_ + 1)) - spread_;
        return rank == activeRank(index)
                   ? static_cast<int64_t>(r % static_cast<uint64_t>(2 * soloLimit_ + 1)) - soloLimit_
                   : 0;
      case RedOp::kProd: {
        int64_t mag = rank == activeRank(index) ? 1 + static_cast<int64_t>(r % static_cast<uint64_t>(exactLimit_)) : 1;
        return (r >> 63) ? -mag : mag;
      }
      case RedOp::kAvg: {
        int a = activeRank(index);
        bool contributes = rank == a || (n_ > 1 && rank == (a + 1) % n_);
        return contributes ? 1 + static_cast<int64_t>(r & ((uint64_t{1} << l_.mantBits) - 1)) : 0;
      }
      case RedOp::kMax:
      case RedOp::kMin:
        break;
    }
    return 0;
  }

  uint64_t floatInput(int rank, uint64_t index, uint64_t r) const {
    if (op_ == RedOp::kMax || op_ == RedOp::kMin) return randomFinite(r, l_);
    return enc_(floatValue(rank, index, r));
  }

  uint64_t floatExpected(uint64_t index) const {
    if (op_ == RedOp::kMax || op_ == RedOp::kMin) {
      uint64_t best = input(0, index);
      for (int r = 1; r < n_; ++r) {
        uint64_t x = input(r, index);
        bool better = op_ == RedOp::kMax ? orderKey(x, l_) > orderKey(best, l_) : orderKey(x, l_) < orderKey(best, l_);
        if (better) best = x;
      }
      return best;
    }
    int64_t acc = op_ == RedOp::kProd ? 1 : 0;
    for (int r = 0; r < n_; ++r) {
      int64_t v = floatValue(r, index, draw(streams_[static_cast<size_t>(r)], index));
      if (op_ == RedOp::kProd)
        acc *= v;
      else
        acc += op_ == RedOp::kMulSum ? v * static_cast<int64_t>(scalar(r)) : v;
    }
    if (op_ == RedOp::kAvg) return encodeWith(static_cast<double>(acc) / n_, l_);
    return enc_(acc);
  }

  Layout l_;
  RedOp op_;
  int n_;
  IntEncoder enc_;
  uint64_t common_;
  std::vector<uint64_t> streams_;
  int64_t exactLimit_ = 0;  // floats: 2^(mantissa bits + 1)
  int64_t spread_ = 0;      // floats: each rank adds an integer in [-spread, spread]
  int64_t soloLimit_ = 0;   // floats, spread 0: the one contributing rank's bound
  uint64_t avgRange_ = 0;   // integers: avg inputs in [0, range] so that the sum cannot wrap
};

template <typename U, typename F>
void fillAs(void* dst, size_t count, F&& element) {
  U* out = static_cast<U*>(dst);
  for (size_t i = 0; i < count; ++i) out[i] = static_cast<U>(element(i));
}

template <typename F>
void fill(void* dst, size_t count, const Layout& l, F&& element) {
  switch (l.bytes) {
    case 1:
      fillAs<uint8_t>(dst, count, element);
      break;
    case 2:
      fillAs<uint16_t>(dst, count, element);
      break;
    case 4:
      fillAs<uint32_t>(dst, count, element);
      break;
    default:
      fillAs<uint64_t>(dst, count, element);
      break;
  }
}

uint64_t load(const void* p, size_t i, int bytes) {
  uint64_t v = 0;
  std::memcpy(&v, static_cast<const char*>(p) + i * static_cast<size_t>(bytes), static_cast<size_t>(bytes));
  return v;  // little-endian: the element's bits in the low bytes
}

}  // namespace

void fillCopy(void* dst, size_t count, DataType type, uint64_t seed, uint64_t index0) {
  const Layout l = layoutOf(type);
  const uint64_t stream = streamOf(seed, 0);
  fill(dst, count, l, [&](size_t i) {
    uint64_t r = draw(stream, index0 + i);
    return l.isFloat ? randomFinite(r, l) : r & maskOf(l);
  });
}

void fillReduceInput(void* dst, size_t count, DataType type, RedOp op, int nranks, int rank, uint64_t seed,
                     uint64_t index0) {
  ReduceGen gen(type, op, nranks, seed);
  fill(dst, count, layoutOf(type), [&](size_t i) { return gen.input(rank, index0 + i); });
}

void fillReduceExpected(void* dst, size_t count, DataType type, RedOp op, int nranks, uint64_t seed, uint64_t index0) {
  ReduceGen gen(type, op, nranks, seed);
  fill(dst, count, layoutOf(type), [&](size_t i) { return gen.expected(index0 + i); });
}

uint64_t premulScalar(DataType type, int rank) { return encode(static_cast<double>(ReduceGen::scalar(rank)), type); }

int64_t countWrong(const void* got, const void* expected, size_t count, DataType type, RedOp op, bool reduced) {
  const Layout l = layoutOf(type);
  if (std::memcmp(got, expected, count * static_cast<size_t>(l.bytes)) == 0) return 0;
  // nccl-tests: NCCL may multiply by 1/nranks in a wider type than the data, so avg is exact to
  // 2 ulps only.
  const int64_t tolerance = (reduced && op == RedOp::kAvg && l.isFloat) ? 2 : 0;
  int64_t wrong = 0;
  for (size_t i = 0; i < count; ++i) {
    uint64_t a = load(got, i, l.bytes), b = load(expected, i, l.bytes);
    if (a == b) continue;
    if (tolerance > 0) {
      int64_t d = orderKey(a, l) - orderKey(b, l);
      if (d <= tolerance && d >= -tolerance) continue;
    }
    ++wrong;
  }
  return wrong;
}

uint64_t encode(double value, DataType type) { return encodeWith(value, layoutOf(type)); }

double decode(uint64_t bits, DataType type) {
  const Layout l = layoutOf(type);
  bits &= maskOf(l);
  if (!l.isFloat) return l.isSigned ? static_cast<double>(signExtend(bits, l)) : static_cast<double>(bits);
  if (l.bytes == 8) return std::bit_cast<double>(bits);
  if (l.bytes == 4 && l.expBits == 8) return std::bit_cast<float>(static_cast<uint32_t>(bits));
  const int e = l.expBits, m = l.mantBits, bias = (1 << (e - 1)) - 1;
  const uint64_t expAllOnes = (uint64_t{1} << e) - 1, mantAllOnes = (uint64_t{1} << m) - 1;
  const double sign = (bits >> (e + m)) & 1 ? -1.0 : 1.0;
  const uint64_t exp = (bits >> m) & expAllOnes, mant = bits & mantAllOnes;
  if (l.hasInf && exp == expAllOnes) return mant ? std::nan("") : sign * HUGE_VAL;
  if (!l.hasInf && exp == expAllOnes && mant == mantAllOnes) return std::nan("");
  if (exp == 0) return sign * std::ldexp(static_cast<double>(mant), 1 - bias - m);
  return sign * std::ldexp(static_cast<double>(mant | (uint64_t{1} << m)), static_cast<int>(exp) - bias - m);
}

}  // namespace weft::tool::perf
