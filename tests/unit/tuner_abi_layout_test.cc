// The C11 unit tuner_abi_layout.c checks every size and offset at compile time; this test makes
// its result visible (skipped on ABIs other than x86-64/aarch64 LP64).
#include <gtest/gtest.h>

extern "C" int weftTunerAbiLayoutChecked(void);

TEST(TunerAbiLayout, MatchesNccl2289OnThisAbi) {
  if (!weftTunerAbiLayoutChecked()) GTEST_SKIP() << "layout asserts cover x86-64 and aarch64 LP64 only";
  SUCCEED();
}
