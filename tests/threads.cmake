# Workers (issue #14): determinism across worker counts and task schedulers, errors inside
# workers. Label `threads`: the ThreadSanitizer build of .ci/run runs these.
add_executable(test_threads ${CMAKE_CURRENT_SOURCE_DIR}/test_threads.c)
set_target_properties(test_threads PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(test_threads PRIVATE broadphase::broadphase bp_warnings Threads::Threads)
target_compile_options(test_threads PRIVATE $<$<CONFIG:Debug>:-O1>)
if(TARGET bp_bench)
  target_link_libraries(test_threads PRIVATE bp_bench)
  target_compile_definitions(test_threads PRIVATE BPT_HAVE_SCENES)
endif()
if(BP_LIBM)
  target_link_libraries(test_threads PRIVATE ${BP_LIBM})
endif()
# Under the sanitizers (ten times slower or more), smaller inputs that take the same paths.
if(BP_SANITIZE)
  target_compile_definitions(test_threads PRIVATE BPT_QUICK)
endif()

# Label `tsan`: the ones the ThreadSanitizer build of .ci/run runs (every method and dimension
# with 1/2/3/7 workers, the task hooks, failing allocations), the rest being the same passes.
function(bp_threads_test name labels)
  add_test(NAME threads.${name} COMMAND test_threads ${ARGN})
  set_tests_properties(threads.${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS "${labels}")
endfunction()

foreach(bp_m ${BP_TEST_METHODS})
  foreach(bp_d 2 3)
    foreach(bp_c same sorted hooks nomem stopped bad_hooks warm)
      set(bp_l "lib;threads")
      if(bp_c STREQUAL "same" OR (bp_d EQUAL 2 AND (bp_c STREQUAL "hooks" OR bp_c STREQUAL "nomem")))
        set(bp_l "lib;threads;tsan")
      endif()
      bp_threads_test(${bp_m}.${bp_d}d.${bp_c} "${bp_l}" ${bp_c} ${bp_m} ${bp_d})
    endforeach()
  endforeach()
endforeach()
foreach(bp_c auto bad_def)
  bp_threads_test(${bp_c} "lib;threads;tsan" ${bp_c})
endforeach()
