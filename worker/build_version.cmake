# Runs at every build (cmake -P, from worker/CMakeLists.txt): writes the worker's version header
# with the commit the binary is built from, "+dirty" when the tree differs from it. configure_file
# leaves the header untouched while its text stays the same, so nothing recompiles needlessly.
execute_process(COMMAND git -C "${SOURCE_DIR}" rev-parse --short=12 HEAD
                OUTPUT_VARIABLE COMMIT OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT COMMIT)
  set(COMMIT unknown)
else()
  execute_process(COMMAND git -C "${SOURCE_DIR}" diff --quiet HEAD -- RESULT_VARIABLE dirty ERROR_QUIET)
  if(NOT dirty EQUAL 0)
    string(APPEND COMMIT "+dirty")
  endif()
endif()
set(COLLATZ_WORKER_VERSION "${VERSION}+${COMMIT}")
configure_file("${IN}" "${OUT}" @ONLY)
