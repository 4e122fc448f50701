# GOODPUT_PCH=ON: one precompiled header (cmake/pch.h) for every C++ target.
#
# scripts/test.sh turns it on for its sanitizer builds (CI compiles the whole
# tree there, on 2 cores; parsing gtest, protobuf, gRPC and Abseil headers
# was about half of each file's compile). Included from the top
# CMakeLists.txt before any target. A precompiled header can only be reused
# by files compiled with the same language options, so it also compiles
# every file with -pthread (most targets already had it through
# Threads::Threads). Once the tree is configured, every target with C++
# sources reuses goodput_pch's header, but for those compiled with their own
# -fsanitize=fuzzer (clang refuses a PCH built without it: codec's fuzzers).
include_guard(GLOBAL)

if(NOT GOODPUT_PCH)
  return()
endif()

add_compile_options(-pthread)
include(${CMAKE_CURRENT_LIST_DIR}/all_targets.cmake)

function(_goodput_pch_reuse t)
  get_property(type TARGET ${t} PROPERTY TYPE)
  get_property(options TARGET ${t} PROPERTY COMPILE_OPTIONS)
  if(t STREQUAL "goodput_pch" OR options MATCHES "-fsanitize=fuzzer[,;]|-fsanitize=fuzzer$" OR
     NOT type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|OBJECT_LIBRARY)$")
    return()
  endif()
  target_precompile_headers(${t} REUSE_FROM goodput_pch)
endfunction()

function(_goodput_pch_finalize)
  add_library(goodput_pch OBJECT "${PROJECT_SOURCE_DIR}/cmake/pch.cc")
  # Not what link_libraries() gave every target (tsan.cmake's wrappers reuse
  # this header: linking them here would be a cycle).
  set_property(TARGET goodput_pch PROPERTY LINK_LIBRARIES "")
  target_link_libraries(goodput_pch PRIVATE GTest::gmock gRPC::grpc++
                        absl::status absl::statusor absl::strings
                        absl::synchronization absl::time
                        nlohmann_json::nlohmann_json protobuf::libprotobuf)
  target_precompile_headers(goodput_pch PRIVATE "${PROJECT_SOURCE_DIR}/cmake/pch.h")
  goodput_all_targets(targets)
  foreach(t IN LISTS targets)
    _goodput_pch_reuse(${t})
  endforeach()
endfunction()

cmake_language(DEFER DIRECTORY "${CMAKE_SOURCE_DIR}" CALL _goodput_pch_finalize)
