# Method rdc (recursive dimensional clustering): its own cases, each a CTest test.
bp_lib_test_exe(test_rdc)
foreach(name seed_figure random frames degenerate deep epsilon queries nomem between)
  add_test(NAME rdc.${name} COMMAND test_rdc ${name})
endforeach()
