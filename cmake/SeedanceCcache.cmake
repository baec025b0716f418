# Compiles through ccache when it is installed (Debian's ccache; scripts/dev.sh installs it), so a
# second build of the same sources — another preset's rebuild, a fresh clone's CI run on the same
# machine, the pip-install test — reuses the objects. Off with -DSEEDANCE_CCACHE=OFF, or by
# setting CMAKE_CXX_COMPILER_LAUNCHER yourself.
#
# Keys are shared across checkouts: CCACHE_BASEDIR makes paths under the source tree relative,
# and CCACHE_NOHASHDIR leaves the working directory out of the key of a compile with debug
# information (whose objects then name the first checkout's directory, which only a debugger
# reads). A miss is as good as no ccache: results never depend on the cache.
option(SEEDANCE_CCACHE "Compile through ccache when it is found" ON)
if(SEEDANCE_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  find_program(SEEDANCE_CCACHE_PROGRAM ccache)
  if(SEEDANCE_CCACHE_PROGRAM)
    set(CMAKE_CXX_COMPILER_LAUNCHER
        "${CMAKE_COMMAND};-E;env;CCACHE_BASEDIR=${CMAKE_SOURCE_DIR};CCACHE_NOHASHDIR=true;${SEEDANCE_CCACHE_PROGRAM}")
    message(STATUS "Compiling through ${SEEDANCE_CCACHE_PROGRAM}")
  endif()
endif()
