# Scenes (docs/scenes.md check values) and the command-line tool. Needs the tools build (bp_bench).
if(TARGET bp_bench)
  add_executable(test_scene ${CMAKE_CURRENT_SOURCE_DIR}/test_scene.c)
  set_target_properties(test_scene PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_scene PRIVATE bp_bench broadphase::broadphase bp_warnings)

  # Every row of the docs/scenes.md check-value table (seed 1): scene dim N frame pairs.
  set(BP_SCENE_CHECKS
    "seed 2 1000 0 9317"       "seed 2 1000 10 7277"
    "uniform 2 1000 0 127"     "uniform 2 1000 10 133"
    "clustered 2 1000 0 1115"  "clustered 2 1000 10 901"
    "mixed 2 1000 0 172"       "mixed 2 1000 10 165"
    "line 2 1000 0 8067"       "line 2 1000 10 8148"
    "uniform 3 1000 0 393"     "uniform 3 1000 10 397"
    "clustered 3 1000 0 17336" "clustered 3 1000 10 1714"
    "uniform 2 10000 10 1243"
    "clustered 2 10000 10 11896"
    "mixed 2 10000 10 1764"
    "seed 2 3000 10 65243"
    "sticks 2 1000 0 7058"     "sticks 2 1000 10 7061"
    "sticks 2 10000 10 71143"
    "sticks 3 1000 10 11151"
    "sizes 2 1000 0 6657"      "sizes 2 1000 10 6689"
    "sizes 2 10000 10 69110"
    "sizes 3 1000 10 130108")
  foreach(row IN LISTS BP_SCENE_CHECKS)
    separate_arguments(args UNIX_COMMAND "${row}")
    list(GET args 0 sc)
    list(GET args 1 dm)
    list(GET args 2 nn)
    list(GET args 3 fr)
    add_test(NAME scene.${sc}.${dm}d.${nn}.frame${fr} COMMAND test_scene count ${args})
    set_tests_properties(scene.${sc}.${dm}d.${nn}.frame${fr} PROPERTIES LABELS scenes)
  endforeach()
endif()

# The command-line tool, through tests/cli_test.sh (bash): BINARY CASE ARGS...
find_program(BP_BASH bash)
if(TARGET broadphase_cli AND BP_BASH)
  set(BP_CLI_TEST ${BP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/cli_test.sh $<TARGET_FILE:broadphase_cli>)
  set(BP_CLI_TESTS "")

  # Every method, both dimensions, equals brute force. A method not built skips (77).
  foreach(method brute sweep grid quadtree rdc auto)
    foreach(dim 2 3)
      foreach(kind random touching identical points large)
        add_test(NAME cli.pairs.${method}.${dim}d.${kind} COMMAND ${BP_CLI_TEST} pairs_equal ${method} ${dim} ${kind})
        list(APPEND BP_CLI_TESTS cli.pairs.${method}.${dim}d.${kind})
      endforeach()
      foreach(kind box circle point)
        add_test(NAME cli.query.${method}.${dim}d.${kind} COMMAND ${BP_CLI_TEST} query ${method} ${dim} ${kind})
        list(APPEND BP_CLI_TESTS cli.query.${method}.${dim}d.${kind})
      endforeach()
    endforeach()
  endforeach()

  # pairs --unsorted: the sorted output's set, in bounded memory.
  foreach(method brute sweep grid quadtree rdc auto)
    foreach(dim 2 3)
      foreach(kind random identical)
        add_test(NAME cli.unsorted.${method}.${dim}d.${kind} COMMAND ${BP_CLI_TEST} unsorted ${method} ${dim} ${kind})
        list(APPEND BP_CLI_TESTS cli.unsorted.${method}.${dim}d.${kind})
      endforeach()
    endforeach()
  endforeach()
  add_test(NAME cli.unsorted.circles COMMAND ${BP_CLI_TEST} unsorted_circles)
  add_test(NAME cli.unsorted.memory COMMAND ${BP_CLI_TEST} unsorted_memory)
  list(APPEND BP_CLI_TESTS cli.unsorted.circles cli.unsorted.memory)

  add_test(NAME cli.circles COMMAND ${BP_CLI_TEST} circles)
  add_test(NAME cli.parse COMMAND ${BP_CLI_TEST} parse)
  list(APPEND BP_CLI_TESTS cli.circles cli.parse)

  # Bad input: NAME LINE DIM FLAGS INPUT (printf format). The tests lower the box limit to 3
  # (BROADPHASE_MAX_BOXES) to reach the "too many boxes" error.
  set(BP_CLI_BAD
    "not_a_number|2|2|-|0 0 1 1\\n0 0 1 x\\n"
    "trailing_garbage|1|2|-|0 0 1 1x\\n"
    "nan|3|2|-|0 0 1 1\\n\\n0 nan 1 1\\n"
    "inf|2|2|-|0 0 1 1\\n0 0 inf 1\\n"
    "minus_inf|2|2|-|# c\\n-inf 0 1 1\\n"
    "float_overflow|1|2|-|0 0 1 1e39\\n"
    "min_gt_max|2|2|-|0 0 1 1\\n0 2 1 1\\n"
    "min_gt_max_3d|1|3|-|0 0 2 1 1 1\\n"
    "too_few|2|2|-|0 0 1 1\\n0 0 1\\n"
    "too_many|2|2|-|0 0 1 1\\n0 0 1 1 1\\n"
    "too_few_3d|1|3|-|0 0 0 1 1\\n"
    "too_many_boxes|5|2|-|0 0 1 1\\n1 1 2 2\\n# c\\n2 2 3 3\\n3 3 4 4\\n"
    "negative_radius|2|2|--circles|0 0 1\\n1 1 -0.5\\n"
    "circle_nan|1|2|--circles|0 nan 1\\n"
    "circle_too_few|1|3|--circles|0 0 1\\n"
    "circle_out_of_range|1|2|--circles|3e38 0 1e38\\n")
  foreach(row IN LISTS BP_CLI_BAD)
    string(REPLACE "|" ";" f "${row}")
    list(GET f 0 name)
    list(GET f 1 line)
    list(GET f 2 dim)
    list(GET f 3 flags)
    list(GET f 4 input)
    if(flags STREQUAL "-")
      set(flags "")
    endif()
    add_test(NAME cli.bad.${name} COMMAND ${BP_CLI_TEST} bad ${name} ${line} ${dim} "${flags}" "${input}")
    list(APPEND BP_CLI_TESTS cli.bad.${name})
  endforeach()

  add_test(NAME cli.help COMMAND ${BP_CLI_TEST} help)
  foreach(sub pairs query bench)
    add_test(NAME cli.help.${sub} COMMAND ${BP_CLI_TEST} help ${sub})
    list(APPEND BP_CLI_TESTS cli.help.${sub})
  endforeach()
  add_test(NAME cli.version COMMAND ${BP_CLI_TEST} version ${PROJECT_VERSION})
  list(APPEND BP_CLI_TESTS cli.help cli.version)

  # Usage errors: exit 2 and a message.
  add_test(NAME cli.usage.unknown_command COMMAND ${BP_CLI_TEST} usage frobnicate)
  add_test(NAME cli.usage.unknown_option COMMAND ${BP_CLI_TEST} usage pairs --frobnicate)
  add_test(NAME cli.usage.unknown_method COMMAND ${BP_CLI_TEST} usage pairs --method bogus)
  add_test(NAME cli.usage.bad_dim COMMAND ${BP_CLI_TEST} usage pairs --dim 4)
  add_test(NAME cli.usage.query_without_shape COMMAND ${BP_CLI_TEST} usage query)
  add_test(NAME cli.usage.query_bad_box COMMAND ${BP_CLI_TEST} usage query --box 1,2,3)
  add_test(NAME cli.usage.query_inverted_box COMMAND ${BP_CLI_TEST} usage query --box 3,0,1,1)
  add_test(NAME cli.usage.query_negative_radius COMMAND ${BP_CLI_TEST} usage query --circle 0,0,-1)
  add_test(NAME cli.usage.bench_unknown_scene COMMAND ${BP_CLI_TEST} usage bench --scene bogus)
  add_test(NAME cli.usage.bench_unknown_method COMMAND ${BP_CLI_TEST} usage bench --method bogus)
  list(APPEND BP_CLI_TESTS cli.usage.unknown_command cli.usage.unknown_option cli.usage.unknown_method
    cli.usage.bad_dim cli.usage.query_without_shape cli.usage.query_bad_box cli.usage.query_inverted_box
    cli.usage.query_negative_radius cli.usage.bench_unknown_scene cli.usage.bench_unknown_method)

  # Workers (issue #14): the same output for any --threads; usage errors.
  foreach(method sweep grid quadtree rdc auto)
    foreach(dim 2 3)
      add_test(NAME cli.pairs.${method}.${dim}d.threads COMMAND ${BP_CLI_TEST} pairs_threads ${method} ${dim})
      list(APPEND BP_CLI_TESTS cli.pairs.${method}.${dim}d.threads)
    endforeach()
  endforeach()
  add_test(NAME cli.bench.threads COMMAND ${BP_CLI_TEST} bench_threads)
  add_test(NAME cli.usage.pairs_threads_zero COMMAND ${BP_CLI_TEST} usage pairs --threads 0)
  add_test(NAME cli.usage.bench_threads_bad COMMAND ${BP_CLI_TEST} usage bench --threads 2,x)
  list(APPEND BP_CLI_TESTS cli.bench.threads cli.usage.pairs_threads_zero cli.usage.bench_threads_bad)

  add_test(NAME cli.bench.csv_check COMMAND ${BP_CLI_TEST} bench_csv)
  add_test(NAME cli.bench.check_values COMMAND ${BP_CLI_TEST} bench_check_values)
  add_test(NAME cli.bench.shapes COMMAND ${BP_CLI_TEST} bench_shapes)
  list(APPEND BP_CLI_TESTS cli.bench.check_values cli.bench.shapes)
  add_test(NAME cli.bench.table COMMAND ${BP_CLI_TEST} bench_table)
  add_test(NAME cli.bench.skip COMMAND ${BP_CLI_TEST} bench_skip)
  # The peers (issue #6): skipped (77) when the peer needed is not compiled in.
  foreach(case peers json out wrong seed_memory)
    add_test(NAME cli.bench.${case} COMMAND ${BP_CLI_TEST} bench_${case})
  endforeach()
  list(APPEND BP_CLI_TESTS cli.bench.csv_check cli.bench.table cli.bench.skip cli.bench.peers cli.bench.json
    cli.bench.out cli.bench.wrong cli.bench.seed_memory)

  set_tests_properties(${BP_CLI_TESTS} PROPERTIES SKIP_RETURN_CODE 77)
endif()
