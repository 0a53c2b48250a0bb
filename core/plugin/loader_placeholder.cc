// The net/tuner plugin loader lives here (issue "Net plugin ABI and loader").
namespace weft::plugin {
int loaderPlaceholder() { return 0; }
}  // namespace weft::plugin
