# Fails when a C++ file of the project differs from what clang-format (FORMAT, version 14) makes of it with the
# repository's .clang-format. `make format` rewrites them. The layering fixtures (tests/layering/*_tree/) are test
# data and keep their shape.
#   cmake -DFORMAT=/usr/bin/clang-format-14 -DSOURCE=<repo> -P check_format.cmake
file(GLOB_RECURSE files RELATIVE ${SOURCE}
     ${SOURCE}/sim/*.cpp ${SOURCE}/sim/*.hpp ${SOURCE}/analysis/*.cpp ${SOURCE}/analysis/*.hpp
     ${SOURCE}/tests/*.cpp ${SOURCE}/tests/*.hpp ${SOURCE}/fuzz/*.cpp ${SOURCE}/fuzz/*.hpp)
list(FILTER files EXCLUDE REGEX "^tests/layering/[a-z_]*_tree/")
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no C++ file found under ${SOURCE}")
endif()
execute_process(COMMAND ${FORMAT} --dry-run --Werror ${files} WORKING_DIRECTORY ${SOURCE}
                RESULT_VARIABLE result ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  string(REGEX MATCHALL "[^\n]*: error: code should be clang-formatted[^\n]*" lines "${errors}")
  set(named "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE ":[0-9]+:[0-9]+: error.*" "" file "${line}")
    list(APPEND named ${file})
  endforeach()
  list(REMOVE_DUPLICATES named)
  list(JOIN named "\n  " named)
  message(FATAL_ERROR "not formatted with .clang-format (run `make format`):\n  ${named}")
endif()
message(STATUS "${count} files formatted as .clang-format says")
