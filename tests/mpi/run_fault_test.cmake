# Runs one scenario of fault_program under mpiexec with a hard time limit and checks that the
# job ended (not killed by the limit), with a non-zero exit code, within MAX_SECONDS, and that
# its output matches EXPECT.
# -DMPIEXEC=... -DPROGRAM=... -DSCENARIO=... -DEXPECT=regex -DMAX_SECONDS=n
# Optional: -DREJECT=regex the output must not match; -DALLOW_SUCCESS=ON accepts exit code 0 (a
# launcher that ends the job because a process exited reports that process's exit code).
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} -n 2 ${PROGRAM} ${SCENARIO}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 120)
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("exit: ${rc}, ${elapsed} s\n--- stdout\n${out}--- stderr\n${err}")
if(rc MATCHES "timeout")
  message(FATAL_ERROR "${SCENARIO}: the job hung (killed after 120 s)")
endif()
if(rc EQUAL 0 AND NOT ALLOW_SUCCESS)
  message(FATAL_ERROR "${SCENARIO}: the job succeeded although it failed on purpose")
endif()
if(elapsed GREATER MAX_SECONDS)
  message(FATAL_ERROR "${SCENARIO}: the job took ${elapsed} s, more than ${MAX_SECONDS} s")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SCENARIO}: the output does not match '${EXPECT}'")
endif()
if(DEFINED REJECT AND NOT "${REJECT}" STREQUAL "" AND "${out}${err}" MATCHES "${REJECT}")
  message(FATAL_ERROR "${SCENARIO}: the output matches '${REJECT}'")
endif()
