//! Probe: after an illegal-address fault, can this process open the GPU again (primary context reset, runtime reset, a context of its own)?
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>

__global__ void fault(int* p) { p[threadIdx.x] = 1; }
__global__ void fill(int* p, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) p[i] = i; }

static const char* name(CUresult r) { const char* s = nullptr; cuGetErrorName(r, &s); return s ? s : "?"; }

// Allocate, fill and read back in the current context (runtime launch in the primary context
// when `runtime`, else just driver alloc + memset).
static void try_work(const char* what) {
  CUdeviceptr d = 0;
  CUresult r = cuMemAlloc(&d, 4096);
  printf("  %s: cuMemAlloc -> %s\n", what, name(r));
  if (r == CUDA_SUCCESS) {
    r = cuMemsetD32(d, 7, 1024);
    printf("  %s: cuMemsetD32 -> %s\n", what, name(r));
    unsigned h[4] = {0};
    r = cuMemcpyDtoH(h, d, 16);
    printf("  %s: cuMemcpyDtoH -> %s (%u)\n", what, name(r), h[0]);
    cuMemFree(d);
  }
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "reset";
  cuInit(0);
  CUdevice dev;
  cuDeviceGet(&dev, 0);
  CUcontext primary;
  cuDevicePrimaryCtxRetain(&primary, dev);
  cuCtxSetCurrent(primary);
  fault<<<1, 32>>>((int*)0x10);
  cudaError_t e = cudaDeviceSynchronize();
  printf("%s: fault -> %s\n", mode, cudaGetErrorName(e));
  try_work("after fault, same context");
  if (!strcmp(mode, "reset") || !strcmp(mode, "reset_release")) {
    if (!strcmp(mode, "reset_release")) printf("  release -> %s\n", name(cuDevicePrimaryCtxRelease(dev)));
    CUresult r1 = cuDevicePrimaryCtxReset(dev);
    CUresult r2 = cuDevicePrimaryCtxReset(dev);
    printf("  reset -> %s, again -> %s\n", name(r1), name(r2));
    CUcontext again;
    printf("  retain -> %s\n", name(cuDevicePrimaryCtxRetain(&again, dev)));
    printf("  set current -> %s (same handle: %d)\n", name(cuCtxSetCurrent(again)), again == primary);
    try_work("after reset");
    int* p = nullptr;
    printf("  cudaMalloc -> %s\n", cudaGetErrorName(cudaMalloc(&p, 4096)));
    fill<<<4, 256>>>(p, 1024);
    printf("  runtime kernel -> %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  } else if (!strcmp(mode, "runtime_reset")) {
    printf("  cudaDeviceReset -> %s\n", cudaGetErrorName(cudaDeviceReset()));
    int* p = nullptr;
    printf("  cudaMalloc -> %s\n", cudaGetErrorName(cudaMalloc(&p, 4096)));
    fill<<<4, 256>>>(p, 1024);
    printf("  runtime kernel -> %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    CUcontext again;
    cuDevicePrimaryCtxRetain(&again, dev);
    cuCtxSetCurrent(again);
    try_work("driver after runtime reset");
  } else if (!strcmp(mode, "nonprimary")) {
    CUcontext own;
    #if CUDA_VERSION >= 13000
    CUresult r = cuCtxCreate(&own, nullptr, 0, dev);
#else
    CUresult r = cuCtxCreate(&own, 0, dev);
#endif
    printf("  cuCtxCreate -> %s\n", name(r));
    if (r == CUDA_SUCCESS) try_work("own context");
  }
  return 0;
}
