# CUDA detection. SEEDANCE_CUDA=AUTO compiles the CUDA sources when a CUDA
# compiler is found; without one everything else still builds. The result is
# SEEDANCE_WITH_CUDA (ON/OFF), which src/port uses to pick its sources.
set(SEEDANCE_WITH_CUDA OFF)
if(NOT SEEDANCE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND EXISTS "/usr/local/cuda/bin/nvcc")
    set(CMAKE_CUDA_COMPILER "/usr/local/cuda/bin/nvcc")
  endif()
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # A100 (sm_80), L4/L40S (sm_89), H100/H200 (sm_90).
      set(CMAKE_CUDA_ARCHITECTURES 80 89 90)
    endif()
    enable_language(CUDA)
    # CMake 3.25 does not know how to ask nvcc for C++20; the .cu files need only C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    find_package(CUDAToolkit REQUIRED)
    set(SEEDANCE_WITH_CUDA ON)
  elseif(SEEDANCE_CUDA STREQUAL "ON")
    message(FATAL_ERROR "SEEDANCE_CUDA=ON but no CUDA compiler was found")
  endif()
endif()
message(STATUS "Seedance: CUDA sources ${SEEDANCE_WITH_CUDA}")
