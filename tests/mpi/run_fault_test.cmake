# Runs one scenario of fault_program under mpiexec with a hard time limit and checks that the
# job ended (not killed by the limit), with a non-zero exit code, within MAX_SECONDS, and that
# its output matches EXPECT.
# -DMPIEXEC=... -DPROGRAM=... -DSCENARIO=... -DEXPECT=regex -DMAX_SECONDS=n
# Optional: -DREJECT=regex the output must not match; -DALLOW_SUCCESS=ON accepts exit code 0 (a
# launcher that ends the job because a process exited reports that process's exit code);
# -DSUCCEED=ON requires exit code 0 instead; -DNP=n processes (2); -DARGS="a b" more arguments
# after the scenario; -DTHREAD_LINES=n: exactly n lines "process P thread T: ..." (every thread
# of every process said how its call ended).
if(NOT NP)
  set(NP 2)
endif()
separate_arguments(extra_args UNIX_COMMAND "${ARGS}")
string(TIMESTAMP start "%s")
execute_process(
  COMMAND ${MPIEXEC} -n ${NP} ${PROGRAM} ${SCENARIO} ${extra_args}
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE err
  TIMEOUT 120)
string(TIMESTAMP end "%s")
math(EXPR elapsed "${end} - ${start}")
message("exit: ${rc}, ${elapsed} s\n--- stdout\n${out}--- stderr\n${err}")
# Open MPI's mpirun (4.1, Debian's PMIx) now and then deadlocks in its own PMIx teardown after a
# process called MPI_Abort, every process of the job already gone (docs/mpi.md): that hang is the
# launcher's, not the job's, and is told apart by mpirun's report of the abort.
set(launcher_hung OFF)
if(rc MATCHES "timeout")
  if("${out}${err}" MATCHES "MPI_ABORT was invoked on rank" AND "${out}${err}" MATCHES "${EXPECT}")
    message("${SCENARIO}: mpirun hung after the job's MPI_Abort (Open MPI's teardown)")
    set(launcher_hung ON)
  else()
    message(FATAL_ERROR "${SCENARIO}: the job hung (killed after 120 s)")
  endif()
endif()
if(SUCCEED AND NOT rc EQUAL 0)
  message(FATAL_ERROR "${SCENARIO}: the job failed (exit ${rc}) although nothing was wrong")
endif()
if(rc EQUAL 0 AND NOT ALLOW_SUCCESS AND NOT SUCCEED)
  message(FATAL_ERROR "${SCENARIO}: the job succeeded although it failed on purpose")
endif()
if(elapsed GREATER MAX_SECONDS AND NOT launcher_hung)
  message(FATAL_ERROR "${SCENARIO}: the job took ${elapsed} s, more than ${MAX_SECONDS} s")
endif()
if(NOT "${out}${err}" MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SCENARIO}: the output does not match '${EXPECT}'")
endif()
if(DEFINED REJECT AND NOT "${REJECT}" STREQUAL "" AND "${out}${err}" MATCHES "${REJECT}")
  message(FATAL_ERROR "${SCENARIO}: the output matches '${REJECT}'")
endif()
if(THREAD_LINES)
  string(REGEX MATCHALL "process [0-9]+ thread [0-9]+: " lines "${out}")
  list(LENGTH lines count)
  if(NOT count EQUAL THREAD_LINES)
    message(FATAL_ERROR "${SCENARIO}: ${count} threads said how their call ended, not ${THREAD_LINES}")
  endif()
endif()
