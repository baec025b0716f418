# CUDA detection. SEEDANCE_CUDA=AUTO compiles the CUDA sources when a CUDA
# compiler is found; without one everything else still builds. The result is
# SEEDANCE_WITH_CUDA (ON/OFF), which src/port uses to pick its sources.
#
# nvcc is looked up, first found wins: CMAKE_CUDA_COMPILER or $CUDACXX if set;
# /usr/local/cuda/bin/nvcc; nvcc on PATH; the NVIDIA CUDA wheels in the project's
# .venv/ (nvidia-cuda-nvcc-cu12 and its successors: site-packages/nvidia/*/bin/nvcc).
set(SEEDANCE_WITH_CUDA OFF)
if(NOT SEEDANCE_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(_seedance_nvcc nvcc PATHS /usr/local/cuda/bin NO_DEFAULT_PATH)
    if(NOT _seedance_nvcc)
      find_program(_seedance_nvcc nvcc)
    endif()
    if(NOT _seedance_nvcc)
      file(GLOB _wheel_nvcc "${PROJECT_SOURCE_DIR}/.venv/lib/python3*/site-packages/nvidia/*/bin/nvcc")
      list(SORT _wheel_nvcc)
      list(REVERSE _wheel_nvcc)  # the newest CUDA first (cu13 before cu12)
      if(_wheel_nvcc)
        list(GET _wheel_nvcc 0 _seedance_nvcc)
      endif()
    endif()
    if(_seedance_nvcc)
      set(CMAKE_CUDA_COMPILER "${_seedance_nvcc}")
    endif()
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
