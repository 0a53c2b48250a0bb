/* One rank per process under an MPI launcher, the way NCCL's documentation shows it: MPI gives
 * ranks and the host-local rank, rank 0's ncclGetUniqueId travels by MPI_Bcast, every process
 * initialises its rank with ncclCommInitRank and runs collectives. Host buffers (weft without a
 * GPU); the same program with cudaMalloc'd buffers is in the .cu files beside it.
 *
 *   mpirun -np N mpi_one_rank_per_process [COUNT] */
#include <mpi.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MPICHECK(cmd)                                                       \
  do {                                                                      \
    int e_ = (cmd);                                                         \
    if (e_ != MPI_SUCCESS) {                                                \
      fprintf(stderr, "%s:%d: MPI error %d\n", __FILE__, __LINE__, e_);     \
      MPI_Abort(MPI_COMM_WORLD, 2);                                         \
    }                                                                       \
  } while (0)
#define NCCLCHECK(cmd)                                                                          \
  do {                                                                                          \
    ncclResult_t r_ = (cmd);                                                                    \
    if (r_ != ncclSuccess) {                                                                    \
      fprintf(stderr, "%s:%d: NCCL error %d '%s': %s\n", __FILE__, __LINE__, (int)r_,           \
              ncclGetErrorString(r_), ncclGetLastError(NULL));                                  \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                             \
    }                                                                                           \
  } while (0)

int main(int argc, char** argv) {
  size_t count = argc > 1 ? (size_t)strtoull(argv[1], NULL, 10) : 1 << 20;
  int rank, nranks;
  MPICHECK(MPI_Init(&argc, &argv));
  MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nranks));

  ncclUniqueId id;
  if (rank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  MPICHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));

  float *send = NULL, *recv = NULL;
  NCCLCHECK(ncclMemAlloc((void**)&send, count * sizeof(float)));
  NCCLCHECK(ncclMemAlloc((void**)&recv, count * sizeof(float)));
  for (size_t i = 0; i < count; ++i) send[i] = (float)(rank + 1);

  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, nranks, id, rank));
  NCCLCHECK(ncclAllReduce(send, recv, count, ncclFloat, ncclSum, comm, NULL));

  float want = (float)nranks * (float)(nranks + 1) / 2;
  size_t bad = 0;
  for (size_t i = 0; i < count; ++i) bad += recv[i] != want;
  NCCLCHECK(ncclCommDestroy(comm));
  NCCLCHECK(ncclMemFree(send));
  NCCLCHECK(ncclMemFree(recv));
  int anyBad = bad != 0, worst = 0;
  MPICHECK(MPI_Allreduce(&anyBad, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
  if (bad != 0) fprintf(stderr, "[MPI rank %d] %zu of %zu elements differ from %g\n", rank, bad, count, want);
  else printf("[MPI rank %d] Success\n", rank);
  MPICHECK(MPI_Finalize());
  return worst;
}
