// One adapter template per tuner ABI version; every difference between versions is an
// `if constexpr` branch below (the list is in tuner_adapter.h).
#include "core/plugin/tuner_adapter.h"

namespace weft::plugin {
namespace {

constexpr int kProtos = WEFT_TUNER_NUM_PROTOCOLS;
constexpr float kIgnore = static_cast<float>(WEFT_TUNER_ALGO_PROTO_IGNORE);

float cell(const float* table, int algo, int proto) { return table[algo * kProtos + proto]; }

template <int V> struct Abi;
template <> struct Abi<2> { using Table = weft_tuner_v2_t; };
template <> struct Abi<3> { using Table = weft_tuner_v3_t; };
template <> struct Abi<4> { using Table = weft_tuner_v4_t; };
template <> struct Abi<5> { using Table = weft_tuner_v5_t; };

template <int V>
class TunerAdapter final : public TunerApi {
  using Table = typename Abi<V>::Table;

 public:
  explicit TunerAdapter(const Table* t) : t_(t) {}
  int abiVersion() const override { return V; }
  const char* name() const override { return t_->name; }

  int init(void** ctx, uint64_t commId, size_t nRanks, size_t nNodes, weft_debug_logger_t logger,
           weft_nvl_domain_info_v5_t* nvlDomain, weft_tuner_constants_v5_t* constants) override {
    if constexpr (V == 5) {
      return t_->init(ctx, commId, nRanks, nNodes, logger, nvlDomain, constants);
    } else {
      // Older versions never learn the communicator id, the NVLink domain or the constants.
      (void)commId, (void)nvlDomain, (void)constants;
      return t_->init(nRanks, nNodes, logger, ctx);
    }
  }

  int getCollInfo(void* ctx, int collType, size_t nBytes, int numPipeOps, float* table, int numAlgo, int numProto,
                  int regBuff, int* nChannels) override {
    auto func = static_cast<weft_func_t>(collType);
    // The ABI spells the contiguous table as float**; plugins cast it back.
    auto** asAbi = reinterpret_cast<float**>(table);
    if constexpr (V >= 4) {
      return t_->getCollInfo(ctx, func, nBytes, numPipeOps, asAbi, numAlgo, numProto, regBuff, nChannels);
    } else if constexpr (V == 3) {
      (void)regBuff;
      return t_->getCollInfo(ctx, func, nBytes, numPipeOps, asAbi, numAlgo, numProto, nChannels);
    } else {
      (void)regBuff, (void)numAlgo, (void)numProto;
      int algorithm = WEFT_ALGO_UNDEF;
      int protocol = WEFT_PROTO_UNDEF;
      int rc = t_->getCollInfo(ctx, func, nBytes, v2CollNetSupport(table) ? 1 : 0, v2NvlsSupport(table) ? 1 : 0,
                               numPipeOps, &algorithm, &protocol, nChannels);
      if (rc != 0) return rc;
      bool inRange = algorithm >= 0 && algorithm < WEFT_TUNER_NUM_ALGORITHMS && protocol >= 0 &&
                     protocol < WEFT_TUNER_NUM_PROTOCOLS;
      if (inRange && cell(table, algorithm, protocol) != kIgnore) table[algorithm * kProtos + protocol] = 0.0f;
      return rc;
    }
  }

  int finalize(void* ctx) override {
    if constexpr (V == 5) {
      return t_->finalize(ctx);
    } else {
      return t_->destroy(ctx);
    }
  }

 private:
  const Table* t_;
};

}  // namespace

bool v2NvlsSupport(const float* table) {
  return cell(table, WEFT_ALGO_NVLS, WEFT_PROTO_SIMPLE) != kIgnore ||
         cell(table, WEFT_ALGO_NVLS_TREE, WEFT_PROTO_SIMPLE) != kIgnore;
}

bool v2CollNetSupport(const float* table) { return cell(table, WEFT_ALGO_COLLNET_CHAIN, WEFT_PROTO_SIMPLE) != kIgnore; }

std::unique_ptr<TunerApi> makeTunerAdapter(int version, const void* table) {
  switch (version) {
    case 2: return std::make_unique<TunerAdapter<2>>(static_cast<const weft_tuner_v2_t*>(table));
    case 3: return std::make_unique<TunerAdapter<3>>(static_cast<const weft_tuner_v3_t*>(table));
    case 4: return std::make_unique<TunerAdapter<4>>(static_cast<const weft_tuner_v4_t*>(table));
    case 5: return std::make_unique<TunerAdapter<5>>(static_cast<const weft_tuner_v5_t*>(table));
    default: return nullptr;
  }
}

}  // namespace weft::plugin
