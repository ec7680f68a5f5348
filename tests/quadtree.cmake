# Method `quadtree` (issue #4): its own cases against brute force, each a CTest test (the oracle
# suite covers the rest). SEED in the environment overrides the random seed.
bp_lib_test_exe(test_quadtree)
foreach(case random boundaries degenerate outside frames draw nomem between morton outlier)
  add_test(NAME quadtree.${case} COMMAND test_quadtree ${case})
endforeach()
