# CUDA C++ (nvcc) for the CUDA examples, GPU tests and GPU benchmarks. The library
# disttune::cuda never needs it: it loads the driver at run time. Enabled here, at the top,
# because enable_language(CUDA) must be called in the directory above all its users.
include(CheckLanguage)
include(CMakeDependentOption)
if(DISTTUNE_ENABLE_CUDA)
  check_language(CUDA)
endif()
cmake_dependent_option(DISTTUNE_ENABLE_CUDA_EXAMPLES
  "Build the CUDA C++ examples, GPU tests and GPU benchmarks (needs nvcc)" ON
  "DISTTUNE_ENABLE_CUDA;CMAKE_CUDA_COMPILER" OFF)
if(DISTTUNE_ENABLE_CUDA_EXAMPLES)
  if(NOT DEFINED CMAKE_CUDA_HOST_COMPILER)
    set(CMAKE_CUDA_HOST_COMPILER "${CMAKE_CXX_COMPILER}")
  endif()
  enable_language(CUDA)
  # CMake before 3.26 does not know nvcc's C++20 flag; nvcc 12 and later take -std=c++20.
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # Shared: the timer then finds libcudart to report its version in the fingerprint.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  find_package(CUDAToolkit REQUIRED)
endif()
