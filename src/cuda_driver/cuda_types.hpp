// The CUDA driver API types disttune uses: from <cuda.h> when the toolkit is found, else
// declared here with the driver's stable ABI values (no CUDA toolkit needed to build).
#pragma once

#if defined(DISTTUNE_HAVE_CUDA_H)
#include <cuda.h>
#else
#include <cstdint>

// Only the names and values disttune's driver table uses; they match <cuda.h> exactly.
typedef enum cudaError_enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_NOT_READY = 600,
} CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef std::uint64_t cuuint64_t;
typedef struct CUctx_st* CUcontext;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef enum CUdevice_attribute_enum : int {
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
} CUdevice_attribute;
typedef enum CUstreamCaptureStatus_enum : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
} CUstreamCaptureStatus;
typedef enum CUstreamCaptureMode_enum : int {
  CU_STREAM_CAPTURE_MODE_GLOBAL = 0,
  CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1,
  CU_STREAM_CAPTURE_MODE_RELAXED = 2,
} CUstreamCaptureMode;
typedef enum CUdriverProcAddressQueryResult_enum : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
} CUdriverProcAddressQueryResult;
#define CU_EVENT_DEFAULT 0x0
#endif
