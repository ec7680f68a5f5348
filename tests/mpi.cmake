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

# Exports: the shared libbroadphase_mpi exports the BP_MPI_API functions of broadphase_mpi.h and
# nothing else (hidden visibility; the internals are bpm_* and static). A static build (the
# default) links a shared copy for the check from the library's own sources, compile definitions
# and visibility, with BP_MPI_STATIC left out (it empties BP_MPI_API); the core it links is
# static there, its symbols hidden.
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  get_target_property(bp_mpi_type broadphase_mpi TYPE)
  if(bp_mpi_type STREQUAL "SHARED_LIBRARY")
    set(bp_mpi_shared broadphase_mpi)
  else()
    get_target_property(bp_mpi_sources broadphase_mpi SOURCES)
    get_target_property(bp_mpi_dir broadphase_mpi SOURCE_DIR)
    get_target_property(bp_mpi_defs broadphase_mpi COMPILE_DEFINITIONS)
    get_target_property(bp_mpi_visibility broadphase_mpi C_VISIBILITY_PRESET)
    list(TRANSFORM bp_mpi_sources PREPEND "${bp_mpi_dir}/")
    list(FILTER bp_mpi_defs EXCLUDE REGEX "BP_MPI_STATIC")
    set(bp_mpi_shared test_mpi_exports)
    add_library(test_mpi_exports SHARED ${bp_mpi_sources})
    target_compile_definitions(test_mpi_exports PRIVATE ${bp_mpi_defs})
    target_link_libraries(test_mpi_exports PRIVATE broadphase::broadphase MPI::MPI_C bp_warnings)
    if(BP_LIBM)
      target_link_libraries(test_mpi_exports PRIVATE ${BP_LIBM})
    endif()
    set_target_properties(test_mpi_exports PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
    if(bp_mpi_visibility)
      set_target_properties(test_mpi_exports PROPERTIES C_VISIBILITY_PRESET ${bp_mpi_visibility})
    endif()
  endif()
  add_test(NAME mpi.exports
    COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/exports_test.sh $<TARGET_FILE:${bp_mpi_shared}>
            ${PROJECT_SOURCE_DIR}/include/broadphase_mpi.h BP_MPI_API bp_mpi_)
  set_tests_properties(mpi.exports PROPERTIES LABELS mpi SKIP_REGULAR_EXPRESSION "SKIPPED: nm not found")
endif()
