# The framesim executable starts without loading the libraries of its two modules (sim/README.md): none of
# SimGrid, ONNX, protobuf, SQLite or libcrypto is among its NEEDED entries; they come with framesim-engine.so and
# framesim-importers.so when a command needs them.
#   cmake -DBINARY=path/to/framesim -P check_needed.cmake
execute_process(COMMAND readelf -d ${BINARY} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "readelf -d ${BINARY} failed (${rc})")
endif()
if(NOT out MATCHES "NEEDED")
  message(FATAL_ERROR "${BINARY}: no NEEDED entries (not a dynamically linked executable?)")
endif()
foreach(lib simgrid onnx protobuf sqlite3 crypto)
  string(REGEX MATCH "NEEDED[^\n]*lib${lib}[^\n]*" hit "${out}")
  if(hit)
    message(FATAL_ERROR "${BINARY} loads lib${lib} at every start: ${hit}")
  endif()
endforeach()
message(STATUS "${BINARY}: none of SimGrid, ONNX, protobuf, SQLite or libcrypto among its NEEDED entries")
