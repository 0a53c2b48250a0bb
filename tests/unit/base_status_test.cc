#include <gtest/gtest.h>

#include "core/base/status.h"

namespace weft {
namespace {

Result<int> half(int v) {
  if (v % 2 != 0) return invalidArgument("odd value " + std::to_string(v));
  return v / 2;
}

Status quarter(int v, int* out) {
  WEFT_ASSIGN_OR_RETURN(int h, half(v));
  WEFT_ASSIGN_OR_RETURN(int q, half(h));
  *out = q;
  return Status::ok();
}

TEST(Status, CodesEqualNcclResultValues) {
  EXPECT_EQ(static_cast<int>(Code::kSuccess), 0);
  EXPECT_EQ(static_cast<int>(Code::kSystemError), 2);
  EXPECT_EQ(static_cast<int>(Code::kInternalError), 3);
  EXPECT_EQ(static_cast<int>(Code::kInvalidArgument), 4);
  EXPECT_EQ(static_cast<int>(Code::kInvalidUsage), 5);
  EXPECT_EQ(static_cast<int>(Code::kRemoteError), 6);
  EXPECT_EQ(static_cast<int>(Code::kInProgress), 7);
}

TEST(Status, ContextIsPrependedOnTheWayUp) {
  Status s = invalidArgument("bad bus id").withContext("topo.xml:4");
  EXPECT_EQ(s.message(), "topo.xml:4: bad bus id");
  EXPECT_EQ(s.toString(), "invalid argument: topo.xml:4: bad bus id");
  EXPECT_TRUE(Status::ok().withContext("ignored").isOk());
}

TEST(Result, AssignOrReturnPropagatesTheFirstError) {
  int out = 0;
  EXPECT_TRUE(quarter(8, &out).isOk());
  EXPECT_EQ(out, 2);
  Status s = quarter(6, &out);
  EXPECT_EQ(s.code(), Code::kInvalidArgument);
  EXPECT_EQ(s.message(), "odd value 3");
}

TEST(Status, ErrnoErrorNamesTheCall) {
  Status s = errnoError("open /nonexistent", ENOENT);
  EXPECT_EQ(s.code(), Code::kSystemError);
  EXPECT_EQ(s.message(), "open /nonexistent: No such file or directory");
}

}  // namespace
}  // namespace weft
