# Compiler settings shared by every Seedance target, and the two helpers that
# module CMakeLists.txt files use: seedance_add_library and seedance_add_test.

add_library(seedance_compile_options INTERFACE)
target_compile_options(seedance_compile_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor>)

if(SEEDANCE_WERROR)
  target_compile_options(seedance_compile_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
endif()

if(SEEDANCE_SANITIZE)
  # The first report fails the run: no recovery from UBSan findings.
  set(_san -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
  add_compile_options(${_san})  # the asan preset turns CUDA off
  add_compile_definitions(SEEDANCE_SANITIZED)  # tests skip what is only a speed claim
  add_link_options(${_san})
endif()

if(SEEDANCE_TSAN)
  if(SEEDANCE_SANITIZE)
    message(FATAL_ERROR "SEEDANCE_TSAN and SEEDANCE_SANITIZE exclude each other (one runtime each)")
  endif()
  set(_tsan -fsanitize=thread -fno-omit-frame-pointer)
  add_compile_options(${_tsan})
  add_compile_definitions(SEEDANCE_SANITIZED)
  add_link_options(${_tsan})
endif()

if(SEEDANCE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT SEEDANCE_SANITIZE)
    message(FATAL_ERROR "SEEDANCE_FUZZ needs clang (libFuzzer) and SEEDANCE_SANITIZE=ON")
  endif()
  # Coverage instrumentation everywhere; only the fuzz targets link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# seedance_add_library(NAME SOURCES ... DEPS ...)
# Creates the static library seedance_NAME with the alias seedance::NAME.
# Public headers live under include/seedance/NAME/.
# The private include root of module `name`: a folder in the build tree whose only entry is
# src/<name>, a link to the module's sources. A module's code (and its tests) can include its own
# private headers as "src/<name>/x.h" and no other module's; scripts/check_rules.py checks the
# public headers against the declared dependencies.
function(seedance_private_include_root name out)
  set(root "${CMAKE_BINARY_DIR}/private_include/${name}")
  if(NOT EXISTS "${root}/src/${name}")
    file(MAKE_DIRECTORY "${root}/src")
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${name}" "${root}/src/${name}" SYMBOLIC)
  endif()
  set(${out} "${root}" PARENT_SCOPE)
endfunction()

function(seedance_add_library name)
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(seedance_${name} STATIC ${ARG_SOURCES})
  add_library(seedance::${name} ALIAS seedance_${name})
  seedance_private_include_root(${name} _private)
  target_include_directories(seedance_${name} PUBLIC "${PROJECT_SOURCE_DIR}/include"
                             PRIVATE "${_private}")
  target_link_libraries(seedance_${name} PUBLIC ${ARG_DEPS}
                        PRIVATE seedance_compile_options ${ARG_PRIVATE_DEPS})
endfunction()

# seedance_add_test(NAME SOURCES ... DEPS ...)
# A GoogleTest binary registered with CTest; tests find shared data through
# SEEDANCE_DATA_DIR (default: ../shared/data next to the source tree).
# seedance_test_uses_httplib(TARGET)
# A test program that talks HTTP with an independent implementation, cpp-httplib's, from Debian
# (libcpp-httplib-dev: a shared library plus its compile definitions). The library itself serves
# and sends through seedance::net; only tests use cpp-httplib.
function(seedance_test_uses_httplib target)
  if(NOT TARGET ${target})
    return()
  endif()
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
  target_link_libraries(${target} PRIVATE PkgConfig::HTTPLIB)
endfunction()

function(seedance_add_test name)
  if(NOT SEEDANCE_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;DEPS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  # A module's tests may include its private headers (src/<module>/x.h), and only its own.
  get_filename_component(module "${CMAKE_CURRENT_SOURCE_DIR}" NAME)
  seedance_private_include_root(${module} private)
  target_include_directories(${name} PRIVATE "${private}")
  target_link_libraries(${name} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock
                        seedance_compile_options)
  target_compile_options(${name} PRIVATE ${SEEDANCE_CCACHE_TEST_FLAGS})  # cmake/SeedanceCcache.cmake
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY "${CMAKE_BINARY_DIR}/tests")
  gtest_discover_tests(${name}
    PROPERTIES LABELS "cpp"
    ENVIRONMENT "SEEDANCE_SOURCE_DIR=${PROJECT_SOURCE_DIR}"
    DISCOVERY_TIMEOUT 60)
endfunction()
