/* weft_bench_comm_mpi: the Open MPI baseline of `weft_bench_comm p2p`, the same method with
 * MPI_Send/MPI_Recv (MPI_BYTE) between ranks 0 and 1: 8-byte ping-pong latency (half round
 * trip), then one-way streaming bandwidth (rank 0 sends `iters` messages back to back, rank 1
 * answers with 8 bytes, rank 0 times from the first send to the answer). Same flags and the same
 * `RESULT` lines. Run under mpirun -np 2.
 * `weft_bench_comm_mpi coll ...`: the baseline of `weft_bench_comm coll`, MPI_Allreduce or
 * MPI_Reduce_scatter_block (MPI_FLOAT, MPI_SUM), MPI_Allgather or MPI_Bcast (MPI_BYTE, root 0) with
 * the same method, flags and lines; under mpirun -np N. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/comm/vm_hwm.h"

#define MAX_SIZES 32

struct options {
  size_t sizes[MAX_SIZES];
  int nsizes;
  int reps;
  size_t bytes_per_rep;
  int min_iters;
  int lat_iters;
  int lat_warmup;
  const char* label;
};

/* "4M" -> 4194304; K, M, G are powers of 1024. 0 on a bad size. */
static size_t parse_size(const char* s) {
  char* end = NULL;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return 0;
  if (*end == 'K' || *end == 'k') v <<= 10, ++end;
  else if (*end == 'M' || *end == 'm') v <<= 20, ++end;
  else if (*end == 'G' || *end == 'g') v <<= 30, ++end;
  return (*end == '\0' || *end == ',') ? (size_t)v : 0;
}

static int parse_sizes(struct options* o, const char* list) {
  o->nsizes = 0;
  for (const char* p = list; *p != '\0' && o->nsizes < MAX_SIZES;) {
    size_t v = parse_size(p);
    if (v == 0) return -1;
    o->sizes[o->nsizes++] = v;
    const char* comma = strchr(p, ',');
    if (comma == NULL) break;
    p = comma + 1;
  }
  return o->nsizes > 0 ? 0 : -1;
}

static int parse_args(struct options* o, int argc, char** argv) {
  const size_t mib = (size_t)1 << 20;
  const size_t defaults[] = {4 * mib, 16 * mib, 64 * mib, 256 * mib};
  memcpy(o->sizes, defaults, sizeof(defaults));
  o->nsizes = 4;
  o->reps = 3;
  o->bytes_per_rep = (size_t)1 << 30;
  o->min_iters = 4;
  o->lat_iters = 10000;
  o->lat_warmup = 1000;
  o->label = "mpi";
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--sizes") == 0) {
      if (parse_sizes(o, v) != 0) return -1;
    } else if (strcmp(k, "--reps") == 0) o->reps = atoi(v);
    else if (strcmp(k, "--bytes-per-rep") == 0) o->bytes_per_rep = parse_size(v);
    else if (strcmp(k, "--min-iters") == 0) o->min_iters = atoi(v);
    else if (strcmp(k, "--lat-iters") == 0) o->lat_iters = atoi(v);
    else if (strcmp(k, "--lat-warmup") == 0) o->lat_warmup = atoi(v);
    else if (strcmp(k, "--label") == 0) o->label = v;
    else return -1;
  }
  return argc % 2 == 1 ? 0 : -1;
}

static void ping_pong(int rank, char* buf, int iters) {
  int peer = 1 - rank;
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) {
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
      MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD);
    }
  }
}

static void latency(const struct options* o, int rank) {
  char buf[8];
  memset(buf, 0x5a, sizeof(buf));
  ping_pong(rank, buf, o->lat_warmup);
  for (int rep = 0; rep < o->reps; ++rep) {
    double t0 = MPI_Wtime();
    ping_pong(rank, buf, o->lat_iters);
    double us = (MPI_Wtime() - t0) * 1e6 / o->lat_iters / 2;
    if (rank == 0) printf("RESULT test=lat impl=%s bytes=8 rep=%d iters=%d us=%.3f\n", o->label, rep, o->lat_iters, us);
    fflush(stdout);
  }
}

static double stream_once(int rank, char* msg, size_t bytes, char* ack, int iters) {
  int peer = 1 - rank;
  double t0 = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (rank == 0) MPI_Send(msg, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
    else MPI_Recv(msg, (int)bytes, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  }
  if (rank == 0) MPI_Recv(ack, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  else MPI_Send(ack, 8, MPI_BYTE, peer, 2, MPI_COMM_WORLD);
  return MPI_Wtime() - t0;
}

static int bandwidth(const struct options* o, int rank, size_t bytes) {
  char ack[8];
  char* msg = malloc(bytes);
  if (msg == NULL) return -1;
  memset(msg, 0x5a, bytes);
  memset(ack, 0, sizeof(ack));
  int iters = (int)(o->bytes_per_rep / bytes);
  if (iters < o->min_iters) iters = o->min_iters;
  stream_once(rank, msg, bytes, ack, 1); /* warm-up, as weft's side */
  for (int rep = 0; rep < o->reps; ++rep) {
    double sec = stream_once(rank, msg, bytes, ack, iters);
    if (rank == 0)
      printf("RESULT test=bw impl=%s bytes=%zu rep=%d iters=%d sec=%.6f gbps=%.4f\n", o->label, bytes, rep, iters, sec,
             (double)bytes * iters / sec / 1e9);
    fflush(stdout);
  }
  free(msg);
  return 0;
}

/* ---- coll mode: the same rules as weft_bench_comm coll (bench/comm/p2p_bench.cc) ---------- */
/* size = the whole buffer as in nccl-tests: allreduce's, allgather's output, reducescatter's input,
 * broadcast's. */
enum { OP_ALLREDUCE, OP_ALLGATHER, OP_REDUCESCATTER, OP_BROADCAST };
static const char* const kOpNames[] = {"allreduce", "allgather", "reducescatter", "broadcast"};

struct coll_options {
  int op; /* OP_ALLREDUCE, … */
  size_t sizes[MAX_SIZES];
  int nsizes;
  int reps;
  size_t bytes_per_rep;
  int min_iters;
  int max_iters;
  int hwm; /* 1: at the end every rank prints its VmHWM (RESULT test=hwm) */
  const char* label;
};

static int coll_iters(const struct coll_options* o, size_t bytes) {
  size_t n = o->bytes_per_rep / (bytes == 0 ? 1 : bytes);
  if (n < (size_t)o->min_iters) n = (size_t)o->min_iters;
  if (n > (size_t)o->max_iters) n = (size_t)o->max_iters;
  return (int)n;
}

static int coll_parse(struct coll_options* o, int argc, char** argv) {
  struct options tmp;
  const size_t kib = 1024, mib = kib * kib;
  const size_t defaults[] = {8, 64 * kib, mib, 16 * mib, 64 * mib};
  memcpy(o->sizes, defaults, sizeof(defaults));
  o->nsizes = 5;
  o->op = OP_ALLREDUCE;
  o->reps = 3;
  o->bytes_per_rep = 128 * mib;
  o->min_iters = 5;
  o->max_iters = 1000;
  o->hwm = 0;
  o->label = "mpi";
  for (int i = 2; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (strcmp(k, "--op") == 0) {
      o->op = -1;
      for (int j = 0; j < 4; ++j)
        if (strcmp(v, kOpNames[j]) == 0) o->op = j;
      if (o->op < 0) return -1;
    } else if (strcmp(k, "--sizes") == 0) {
      if (parse_sizes(&tmp, v) != 0) return -1;
      memcpy(o->sizes, tmp.sizes, sizeof(tmp.sizes));
      o->nsizes = tmp.nsizes;
    } else if (strcmp(k, "--reps") == 0) o->reps = atoi(v);
    else if (strcmp(k, "--bytes-per-rep") == 0) o->bytes_per_rep = parse_size(v);
    else if (strcmp(k, "--min-iters") == 0) o->min_iters = atoi(v);
    else if (strcmp(k, "--max-iters") == 0) o->max_iters = atoi(v);
    else if (strcmp(k, "--hwm") == 0) o->hwm = atoi(v);
    else if (strcmp(k, "--label") == 0) o->label = v;
    else return -1;
  }
  return argc % 2 == 0 ? 0 : -1;
}

static void coll_once(const struct coll_options* o, char* send, char* recv, size_t bytes, int nranks) {
  switch (o->op) {
    case OP_ALLREDUCE: MPI_Allreduce(send, recv, (int)(bytes / sizeof(float)), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case OP_ALLGATHER:
      MPI_Allgather(send, (int)(bytes / nranks), MPI_BYTE, recv, (int)(bytes / nranks), MPI_BYTE, MPI_COMM_WORLD);
      break;
    case OP_REDUCESCATTER:
      MPI_Reduce_scatter_block(send, recv, (int)(bytes / sizeof(float) / nranks), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      break;
    default: MPI_Bcast(send, (int)bytes, MPI_BYTE, 0, MPI_COMM_WORLD); break; /* in place, as MPI has it */
  }
}

static int coll_size(const struct coll_options* o, int rank, int nranks, size_t bytes) {
  int floats = o->op == OP_ALLREDUCE || o->op == OP_REDUCESCATTER;
  size_t send_bytes = o->op == OP_ALLGATHER ? bytes / nranks : bytes;
  size_t recv_bytes = o->op == OP_REDUCESCATTER ? bytes / nranks : bytes;
  char* send = malloc(send_bytes);
  char* recv = malloc(recv_bytes);
  if (send == NULL || recv == NULL) return -1;
  memset(recv, 0x5a, recv_bytes);
  if (floats)
    for (size_t i = 0; i < send_bytes / sizeof(float); ++i) ((float*)send)[i] = 1.0f;
  else
    memset(send, rank + 1, send_bytes);
  int iters = coll_iters(o, bytes);
  int warmup = iters / 5 > 2 ? iters / 5 : 2;
  for (int i = 0; i < warmup; ++i) coll_once(o, send, recv, bytes, nranks);
  for (int rep = 0; rep < o->reps; ++rep) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; ++i) coll_once(o, send, recv, bytes, nranks);
    double us = (MPI_Wtime() - t0) * 1e6 / iters, max_us = 0;
    MPI_Reduce(&us, &max_us, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) {
      double algbw = (double)bytes / max_us / 1e3;
      double factor = o->op == OP_ALLREDUCE ? 2.0 * (nranks - 1) / nranks
                      : o->op == OP_BROADCAST ? 1.0
                                              : (double)(nranks - 1) / nranks;
      printf("RESULT test=coll op=%s impl=%s ranks=%d bytes=%zu rep=%d iters=%d us=%.3f algbw=%.4f busbw=%.4f\n",
             kOpNames[o->op], o->label, nranks, bytes, rep, iters, max_us, algbw, algbw * factor);
      fflush(stdout);
    }
  }
  free(send);
  free(recv);
  return 0;
}

static int coll_main(int argc, char** argv, int rank, int nranks) {
  struct coll_options o;
  if (coll_parse(&o, argc, argv) != 0) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np N %s coll [--op allreduce|allgather|reducescatter|broadcast] [--sizes 8,64K,1M,16M,64M] [--reps 3] "
                      "[--bytes-per-rep 128M] [--min-iters 5] [--max-iters 1000] [--hwm 0|1] [--label mpi]\n", argv[0]);
    return 2;
  }
  size_t largest = 0;
  for (int i = 0; i < o.nsizes; ++i) {
    if (o.sizes[i] > (size_t)2147483647 || coll_size(&o, rank, nranks, o.sizes[i]) != 0) return 1;
    if (o.sizes[i] > largest) largest = o.sizes[i];
  }
  if (o.hwm) {
    size_t buffers = largest + (o.op == OP_ALLGATHER || o.op == OP_REDUCESCATTER ? largest / nranks : largest);
    printf("RESULT test=hwm op=%s impl=%s ranks=%d rank=%d bytes=%zu hwm_kib=%ld buffers_kib=%zu\n",
           kOpNames[o.op], o.label, nranks, rank, largest, weft_bench_vm_hwm_kib(),
           buffers / 1024);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  if (argc > 1 && strcmp(argv[1], "coll") == 0) {
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = coll_main(argc, argv, rank, size);
    if (rc == 1) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
    return rc;
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  struct options o;
  if (parse_args(&o, argc, argv) != 0 || size != 2) {
    if (rank == 0)
      fprintf(stderr, "usage: mpirun -np 2 %s [--sizes 4M,16M,64M,256M] [--reps 3] [--bytes-per-rep 1G] "
                      "[--min-iters 4] [--lat-iters 10000] [--lat-warmup 1000] [--label mpi]\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  latency(&o, rank);
  int rc = 0;
  for (int i = 0; i < o.nsizes && rc == 0; ++i) {
    if (o.sizes[i] > (size_t)2147483647) rc = -1; /* MPI counts are int */
    else rc = bandwidth(&o, rank, o.sizes[i]);
  }
  if (rc != 0) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
  return 0;
}
