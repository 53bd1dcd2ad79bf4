# cmake -DFILE=... -DSTRIP=... -DBUDGET=bytes -DWHAT=text -P check_size.cmake
# Fails when FILE, stripped, is larger than BUDGET bytes.
get_filename_component(_name "${FILE}" NAME)
set(_copy "${CMAKE_CURRENT_BINARY_DIR}/${_name}.stripped")
execute_process(COMMAND "${STRIP}" -o "${_copy}" "${FILE}" RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "strip ${FILE} failed")
endif()
file(SIZE "${_copy}" _size)
file(REMOVE "${_copy}")
math(EXPR _kb "(${_size} + 512) / 1024")
math(EXPR _budget_kb "${BUDGET} / 1024")
if(_size GREATER BUDGET)
  message(FATAL_ERROR "${WHAT}: ${_size} bytes stripped (${_kb} KB), over its budget of ${BUDGET} bytes "
                      "(${_budget_kb} KB). Find what grew (nm --size-sort -C on the unstripped file) and "
                      "shrink it, or raise the budget in mobile/CMakeLists.txt with the reason.")
endif()
message(STATUS "${WHAT}: ${_size} bytes stripped (${_kb} KB), budget ${BUDGET} bytes (${_budget_kb} KB)")
