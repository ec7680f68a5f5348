# Method `grid` (issue #3): its own cases, each a CTest test (the oracle suite covers the rest).
bp_lib_test_exe(test_grid)
foreach(case scenes random degenerate extreme query between nomem warm stop draw draw_lattice layouts crowding dense dense_ftz
             far_clusters diagonal long_fit select)
  add_test(NAME grid.${case} COMMAND test_grid ${case})
endforeach()
