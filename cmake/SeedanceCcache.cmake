# Compiles through ccache when it is installed (Debian's ccache; scripts/dev.sh installs it), so a
# second build of the same sources — another preset's rebuild, a fresh clone's CI run on the same
# machine, the pip-install test — reuses the objects. Off with -DSEEDANCE_CCACHE=OFF, or by
# setting CMAKE_CXX_COMPILER_LAUNCHER yourself.
#
# Keys are shared across checkouts: CCACHE_BASEDIR makes paths under the source tree relative,
# and CCACHE_NOHASHDIR leaves the working directory out of the key of a compile with debug
# information (whose objects then name the first checkout's directory, which only a debugger
# reads). Two more things would make every fresh checkout miss, and are handled here:
# - a unity build (the asan and tsan presets) compiles a generated file that #includes each
#   source by its absolute path, so __FILE__ expands to the checkout's path inside the
#   preprocessed text. The test programs expand it in every gtest assertion, so their compiles
#   get -fmacro-prefix-map (SEEDANCE_CCACHE_TEST_FLAGS, read by seedance_add_test), which writes
#   it relative to the source tree; the libraries keep their flags and so their cached objects;
# - the precompiled headers of _core and seedancectl: ccache caches a compile that uses one only
#   with the pch_defines and time_macros sloppiness (no source here reads __DATE__ or __TIME__).
# nvcc goes through ccache too. A miss is as good as no ccache: results never depend on the cache.
option(SEEDANCE_CCACHE "Compile through ccache when it is found" ON)
if(SEEDANCE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(SEEDANCE_CCACHE_PROGRAM ccache)
  if(SEEDANCE_CCACHE_PROGRAM)
    set(_seedance_launcher
        "${CMAKE_COMMAND};-E;env;CCACHE_BASEDIR=${CMAKE_SOURCE_DIR};CCACHE_NOHASHDIR=true;CCACHE_SLOPPINESS=pch_defines,time_macros;${SEEDANCE_CCACHE_PROGRAM}")
    set(CMAKE_CXX_COMPILER_LAUNCHER "${_seedance_launcher}")
    if(NOT CMAKE_CUDA_COMPILER_LAUNCHER)
      set(CMAKE_CUDA_COMPILER_LAUNCHER "${_seedance_launcher}")
    endif()
    if(CMAKE_UNITY_BUILD)
      set(SEEDANCE_CCACHE_TEST_FLAGS "-fmacro-prefix-map=${CMAKE_SOURCE_DIR}/=")
    endif()
    message(STATUS "Compiling through ${SEEDANCE_CCACHE_PROGRAM}")
  endif()
endif()
