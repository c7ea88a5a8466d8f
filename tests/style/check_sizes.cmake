# Fails when a C++ source file of the project is over 700 lines (the house rule: a file that long holds more than
# one part; split it along its named parts). Functions over 120 lines are clang-tidy's to find
# (readability-function-size).
#   cmake -DSOURCE=<repo> -P check_sizes.cmake
set(limit 700)
file(GLOB_RECURSE files RELATIVE ${SOURCE}
     ${SOURCE}/sim/*.cpp ${SOURCE}/sim/*.hpp ${SOURCE}/analysis/*.cpp ${SOURCE}/analysis/*.hpp
     ${SOURCE}/tests/*.cpp ${SOURCE}/tests/*.hpp)
list(LENGTH files count)
if(count EQUAL 0)
  message(FATAL_ERROR "no C++ file found under ${SOURCE}")
endif()
set(over "")
set(longest 0)
foreach(f IN LISTS files)
  file(READ ${SOURCE}/${f} text)
  string(REGEX REPLACE "[^\n]" "" newlines "${text}")
  string(LENGTH "${newlines}" n)
  if(n GREATER longest)
    set(longest ${n})
    set(longest_file ${f})
  endif()
  if(n GREATER limit)
    list(APPEND over "${f}: ${n} lines")
  endif()
endforeach()
if(over)
  list(JOIN over "\n  " over)
  message(FATAL_ERROR "over ${limit} lines (split along the file's named parts):\n  ${over}")
endif()
message(STATUS "${count} files, none over ${limit} lines (longest: ${longest_file}, ${longest})")
