// One GPU per process under MPI (NCCL's documented second example): the host-local rank picks
// the GPU, rank 0's unique id travels by MPI_Bcast, ncclCommInitRank, one allreduce on a stream.
// Device buffers: it runs where a GPU is present; built here to show that it compiles unchanged
// against weft's nccl.h with nvcc.
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK(what, ok, text)                                             \
  do {                                                                    \
    if (!(ok)) {                                                          \
      printf("Failed: %s error %s:%d '%s'\n", what, __FILE__, __LINE__, text); \
      exit(EXIT_FAILURE);                                                 \
    }                                                                     \
  } while (0)
#define MPICHECK(cmd) do { int e_ = (cmd); CHECK("MPI", e_ == MPI_SUCCESS, "call failed"); } while (0)
#define CUDACHECK(cmd) do { cudaError_t e_ = (cmd); CHECK("CUDA", e_ == cudaSuccess, cudaGetErrorString(e_)); } while (0)
#define NCCLCHECK(cmd) do { ncclResult_t r_ = (cmd); CHECK("NCCL", r_ == ncclSuccess, ncclGetErrorString(r_)); } while (0)

static uint64_t hostHash(void) {
  char name[1024] = {0};
  gethostname(name, sizeof(name) - 1);
  uint64_t h = 5381;  // djb2
  for (const char* c = name; *c != '\0'; ++c) h = ((h << 5) + h) ^ (uint64_t)(unsigned char)*c;
  return h;
}

int main(int argc, char* argv[]) {
  const int size = 32 * 1024 * 1024;
  int myRank, nRanks, localRank = 0;
  MPICHECK(MPI_Init(&argc, &argv));
  MPICHECK(MPI_Comm_rank(MPI_COMM_WORLD, &myRank));
  MPICHECK(MPI_Comm_size(MPI_COMM_WORLD, &nRanks));
  uint64_t* hashes = (uint64_t*)malloc(sizeof(uint64_t) * nRanks);
  hashes[myRank] = hostHash();
  MPICHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, hashes, sizeof(uint64_t), MPI_BYTE, MPI_COMM_WORLD));
  for (int p = 0; p < myRank; ++p) localRank += hashes[p] == hashes[myRank];
  free(hashes);

  ncclUniqueId id;
  if (myRank == 0) NCCLCHECK(ncclGetUniqueId(&id));
  MPICHECK(MPI_Bcast((void*)&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));

  float *sendbuff, *recvbuff;
  cudaStream_t s;
  CUDACHECK(cudaSetDevice(localRank));
  CUDACHECK(cudaMalloc(&sendbuff, size * sizeof(float)));
  CUDACHECK(cudaMalloc(&recvbuff, size * sizeof(float)));
  CUDACHECK(cudaStreamCreate(&s));

  ncclComm_t comm;
  NCCLCHECK(ncclCommInitRank(&comm, nRanks, id, myRank));
  NCCLCHECK(ncclAllReduce((const void*)sendbuff, (void*)recvbuff, size, ncclFloat, ncclSum, comm, s));
  CUDACHECK(cudaStreamSynchronize(s));

  CUDACHECK(cudaFree(sendbuff));
  CUDACHECK(cudaFree(recvbuff));
  ncclCommDestroy(comm);
  MPICHECK(MPI_Finalize());
  printf("[MPI Rank %d] Success\n", myRank);
  return 0;
}
