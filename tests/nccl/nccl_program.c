/* A program written against nccl.h only, as NCCL's users write them. Built three ways by
 * tests/nccl/CMakeLists.txt: weft's nccl.h + weft's libnccl; NVIDIA's nccl.h + weft's libnccl;
 * NVIDIA's nccl.h + NVIDIA's libnccl.so.2 at link time, run on weft's through LD_LIBRARY_PATH.
 *
 *   nccl_program MODE NRANKS
 *
 * Ranks are forked processes (the parent gets the unique id, forks, and waits for every child
 * with a deadline); buffers are host memory, the stream argument is NULL. Exit 0 when every check
 * of every rank passed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <nccl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int gRank = -1;
static int gFailures = 0;
static ncclUniqueId gSecondId; /* forked ranks get two ids: an id serves one init, as in NCCL */

#define CHECK(cond, ...)                                                         \
  do {                                                                           \
    if (!(cond)) {                                                               \
      fprintf(stderr, "[rank %d] FAIL %s:%d: ", gRank, __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                                              \
      fprintf(stderr, "\n");                                                     \
      ++gFailures;                                                               \
    }                                                                            \
  } while (0)

#define NCCLCHECK(call)                                                                           \
  do {                                                                                            \
    ncclResult_t r_ = (call);                                                                     \
    if (r_ != ncclSuccess) {                                                                      \
      fprintf(stderr, "[rank %d] FAIL %s:%d: %s -> %d (%s): %s\n", gRank, __FILE__, __LINE__, #call, \
              (int)r_, ncclGetErrorString(r_), ncclGetLastError(NULL));                           \
      exit(2);                                                                                    \
    }                                                                                             \
  } while (0)

static double nowSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- element encoding: small non-negative integers, exact in every type -------------------- */

static size_t typeSize(ncclDataType_t t) {
  switch (t) {
    case ncclInt8: case ncclUint8: case ncclFloat8e4m3: case ncclFloat8e5m2: return 1;
    case ncclFloat16: case ncclBfloat16: return 2;
    case ncclInt32: case ncclUint32: case ncclFloat32: return 4;
    default: return 8;
  }
}

static int isFloat(ncclDataType_t t) {
  return t == ncclFloat16 || t == ncclFloat32 || t == ncclFloat64 || t == ncclBfloat16 || t == ncclFloat8e4m3 ||
         t == ncclFloat8e5m2;
}

/* A minifloat with `eb` exponent bits (bias 2^(eb-1)-1) and `mb` mantissa bits, v >= 0 normal. */
static uint32_t encodeMini(double v, int eb, int mb) {
  if (v == 0) return 0;
  int e;
  double m = frexp(v, &e); /* v = m * 2^e, m in [0.5, 1) */
  uint32_t exp = (uint32_t)(e - 1 + ((1 << (eb - 1)) - 1));
  uint32_t mant = (uint32_t)llround((2 * m - 1) * (double)(1u << mb));
  return (exp << mb) | mant;
}

static double decodeMini(uint32_t bits, int eb, int mb) {
  uint32_t exp = (bits >> mb) & ((1u << eb) - 1), mant = bits & ((1u << mb) - 1);
  int sign = (bits >> (eb + mb)) & 1;
  double v = exp == 0 ? ldexp((double)mant, 1 - ((1 << (eb - 1)) - 1) - mb)
                      : ldexp(1.0 + (double)mant / (double)(1u << mb), (int)exp - ((1 << (eb - 1)) - 1));
  return sign ? -v : v;
}

static void put(ncclDataType_t t, void* buf, size_t i, double v) {
  char* p = (char*)buf + i * typeSize(t);
  switch (t) {
    case ncclInt8: *(int8_t*)p = (int8_t)v; break;
    case ncclUint8: *(uint8_t*)p = (uint8_t)v; break;
    case ncclInt32: *(int32_t*)p = (int32_t)v; break;
    case ncclUint32: *(uint32_t*)p = (uint32_t)v; break;
    case ncclInt64: *(int64_t*)p = (int64_t)v; break;
    case ncclUint64: *(uint64_t*)p = (uint64_t)v; break;
    case ncclFloat32: *(float*)p = (float)v; break;
    case ncclFloat64: *(double*)p = v; break;
    case ncclFloat16: *(uint16_t*)p = (uint16_t)encodeMini(v, 5, 10); break;
    case ncclBfloat16: *(uint16_t*)p = (uint16_t)encodeMini(v, 8, 7); break;
    case ncclFloat8e4m3: *(uint8_t*)p = (uint8_t)encodeMini(v, 4, 3); break;
    case ncclFloat8e5m2: *(uint8_t*)p = (uint8_t)encodeMini(v, 5, 2); break;
    default: break;
  }
}

static double get(ncclDataType_t t, const void* buf, size_t i) {
  const char* p = (const char*)buf + i * typeSize(t);
  switch (t) {
    case ncclInt8: return *(const int8_t*)p;
    case ncclUint8: return *(const uint8_t*)p;
    case ncclInt32: return *(const int32_t*)p;
    case ncclUint32: return *(const uint32_t*)p;
    case ncclInt64: return (double)*(const int64_t*)p;
    case ncclUint64: return (double)*(const uint64_t*)p;
    case ncclFloat32: return *(const float*)p;
    case ncclFloat64: return *(const double*)p;
    case ncclFloat16: return decodeMini(*(const uint16_t*)p, 5, 10);
    case ncclBfloat16: return decodeMini(*(const uint16_t*)p, 8, 7);
    case ncclFloat8e4m3: return decodeMini(*(const uint8_t*)p, 4, 3);
    case ncclFloat8e5m2: return decodeMini(*(const uint8_t*)p, 5, 2);
    default: return NAN;
  }
}

/* Rank r's input at i: 1 or 2, so that sums and products of up to 4 ranks stay exact everywhere. */
static double input(int r, size_t i) { return (double)((r + (int)i) % 2 + 1); }

static double reduceExpect(ncclRedOp_t op, ncclDataType_t t, int n, size_t i) {
  double acc = input(0, i);
  for (int r = 1; r < n; ++r) {
    double x = input(r, i);
    if (op == ncclSum || op == ncclAvg) acc += x;
    else if (op == ncclProd) acc *= x;
    else if (op == ncclMax) acc = x > acc ? x : acc;
    else if (op == ncclMin) acc = x < acc ? x : acc;
  }
  if (op == ncclAvg) acc = isFloat(t) ? acc / n : floor(acc / n);
  return acc;
}

static int matches(double got, double want, ncclDataType_t t, ncclRedOp_t op) {
  if (op != ncclAvg || !isFloat(t)) return got == want;
  /* Avg on floats multiplies by 1/n in the element type before summing (NCCL's PreMulSum): exact
   * for n = 1, 2, 4, rounded in the narrow types for n = 3. */
  double tol = (t == ncclFloat32 || t == ncclFloat64) ? 1e-6 : 0.3;
  return fabs(got - want) <= tol * want;
}

static void* xalloc(size_t bytes) {
  void* p = NULL;
  NCCLCHECK(ncclMemAlloc(&p, bytes));
  return p;
}

/* ---- modes ------------------------------------------------------------------------------------- */

static ncclComm_t initComm(int n, ncclUniqueId id, int rank) {
  ncclComm_t comm = NULL;
  NCCLCHECK(ncclCommInitRank(&comm, n, id, rank));
  int count = -1, me = -1;
  NCCLCHECK(ncclCommCount(comm, &count));
  NCCLCHECK(ncclCommUserRank(comm, &me));
  CHECK(count == n && me == rank, "ncclCommCount %d / ncclCommUserRank %d, expected %d / %d", count, me, n, rank);
  return comm;
}

static void allReduces(ncclComm_t comm, int n, size_t count) {
  static const ncclRedOp_t ops[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};
  for (int t = 0; t < ncclNumTypes; ++t) {
    size_t es = typeSize((ncclDataType_t)t);
    void* in = xalloc(count * es);
    void* out = xalloc(count * es);
    for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); ++o) {
      for (size_t i = 0; i < count; ++i) put((ncclDataType_t)t, in, i, input(gRank, i));
      int inPlace = (int)o % 2;
      void* dst = inPlace ? in : out;
      NCCLCHECK(ncclAllReduce(in, dst, count, (ncclDataType_t)t, ops[o], comm, NULL));
      for (size_t i = 0; i < count; ++i) {
        double want = reduceExpect(ops[o], (ncclDataType_t)t, n, i), got = get((ncclDataType_t)t, dst, i);
        if (!matches(got, want, (ncclDataType_t)t, ops[o])) {
          CHECK(0, "ncclAllReduce type %d op %d%s element %zu: %g, expected %g", t, (int)ops[o], inPlace ? " in place" : "", i,
                got, want);
          break;
        }
      }
    }
    NCCLCHECK(ncclMemFree(in));
    NCCLCHECK(ncclMemFree(out));
  }
}

static void preMulSum(ncclComm_t comm, int n, size_t count) {
  float* in = xalloc(count * sizeof(float));
  float* out = xalloc(count * sizeof(float));
  float scalar = 2.0f;
  ncclRedOp_t op;
  NCCLCHECK(ncclRedOpCreatePreMulSum(&op, &scalar, ncclFloat32, ncclScalarHostImmediate, comm));
  for (size_t i = 0; i < count; ++i) in[i] = (float)input(gRank, i);
  NCCLCHECK(ncclAllReduce(in, out, count, ncclFloat32, op, comm, NULL));
  for (size_t i = 0; i < count; ++i) {
    double want = 2 * reduceExpect(ncclSum, ncclFloat32, n, i);
    if (out[i] != want) {
      CHECK(0, "PreMulSum element %zu: %g, expected %g", i, out[i], want);
      break;
    }
  }
  NCCLCHECK(ncclRedOpDestroy(op, comm));
  CHECK(ncclRedOpDestroy(op, comm) == ncclInvalidArgument, "destroying a destroyed PreMulSum op must fail");
  CHECK(ncclRedOpDestroy(ncclSum, comm) == ncclInvalidArgument, "destroying ncclSum must fail");
  NCCLCHECK(ncclMemFree(in));
  NCCLCHECK(ncclMemFree(out));
}

/* Every rank's block r holds value 10*r + (i mod 7) + owner*100 where useful. */
static int32_t tag(int owner, int block, size_t i) { return owner * 1000 + block * 100 + (int32_t)(i % 97); }

static void dataMovement(ncclComm_t comm, int n, size_t count) {
  /* n blocks for the collectives, at least 2 for the two-way send/recv below */
  size_t blocks = n < 2 ? 2 : (size_t)n;
  int32_t* a = xalloc(count * blocks * sizeof(int32_t));
  int32_t* b = xalloc(count * blocks * sizeof(int32_t));
  int root = n - 1;

  /* Broadcast, then the deprecated in-place Bcast */
  for (size_t i = 0; i < count; ++i) a[i] = gRank == root ? tag(root, 0, i) : -1;
  NCCLCHECK(ncclBroadcast(a, b, count, ncclInt32, root, comm, NULL));
  for (size_t i = 0; i < count; ++i)
    if (b[i] != tag(root, 0, i)) { CHECK(0, "ncclBroadcast element %zu: %d", i, b[i]); break; }
  for (size_t i = 0; i < count; ++i) a[i] = gRank == 0 ? tag(0, 1, i) : -1;
  NCCLCHECK(ncclBcast(a, count, ncclInt32, 0, comm, NULL));
  for (size_t i = 0; i < count; ++i)
    if (a[i] != tag(0, 1, i)) { CHECK(0, "ncclBcast element %zu: %d", i, a[i]); break; }

  /* Reduce to rank 0 */
  for (size_t i = 0; i < count; ++i) a[i] = tag(gRank, 0, i);
  memset(b, 0, count * sizeof(int32_t));
  NCCLCHECK(ncclReduce(a, b, count, ncclInt32, ncclSum, 0, comm, NULL));
  if (gRank == 0)
    for (size_t i = 0; i < count; ++i) {
      int32_t want = 0;
      for (int r = 0; r < n; ++r) want += tag(r, 0, i);
      if (b[i] != want) { CHECK(0, "ncclReduce element %zu: %d, expected %d", i, b[i], want); break; }
    }

  /* AllGather, out of place and in place */
  for (size_t i = 0; i < count; ++i) a[i] = tag(gRank, 0, i);
  NCCLCHECK(ncclAllGather(a, b, count, ncclInt32, comm, NULL));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      if (b[(size_t)r * count + i] != tag(r, 0, i)) { CHECK(0, "ncclAllGather block %d element %zu", r, i); r = n; break; }
  for (size_t i = 0; i < count; ++i) b[(size_t)gRank * count + i] = tag(gRank, 2, i);
  NCCLCHECK(ncclAllGather(b + (size_t)gRank * count, b, count, ncclInt32, comm, NULL));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      if (b[(size_t)r * count + i] != tag(r, 2, i)) { CHECK(0, "in-place ncclAllGather block %d element %zu", r, i); r = n; break; }

  /* ReduceScatter: block r of every rank's input is summed into rank r */
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) a[(size_t)r * count + i] = tag(gRank, r, i);
  NCCLCHECK(ncclReduceScatter(a, b, count, ncclInt32, ncclSum, comm, NULL));
  for (size_t i = 0; i < count; ++i) {
    int32_t want = 0;
    for (int r = 0; r < n; ++r) want += tag(r, gRank, i);
    if (b[i] != want) { CHECK(0, "ncclReduceScatter element %zu: %d, expected %d", i, b[i], want); break; }
  }

  /* AlltoAll: block r goes to rank r */
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) a[(size_t)r * count + i] = tag(gRank, r, i);
  NCCLCHECK(ncclAlltoAll(a, b, count, ncclInt32, comm, NULL));
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i)
      if (b[(size_t)r * count + i] != tag(r, gRank, i)) { CHECK(0, "ncclAlltoAll block %d element %zu", r, i); r = n; break; }

  /* Gather to rank 1 % n, Scatter from it */
  int groot = 1 % n;
  for (size_t i = 0; i < count; ++i) a[i] = tag(gRank, 3, i);
  memset(b, 0, count * (size_t)n * sizeof(int32_t));
  NCCLCHECK(ncclGather(a, b, count, ncclInt32, groot, comm, NULL));
  if (gRank == groot)
    for (int r = 0; r < n; ++r)
      for (size_t i = 0; i < count; ++i)
        if (b[(size_t)r * count + i] != tag(r, 3, i)) { CHECK(0, "ncclGather block %d element %zu", r, i); r = n; break; }
  for (int r = 0; r < n; ++r)
    for (size_t i = 0; i < count; ++i) a[(size_t)r * count + i] = gRank == groot ? tag(groot, r, i) : -1;
  NCCLCHECK(ncclScatter(a, b, count, ncclInt32, groot, comm, NULL));
  for (size_t i = 0; i < count; ++i)
    if (b[i] != tag(groot, gRank, i)) { CHECK(0, "ncclScatter element %zu: %d", i, b[i]); break; }

  /* Send/Recv around the ring, both directions, in one group */
  int next = (gRank + 1) % n, prev = (gRank + n - 1) % n;
  for (size_t i = 0; i < count; ++i) a[i] = tag(gRank, 4, i), a[count + i] = tag(gRank, 5, i);
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclSend(a, count, ncclInt32, next, comm, NULL));
  NCCLCHECK(ncclSend(a + count, count, ncclInt32, prev, comm, NULL));
  NCCLCHECK(ncclRecv(b, count, ncclInt32, prev, comm, NULL));
  NCCLCHECK(ncclRecv(b + count, count, ncclInt32, next, comm, NULL));
  NCCLCHECK(ncclGroupEnd());
  for (size_t i = 0; i < count; ++i)
    if (b[i] != tag(prev, 4, i) || b[count + i] != tag(next, 5, i)) { CHECK(0, "ncclSend/ncclRecv element %zu", i); break; }

  /* Errors the library must catch */
  CHECK(ncclBroadcast(a, b, count, ncclInt32, n, comm, NULL) == ncclInvalidArgument, "root n must be refused");
  CHECK(strstr(ncclGetLastError(NULL), "ncclBroadcast") != NULL, "the last error names the call: %s", ncclGetLastError(NULL));
  CHECK(ncclAllReduce(a, b, count, (ncclDataType_t)12, ncclSum, comm, NULL) == ncclInvalidArgument, "type 12 must be refused");
  NCCLCHECK(ncclMemFree(a));
  NCCLCHECK(ncclMemFree(b));
}

static int modeCollectives(int n, ncclUniqueId id) {
  ncclComm_t comm = initComm(n, id, gRank);
  allReduces(comm, n, 1031);
  preMulSum(comm, n, 1031);
  dataMovement(comm, n, 1031);
  allReduces(comm, n, 1 << 18); /* 256 Ki elements: several slots and channels */
  NCCLCHECK(ncclCommFinalize(comm));
  NCCLCHECK(ncclCommDestroy(comm));
  return gFailures;
}

/* ncclCommInitRankConfig: non-blocking init polled with ncclCommGetAsyncError; a bad magic;
 * a config as a program built with NCCL 2.16's header passes it (shorter, older version). */
static int modeConfig(int n, ncclUniqueId id) {
  ncclConfig_t bad = NCCL_CONFIG_INITIALIZER;
  bad.magic = 0;
  ncclComm_t c0 = NULL;
  CHECK(ncclCommInitRankConfig(&c0, n, id, gRank, &bad) == ncclInvalidArgument, "a config without the magic must fail");
  CHECK(strstr(ncclGetLastError(NULL), "NCCL_CONFIG_INITIALIZER") != NULL, "message: %s", ncclGetLastError(NULL));
  /* NCCL's checks of the fields weft does not act on */
  static const struct {
    const char* what;
    size_t offset;
    int value;
  } badFields[] = {
      {"CTAPolicy 3", offsetof(ncclConfig_t, CTAPolicy), 3},
      {"nChannelsPerNetPeer 65", offsetof(ncclConfig_t, nChannelsPerNetPeer), 65},
      {"splitShare 2", offsetof(ncclConfig_t, splitShare), 2},
      {"cgaClusterSize -1", offsetof(ncclConfig_t, cgaClusterSize), -1},
      {"nvlsCTAs 0", offsetof(ncclConfig_t, nvlsCTAs), 0},
      {"blocking 2", offsetof(ncclConfig_t, blocking), 2},
      {"minCTAs 4 > maxCTAs 2", offsetof(ncclConfig_t, minCTAs), 4},
  };
  for (size_t i = 0; i < sizeof(badFields) / sizeof(badFields[0]); ++i) {
    ncclConfig_t b = NCCL_CONFIG_INITIALIZER;
    b.maxCTAs = 2;
    memcpy((char*)&b + badFields[i].offset, &badFields[i].value, sizeof(int));
    ncclComm_t c = NULL;
    CHECK(ncclCommInitRankConfig(&c, n, id, gRank, &b) == ncclInvalidArgument, "config %s must be refused", badFields[i].what);
  }
  /* A config from NCCL 2.14's header: 24 bytes, version 21400; whatever lies past them is not
   * read (here: garbage that would be refused). */
  ncclConfig_t old = NCCL_CONFIG_INITIALIZER;
  old.size = offsetof(ncclConfig_t, cgaClusterSize);
  old.version = NCCL_VERSION(2, 14, 0);
  old.blocking = 1;
  old.minCTAs = -5;
  old.CTAPolicy = 99;
  old.nChannelsPerNetPeer = 1000;
  ncclComm_t oldComm = NULL;
  NCCLCHECK(ncclCommInitRankConfig(&oldComm, n, id, gRank, &old));
  NCCLCHECK(ncclCommDestroy(oldComm));

  ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
  cfg.blocking = 0;
  cfg.minCTAs = 1;
  cfg.maxCTAs = 2;
  cfg.commName = "weft-config-test";
  ncclComm_t comm = NULL;
  ncclResult_t rc = ncclCommInitRankConfig(&comm, n, gSecondId, gRank, &cfg);
  CHECK(rc == ncclInProgress || rc == ncclSuccess, "non-blocking init returned %d", (int)rc);
  ncclResult_t state = ncclInProgress;
  double deadline = nowSeconds() + 60;
  while (state == ncclInProgress && nowSeconds() < deadline) {
    NCCLCHECK(ncclCommGetAsyncError(comm, &state));
    if (state == ncclInProgress) usleep(1000);
  }
  CHECK(state == ncclSuccess, "non-blocking init ended in %d: %s", (int)state, ncclGetLastError(comm));
  float* x = xalloc(64 * sizeof(float));
  for (int i = 0; i < 64; ++i) x[i] = 1.0f;
  rc = ncclAllReduce(x, x, 64, ncclFloat32, ncclSum, comm, NULL);
  CHECK(rc == ncclSuccess || rc == ncclInProgress, "allreduce on the non-blocking comm: %d", (int)rc);
  do {
    NCCLCHECK(ncclCommGetAsyncError(comm, &state));
  } while (state == ncclInProgress);
  CHECK(x[0] == (float)n && x[63] == (float)n, "allreduce on the non-blocking comm: %g", x[0]);
  NCCLCHECK(ncclMemFree(x));
  NCCLCHECK(ncclCommDestroy(comm));
  return gFailures;
}

/* ncclCommSplit by parity, key reversing the order; NOCOLOR for rank 0 when n > 2. */
static int modeSplit(int n, ncclUniqueId id) {
  ncclComm_t comm = initComm(n, id, gRank);
  int color = (n > 2 && gRank == 0) ? NCCL_SPLIT_NOCOLOR : gRank % 2;
  ncclComm_t sub = NULL;
  NCCLCHECK(ncclCommSplit(comm, color, n - gRank, &sub, NULL));
  if (color == NCCL_SPLIT_NOCOLOR) {
    CHECK(sub == NULL, "NCCL_SPLIT_NOCOLOR must give a NULL communicator");
  } else {
    int members = 0, expectRank = 0;
    for (int r = 0; r < n; ++r)
      if (!(n > 2 && r == 0) && r % 2 == color) {
        ++members;
        if (r > gRank) ++expectRank; /* key n - r: higher ranks first */
      }
    int count = -1, me = -1;
    NCCLCHECK(ncclCommCount(sub, &count));
    NCCLCHECK(ncclCommUserRank(sub, &me));
    CHECK(count == members && me == expectRank, "split: %d ranks, rank %d; expected %d, %d", count, me, members, expectRank);
    int v = gRank, sum = 0;
    NCCLCHECK(ncclAllReduce(&v, &sum, 1, ncclInt32, ncclSum, sub, NULL));
    int want = 0;
    for (int r = 0; r < n; ++r)
      if (!(n > 2 && r == 0) && r % 2 == color) want += r;
    CHECK(sum == want, "allreduce on the split communicator: %d, expected %d", sum, want);
    NCCLCHECK(ncclCommDestroy(sub));
  }
  NCCLCHECK(ncclCommDestroy(comm));
  return gFailures;
}

/* Rank 0 starts an allreduce no other rank joins; another thread aborts the communicator. */
struct AbortArgs {
  ncclComm_t comm;
  double delay;
};
static void* abortLater(void* p) {
  struct AbortArgs* a = p;
  usleep((useconds_t)(a->delay * 1e6));
  ncclResult_t rc = ncclCommAbort(a->comm);
  if (rc != ncclSuccess) fprintf(stderr, "[rank %d] FAIL ncclCommAbort -> %d\n", gRank, (int)rc);
  return NULL;
}

static int gHoldFd = -1;  /* abort: ranks other than 0 wait on it until rank 0 is done;
                             peer-death: the last rank waits on it until the others are ready */
static int gReadyFd = -1; /* peer-death: ranks say their init completed */

static int modeAbort(int n, ncclUniqueId id) {
  ncclComm_t comm = initComm(n, id, gRank);
  /* One allreduce every rank joins: after it every rank's init is complete. */
  int one = 1, all = 0;
  NCCLCHECK(ncclAllReduce(&one, &all, 1, ncclInt32, ncclSum, comm, NULL));
  if (gRank != 0) {
    char c;
    while (read(gHoldFd, &c, 1) < 0 && errno == EINTR) {
    }
    (void)ncclCommAbort(comm); /* rank 0's abort may have broken this communicator already */
    return gFailures;
  }
  float x[16] = {0};
  struct AbortArgs args = {comm, 0.3};
  pthread_t t;
  pthread_create(&t, NULL, abortLater, &args);
  double start = nowSeconds();
  ncclResult_t rc = ncclAllReduce(x, x, 16, ncclFloat32, ncclSum, comm, NULL);
  double took = nowSeconds() - start;
  pthread_join(t, NULL);
  CHECK(rc != ncclSuccess, "an allreduce aborted from another thread returned success");
  CHECK(took < 10, "the aborted allreduce returned after %.1f s", took);
  printf("[rank 0] aborted allreduce returned %d (%s) after %.2f s\n", (int)rc, ncclGetErrorString(rc), took);
  return gFailures;
}

/* The last rank dies (SIGKILL) after init; the others' next collective fails and
 * ncclCommGetAsyncError says ncclRemoteError. */
static int modePeerDeath(int n, ncclUniqueId id) {
  ncclComm_t comm = initComm(n, id, gRank);
  /* The last rank dies only once every other rank's init has completed (a death during init is
   * another case: init fails). */
  if (gRank == n - 1) {
    char c;
    while (read(gHoldFd, &c, 1) < 0 && errno == EINTR) {
    }
    raise(SIGKILL);
  }
  if (write(gReadyFd, "r", 1) != 1) return ++gFailures;
  float x[1024];
  for (int i = 0; i < 1024; ++i) x[i] = 1;
  double start = nowSeconds();
  ncclResult_t rc = ncclAllReduce(x, x, 1024, ncclFloat32, ncclSum, comm, NULL);
  double took = nowSeconds() - start;
  CHECK(rc != ncclSuccess, "an allreduce with a dead peer returned success");
  CHECK(took < 20, "the allreduce with a dead peer returned after %.1f s", took);
  ncclResult_t state = ncclSuccess;
  NCCLCHECK(ncclCommGetAsyncError(comm, &state));
  CHECK(state == ncclRemoteError, "ncclCommGetAsyncError: %d, expected ncclRemoteError", (int)state);
  printf("[rank %d] dead peer: allreduce %d after %.2f s, async error %d: %s\n", gRank, (int)rc, took, (int)state,
         ncclGetLastError(comm));
  NCCLCHECK(ncclCommAbort(comm));
  return gFailures;
}

/* Prototypes of the device API's host calls (nccl_device headers in NCCL; C++ there). */
ncclResult_t ncclDevCommCreate(ncclComm_t comm, const void* reqs, void* outDevComm);
ncclResult_t ncclDevCommDestroy(ncclComm_t comm, const void* devComm);

/* What weft cannot do yet fails with NCCL's code and a message naming the call. */
static int modeUnsupported(int n, ncclUniqueId id) {
  ncclComm_t comm = initComm(n, id, gRank);
  char buf[8192];
  ncclWindow_t win = NULL;
  CHECK(ncclCommWindowRegister(comm, buf, sizeof(buf), &win, NCCL_WIN_COLL_SYMMETRIC) == ncclInvalidUsage,
        "ncclCommWindowRegister");
  CHECK(strstr(ncclGetLastError(NULL), "ncclCommWindowRegister") != NULL, "%s", ncclGetLastError(NULL));
  CHECK(ncclCommWindowDeregister(comm, win) == ncclInvalidUsage, "ncclCommWindowDeregister");
  CHECK(strstr(ncclGetLastError(NULL), "ncclCommWindowDeregister") != NULL, "%s", ncclGetLastError(NULL));
  ncclComm_t shrunk = (ncclComm_t)buf;
  int exclude = 0;
  CHECK(ncclCommShrink(comm, &exclude, 1, &shrunk, NULL, NCCL_SHRINK_DEFAULT) == ncclInvalidUsage && shrunk == NULL,
        "ncclCommShrink");
  CHECK(strstr(ncclGetLastError(NULL), "ncclCommShrink") != NULL, "%s", ncclGetLastError(NULL));
  CHECK(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT) == ncclInvalidUsage, "ncclCommRevoke");
  CHECK(strstr(ncclGetLastError(NULL), "ncclCommRevoke") != NULL, "%s", ncclGetLastError(NULL));
  char devComm[512];
  CHECK(ncclDevCommCreate(comm, devComm, devComm) == ncclInvalidUsage, "ncclDevCommCreate");
  CHECK(strstr(ncclGetLastError(NULL), "ncclDevCommCreate") != NULL, "%s", ncclGetLastError(NULL));
  CHECK(ncclDevCommDestroy(comm, devComm) == ncclInvalidUsage, "ncclDevCommDestroy");
  /* A simulated group: nothing runs, the group is closed, the call says it did not simulate. */
  int v = 5, out = -1;
  NCCLCHECK(ncclGroupStart());
  NCCLCHECK(ncclAllReduce(&v, &out, 1, ncclInt32, ncclSum, comm, NULL));
  ncclSimInfo_t sim = NCCL_SIM_INFO_INITIALIZER;
  CHECK(ncclGroupSimulateEnd(&sim) == ncclInvalidUsage, "ncclGroupSimulateEnd");
  CHECK(strstr(ncclGetLastError(NULL), "ncclGroupSimulateEnd") != NULL, "%s", ncclGetLastError(NULL));
  CHECK(out == -1, "ncclGroupSimulateEnd ran the allreduce");
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "the simulated group must be closed");
  /* Registration is a hint: NCCL's "skipping registration" answer */
  void* handle = buf;
  NCCLCHECK(ncclCommRegister(comm, buf, sizeof(buf), &handle));
  CHECK(handle == NULL, "ncclCommRegister handle %p", handle);
  NCCLCHECK(ncclCommDeregister(comm, handle));
  /* and the communicator still works */
  NCCLCHECK(ncclAllReduce(&v, &out, 1, ncclInt32, ncclSum, comm, NULL));
  CHECK(out == 5 * n, "allreduce after the refused calls: %d", out);
  NCCLCHECK(ncclCommDestroy(comm));
  return gFailures;
}

/* Process-wide calls that need no communicator. */
static int modeBasics(void) {
  int version = 0;
  NCCLCHECK(ncclGetVersion(&version));
  CHECK(version == 22809, "ncclGetVersion %d, expected 22809", version);
  CHECK(ncclGetVersion(NULL) == ncclInvalidArgument, "ncclGetVersion(NULL)");
  CHECK(strcmp(ncclGetErrorString(ncclSuccess), "no error") == 0, "ncclGetErrorString(0)");
  CHECK(strcmp(ncclGetErrorString(ncclRemoteError), "remote process exited or there was a network error") == 0,
        "ncclGetErrorString(6)");
  CHECK(strcmp(ncclGetErrorString((ncclResult_t)42), "unknown result code") == 0, "ncclGetErrorString(42)");
  CHECK(ncclGroupEnd() == ncclInvalidUsage, "ncclGroupEnd outside a group");
  CHECK(strstr(ncclGetLastError(NULL), "not in a group call") != NULL, "%s", ncclGetLastError(NULL));
  void* p = NULL;
  NCCLCHECK(ncclMemAlloc(&p, 1000));
  CHECK(p != NULL && ((uintptr_t)p % 4096) == 0, "ncclMemAlloc alignment: %p", p);
  NCCLCHECK(ncclMemFree(p));
  CHECK(ncclMemFree(p) == ncclInvalidArgument, "a second ncclMemFree must fail");
  NCCLCHECK(ncclMemFree(NULL));
  CHECK(ncclCommDestroy(NULL) == ncclSuccess && ncclCommAbort(NULL) == ncclSuccess && ncclCommFinalize(NULL) == ncclSuccess,
        "NULL communicators are no-ops for destroy, abort and finalize");
  int count = 0;
  CHECK(ncclCommCount((ncclComm_t)&count, &count) != ncclSuccess, "a foreign pointer is not a communicator");
  return gFailures;
}

/* One thread initialises every rank inside a group, as single-process multi-GPU programs do,
 * then runs one allreduce per rank in one group. */
static int modeGroupInit(int n, ncclUniqueId id) {
  ncclComm_t comms[8];
  NCCLCHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) NCCLCHECK(ncclCommInitRank(&comms[r], n, id, r));
  NCCLCHECK(ncclGroupEnd());
  int in[8], out[8];
  NCCLCHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    in[r] = r + 1;
    NCCLCHECK(ncclAllReduce(&in[r], &out[r], 1, ncclInt32, ncclSum, comms[r], NULL));
  }
  NCCLCHECK(ncclGroupEnd());
  for (int r = 0; r < n; ++r) CHECK(out[r] == n * (n + 1) / 2, "rank %d: %d", r, out[r]);
  for (int r = 0; r < n; ++r) NCCLCHECK(ncclCommDestroy(comms[r]));
  return gFailures;
}

static int modeInitAll(int n) {
  ncclComm_t comms[8];
  NCCLCHECK(ncclCommInitAll(comms, n, NULL));
  double in[8], out[8];
  NCCLCHECK(ncclGroupStart());
  for (int r = 0; r < n; ++r) {
    in[r] = 0.5 * r;
    NCCLCHECK(ncclAllReduce(&in[r], &out[r], 1, ncclFloat64, ncclMax, comms[r], NULL));
  }
  NCCLCHECK(ncclGroupEnd());
  for (int r = 0; r < n; ++r) CHECK(out[r] == 0.5 * (n - 1), "rank %d: %g", r, out[r]);
  for (int r = 0; r < n; ++r) NCCLCHECK(ncclCommDestroy(comms[r]));
  return gFailures;
}

/* ---- processes ---------------------------------------------------------------------------------- */

static int runRanks(const char* mode, int n) {
  int hold[2], ready[2], idPipe[8][2];
  if (pipe(hold) != 0 || pipe(ready) != 0) return 2;
  fcntl(ready[0], F_SETFL, O_NONBLOCK);
  int readyCount = 0;
  pid_t pids[8];
  /* Children are forked before the parent starts any thread (ncclGetUniqueId starts the
   * bootstrap root's): each reads the id from its pipe. */
  for (int r = 0; r < n; ++r) {
    if (pipe(idPipe[r]) != 0) return 2;
    pids[r] = fork();
    if (pids[r] == 0) {
      close(hold[1]);
      close(ready[0]);
      close(idPipe[r][1]);
      gHoldFd = hold[0];
      gReadyFd = ready[1];
      gRank = r;
      ncclUniqueId ids[2];
      size_t got = 0;
      while (got < sizeof(ids)) {
        ssize_t k = read(idPipe[r][0], (char*)ids + got, sizeof(ids) - got);
        if (k <= 0) _exit(3);
        got += (size_t)k;
      }
      ncclUniqueId id = ids[0];
      gSecondId = ids[1];
      int f = 0;
      if (strcmp(mode, "collectives") == 0) f = modeCollectives(n, id);
      else if (strcmp(mode, "config") == 0) f = modeConfig(n, id);
      else if (strcmp(mode, "split") == 0) f = modeSplit(n, id);
      else if (strcmp(mode, "abort") == 0) f = modeAbort(n, id);
      else if (strcmp(mode, "peer-death") == 0) f = modePeerDeath(n, id);
      else if (strcmp(mode, "unsupported") == 0) f = modeUnsupported(n, id);
      fflush(stdout);
      _exit(f == 0 ? 0 : 1);
    }
    close(idPipe[r][0]);
  }
  /* Two ids: an id serves one communicator's init (as in NCCL), and the config mode makes two. */
  ncclUniqueId ids[2];
  NCCLCHECK(ncclGetUniqueId(&ids[0]));
  NCCLCHECK(ncclGetUniqueId(&ids[1]));
  for (int r = 0; r < n; ++r) {
    if (write(idPipe[r][1], ids, sizeof(ids)) != (ssize_t)sizeof(ids)) return 2;
    close(idPipe[r][1]);
  }
  close(hold[0]);
  close(ready[1]);
  /* Every rank must be done within the deadline; a rank that hangs fails the test. */
  int failed = 0, left = n;
  double deadline = nowSeconds() + 120;
  while (left > 0) {
    int status = 0;
    char c;
    while (read(ready[0], &c, 1) == 1)
      if (++readyCount == n - 1 && strcmp(mode, "peer-death") == 0) close(hold[1]); /* now the last rank dies */
    pid_t p = waitpid(-1, &status, WNOHANG);
    if (p == 0) {
      if (nowSeconds() > deadline) {
        fprintf(stderr, "FAIL: ranks still running after 120 s, killing them\n");
        for (int r = 0; r < n; ++r) kill(pids[r], SIGKILL);
        failed = 1;
        deadline = 1e300;
      }
      usleep(10000);
      continue;
    }
    if (p < 0) break;
    --left;
    int r = 0;
    while (r < n && pids[r] != p) ++r;
    int expectKilled = strcmp(mode, "peer-death") == 0 && r == n - 1;
    if (r == 0 && strcmp(mode, "abort") == 0) close(hold[1]); /* rank 0 is done: release the others */
    if (expectKilled) {
      if (!(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) failed = 1;
    } else if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      fprintf(stderr, "FAIL: rank %d ended with %s %d\n", r, WIFEXITED(status) ? "exit" : "signal",
              WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      failed = 1;
    }
  }
  return failed;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr,
            "usage: %s MODE NRANKS\n"
            "MODE: collectives | config | split | abort | peer-death | unsupported (forked ranks),\n"
            "      group-init | init-all (ranks of this process) | basics (no communicator)\n",
            argv[0]);
    return 2;
  }
  const char* mode = argv[1];
  int n = atoi(argv[2]);
  if (n < 1 || n > 8) return 2;
  gRank = 0;
  if (strcmp(mode, "basics") == 0) return modeBasics() == 0 ? 0 : 1;
  if (strcmp(mode, "init-all") == 0) return modeInitAll(n) == 0 ? 0 : 1;
  if (strcmp(mode, "group-init") == 0) {
    ncclUniqueId id;
    NCCLCHECK(ncclGetUniqueId(&id));
    return modeGroupInit(n, id) == 0 ? 0 : 1;
  }
  if ((strcmp(mode, "abort") == 0 || strcmp(mode, "peer-death") == 0) && n < 2) {
    fprintf(stderr, "%s needs at least 2 ranks\n", mode);
    return 2;
  }
  int failed = runRanks(mode, n);
  printf("%s %s with %d rank(s)\n", failed ? "FAILED" : "OK", mode, n);
  return failed;
}
