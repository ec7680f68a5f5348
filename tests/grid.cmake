# Method `grid` (issue #3): its own cases, each a CTest test (the oracle suite covers the rest).
add_executable(test_grid ${CMAKE_CURRENT_SOURCE_DIR}/test_grid.c)
target_link_libraries(test_grid PRIVATE broadphase::broadphase bp_warnings)
set_target_properties(test_grid PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
if(BP_LIBM)
  target_link_libraries(test_grid PRIVATE ${BP_LIBM})
endif()
foreach(case scenes random degenerate extreme query between nomem warm stop draw draw_lattice layouts crowding dense dense_ftz
             far_clusters diagonal long_fit select)
  add_test(NAME grid.${case} COMMAND test_grid ${case})
endforeach()
