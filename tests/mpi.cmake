# broadphase_mpi's tests (issue #18): each case under mpirun with 1, 2, 3 and 4 ranks
# (oversubscribed: this machine has 2 cores). Included from tests/CMakeLists.txt; nothing when
# MPI was not found (the top-level CMakeLists.txt says so at configure time).
if(NOT TARGET broadphase_mpi OR NOT TARGET bp_bench)
  return()
endif()
add_executable(test_mpi ${CMAKE_CURRENT_SOURCE_DIR}/test_mpi.c)
target_link_libraries(test_mpi PRIVATE broadphase_mpi bp_bench bp_warnings)
set_target_properties(test_mpi PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_compile_options(test_mpi PRIVATE $<$<CONFIG:Debug>:-O1>)
# Open MPI leaves memory of its own at exit, allocated in plug-ins it has unloaded by then (so no
# suppression file can name them): LeakSanitizer is off for these tests, and leaks are checked by
# the tests' counting allocator instead (every context's bytes back to zero, after every failure).
set(bp_mpi_env "ASAN_OPTIONS=detect_leaks=0:abort_on_error=1")
foreach(bp_np 1 2 3 4)
  foreach(bp_case "oracle 2" "oracle 3" "empty 2" "warm 2" "errors 2" "errors 3" "nomem 2")
    string(REPLACE " " "." bp_name "${bp_case}")
    separate_arguments(bp_args UNIX_COMMAND "${bp_case}")
    add_test(NAME mpi.${bp_name}.np${bp_np}
      COMMAND ${MPIEXEC_EXECUTABLE} --allow-run-as-root --oversubscribe ${MPIEXEC_NUMPROC_FLAG} ${bp_np}
              $<TARGET_FILE:test_mpi> ${bp_args})
    set_tests_properties(mpi.${bp_name}.np${bp_np} PROPERTIES TIMEOUT 120 LABELS mpi
      ENVIRONMENT "${bp_mpi_env}")
  endforeach()
endforeach()
