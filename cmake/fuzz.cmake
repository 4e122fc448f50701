# libFuzzer support for GOODPUT_FUZZ=ON builds (clang only).
#
# scripts/test.sh passes this file as -DCMAKE_PROJECT_INCLUDE=<it>, so it
# runs right after project(); a CMakeLists.txt may also include() it. With
# GOODPUT_FUZZ on it compiles everything with -fsanitize=fuzzer-no-link
# (coverage instrumentation) and, once the whole tree is configured, links
# every executable target named *_fuzzer with -fsanitize=fuzzer (libFuzzer
# supplies main()). A fuzzer therefore only needs, in its CMakeLists.txt:
#     if(GOODPUT_FUZZ)
#       add_executable(foo_fuzzer foo_fuzzer.cc)  # defines LLVMFuzzerTestOneInput
#       target_link_libraries(foo_fuzzer PRIVATE ...)
#     endif()
# plus optional seeds in <dir>/testdata/corpus/foo_fuzzer/.
include_guard(GLOBAL)

if(NOT GOODPUT_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "GOODPUT_FUZZ=ON needs clang: -DCMAKE_CXX_COMPILER=clang++")
endif()

add_compile_options(-fsanitize=fuzzer-no-link)

include(${CMAKE_CURRENT_LIST_DIR}/all_targets.cmake)

function(_goodput_fuzz_finalize)
  goodput_all_targets(targets)
  foreach(t IN LISTS targets)
    get_property(type TARGET ${t} PROPERTY TYPE)
    if(type STREQUAL "EXECUTABLE" AND t MATCHES "_fuzzer$")
      set_property(TARGET ${t} APPEND PROPERTY LINK_OPTIONS -fsanitize=fuzzer)
    endif()
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}"
               CALL _goodput_fuzz_finalize)
