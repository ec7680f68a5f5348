# Method `quadtree` (issue #4): its own cases against brute force, each a CTest test (the oracle
# suite covers the rest). SEED in the environment overrides the random seed.
add_executable(test_quadtree ${CMAKE_CURRENT_SOURCE_DIR}/test_quadtree.c)
target_link_libraries(test_quadtree PRIVATE broadphase::broadphase bp_warnings)
set_target_properties(test_quadtree PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
if(BP_LIBM)
  target_link_libraries(test_quadtree PRIVATE ${BP_LIBM})
endif()
foreach(case random boundaries degenerate outside frames draw nomem between morton outlier)
  add_test(NAME quadtree.${case} COMMAND test_quadtree ${case})
endforeach()
