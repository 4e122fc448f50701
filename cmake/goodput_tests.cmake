# goodput_require_test_files(NAME...): a test list names NAME_test.cc
# beside the calling CMakeLists.txt; configure fails, naming the file, when
# one is missing, instead of an if(EXISTS ...) that quietly builds nothing
# (issue 13 item 6). Call it with the list before the loop that builds the
# tests.
function(goodput_require_test_files)
  foreach(t ${ARGN})
    if(NOT EXISTS ${CMAKE_CURRENT_SOURCE_DIR}/${t}_test.cc)
      message(FATAL_ERROR
        "${CMAKE_CURRENT_SOURCE_DIR}/${t}_test.cc: listed as a test in "
        "${CMAKE_CURRENT_LIST_FILE} but missing; add it or take it off "
        "the list")
    endif()
  endforeach()
endfunction()
