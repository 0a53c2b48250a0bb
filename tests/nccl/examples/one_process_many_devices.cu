// One process, one thread, several GPUs (NCCL's documented first example): ncclCommInitAll, one
// allreduce per device inside a group, then a wait on every stream. Device buffers: it runs where
// a GPU is present, through weft's libnccl once core/device moves GPU memory; built here to show
// that such a program compiles unchanged against weft's nccl.h with nvcc.
#include <cuda_runtime.h>
#include <nccl.h>
#include <stdio.h>
#include <stdlib.h>

#define CUDACHECK(cmd)                                                                          \
  do {                                                                                          \
    cudaError_t e_ = (cmd);                                                                     \
    if (e_ != cudaSuccess) {                                                                    \
      printf("Failed: CUDA error %s:%d '%s'\n", __FILE__, __LINE__, cudaGetErrorString(e_));   \
      exit(EXIT_FAILURE);                                                                       \
    }                                                                                           \
  } while (0)
#define NCCLCHECK(cmd)                                                                          \
  do {                                                                                          \
    ncclResult_t r_ = (cmd);                                                                    \
    if (r_ != ncclSuccess) {                                                                    \
      printf("Failed: NCCL error %s:%d '%s'\n", __FILE__, __LINE__, ncclGetErrorString(r_));   \
      exit(EXIT_FAILURE);                                                                       \
    }                                                                                           \
  } while (0)

int main(int argc, char* argv[]) {
  int nDev = 0;
  CUDACHECK(cudaGetDeviceCount(&nDev));
  if (nDev > 4) nDev = 4;
  const int size = 32 * 1024 * 1024;
  int devs[4] = {0, 1, 2, 3};
  ncclComm_t comms[4];
  float* sendbuff[4];
  float* recvbuff[4];
  cudaStream_t s[4];
  for (int i = 0; i < nDev; ++i) {
    CUDACHECK(cudaSetDevice(i));
    CUDACHECK(cudaMalloc((void**)&sendbuff[i], size * sizeof(float)));
    CUDACHECK(cudaMalloc((void**)&recvbuff[i], size * sizeof(float)));
    CUDACHECK(cudaMemset(sendbuff[i], 1, size * sizeof(float)));
    CUDACHECK(cudaMemset(recvbuff[i], 0, size * sizeof(float)));
    CUDACHECK(cudaStreamCreate(&s[i]));
  }
  NCCLCHECK(ncclCommInitAll(comms, nDev, devs));
  NCCLCHECK(ncclGroupStart());
  for (int i = 0; i < nDev; ++i)
    NCCLCHECK(ncclAllReduce(sendbuff[i], recvbuff[i], size, ncclFloat, ncclSum, comms[i], s[i]));
  NCCLCHECK(ncclGroupEnd());
  for (int i = 0; i < nDev; ++i) {
    CUDACHECK(cudaSetDevice(i));
    CUDACHECK(cudaStreamSynchronize(s[i]));
  }
  for (int i = 0; i < nDev; ++i) {
    CUDACHECK(cudaSetDevice(i));
    CUDACHECK(cudaFree(sendbuff[i]));
    CUDACHECK(cudaFree(recvbuff[i]));
  }
  for (int i = 0; i < nDev; ++i) ncclCommDestroy(comms[i]);
  printf("Success\n");
  return 0;
}
