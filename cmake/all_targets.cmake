# goodput_all_targets(OUT [DIR]): every target defined in DIR (default: the
# top source directory) and the directories below it, in OUT. For the
# whole-tree passes run once configuration is done (cmake/fuzz.cmake links
# the fuzzers, cmake/pch.cmake attaches the precompiled header).
include_guard(GLOBAL)

function(goodput_all_targets out)
  set(dir "${CMAKE_SOURCE_DIR}")
  if(ARGC GREATER 1)
    set(dir "${ARGV1}")
  endif()
  get_property(found DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
  get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
  foreach(sub IN LISTS subdirs)
    goodput_all_targets(below "${sub}")
    list(APPEND found ${below})
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()
