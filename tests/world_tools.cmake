# The tools side of the persistent world (issue #13): the world scenes of docs/scenes.md driven
# through bp_world and checked against the reference world (bench/world_ref.c), the `broadphase
# world` script command, and the benchmark's world rows. Included from tests/CMakeLists.txt.
if(TARGET bp_bench)
  add_executable(test_world_scene ${CMAKE_CURRENT_SOURCE_DIR}/test_world_scene.c)
  set_target_properties(test_world_scene PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_world_scene PRIVATE bp_bench broadphase::broadphase bp_warnings)

  # Every row of docs/scenes.md's world check values (seed 1): scene dim N, frame 0 pairs, frame 10
  # pairs begins ends[, frame 100 pairs begins ends]; each in the three world modes.
  set(BP_WORLD_SCENE_CHECKS
    "static 2 10000 38 24 3 2"
    "static 2 100000 251 262 34 31"
    "static 3 10000 80 74 12 7"
    "shooter 2 1000 39 39 6 7 53 7 7"
    "shooter 2 10000 510 460 58 63 444 65 59"
    "shooter 3 1000 692 655 113 107 640 113 137")
  foreach(row IN LISTS BP_WORLD_SCENE_CHECKS)
    separate_arguments(args UNIX_COMMAND "${row}")
    list(GET args 0 sc)
    list(GET args 1 dm)
    list(GET args 2 nn)
    list(SUBLIST args 3 -1 values)
    foreach(mode auto incremental rebuild)
      add_test(NAME world_scene.${sc}.${dm}d.${nn}.${mode} COMMAND test_world_scene run ${sc} ${dm} ${nn} ${mode} ${values})
      set_tests_properties(world_scene.${sc}.${dm}d.${nn}.${mode} PROPERTIES LABELS "scenes;world")
    endforeach()
  endforeach()
endif()

# `broadphase world` scripts: the parser and runner in process against the reference world
# (random scripts in both dimensions and every mode; every bad-line case), then the command
# itself through tests/world_cli_test.sh.
if(TARGET bp_bench AND TARGET broadphase_cli)
  add_executable(test_world_script ${CMAKE_CURRENT_SOURCE_DIR}/test_world_script.c
    ${PROJECT_SOURCE_DIR}/tools/world_script.c)
  target_include_directories(test_world_script PRIVATE ${PROJECT_SOURCE_DIR}/tools)
  set_target_properties(test_world_script PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_world_script PRIVATE bp_bench broadphase::broadphase bp_warnings)
  foreach(dim 2 3)
    foreach(mode auto incremental rebuild)
      add_test(NAME world_script.random.${dim}d.${mode} COMMAND test_world_script run ${dim} ${mode})
    endforeach()
  endforeach()
  add_test(NAME world_script.errors COMMAND test_world_script errors)
endif()

find_program(BP_BASH bash)
if(TARGET test_world_script AND BP_BASH)
  set(BP_WORLD_CLI_TEST ${BP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/world_cli_test.sh $<TARGET_FILE:broadphase_cli>
    $<TARGET_FILE:test_world_script>)
  add_test(NAME cli.world.example COMMAND ${BP_WORLD_CLI_TEST} example)
  add_test(NAME cli.world.help COMMAND ${BP_WORLD_CLI_TEST} help)
  foreach(dim 2 3)
    foreach(mode auto incremental rebuild)
      add_test(NAME cli.world.random.${dim}d.${mode} COMMAND ${BP_WORLD_CLI_TEST} random ${dim} ${mode})
    endforeach()
  endforeach()

  # Every kind of bad line through the command: NAME|LINE|DIM|INPUT (printf format). The live
  # proxy limit is lowered to 3 (BROADPHASE_MAX_BOXES) to reach "too many proxies".
  set(BP_WORLD_CLI_BAD
    "unknown_operation|2|2|add 1 moving 1 1 0 0 1 1\\nfrob 1\\n"
    "unknown_query_shape|1|2|query cone 0 0 1 1\\n"
    "too_few_fields|1|2|add 1 moving 1 1 0 0 1\\n"
    "too_many_fields|1|2|update now\\n"
    "too_few_fields_3d|1|3|add 1 moving 1 1 0 0 1 1\\n"
    "bad_id|1|2|add one moving 1 1 0 0 1 1\\n"
    "duplicate_id|3|2|add 1 moving 1 1 0 0 1 1\\n# c\\nadd 1 static 1 1 0 0 1 1\\n"
    "unknown_id|1|2|move 9 0 0 1 1\\n"
    "double_remove|3|2|add 1 moving 1 1 0 0 1 1\\nremove 1\\nremove 1\\n"
    "removed_id|4|2|add 1 moving 1 1 0 0 1 1\\nupdate\\nremove 1\\nfilter 1 1 1\\n"
    "bad_kind|1|2|add 1 sleeping 1 1 0 0 1 1\\n"
    "bad_category|1|2|add 1 moving 0x 1 0 0 1 1\\n"
    "bad_mask|2|2|add 1 moving 1 1 0 0 1 1\\nquery box 0 0 1 1 -1\\n"
    "bad_number|1|2|add 1 moving 1 1 0 0 1 1,\\n"
    "nan|2|3|\\nadd 1 moving 1 1 0 0 0 1 nan 1\\n"
    "inf|1|2|add 1 moving 1 1 -inf 0 1 1\\n"
    "float_overflow|1|2|add 1 moving 1 1 0 0 1 3.5e38\\n"
    "inverted_box|2|2|add 1 moving 1 1 0 0 1 1\\nmove 1 0 2 1 1\\n"
    "inverted_query|1|3|query box 0 0 2 1 1 1 1\\n"
    "negative_radius|1|2|query sphere 0 0 -0.5 1\\n"
    "too_many_proxies|5|2|add 1 moving 1 1 0 0 1 1\\nadd 2 moving 1 1 0 0 1 1\\nadd 3 moving 1 1 0 0 1 1\\nupdate\\nadd 4 moving 1 1 0 0 1 1\\n")
  set(BP_WORLD_CLI_TESTS cli.world.example cli.world.help)
  foreach(row IN LISTS BP_WORLD_CLI_BAD)
    string(REPLACE "|" ";" f "${row}")
    list(GET f 0 name)
    list(GET f 1 line)
    list(GET f 2 dim)
    list(GET f 3 input)
    add_test(NAME cli.world.bad.${name} COMMAND ${BP_WORLD_CLI_TEST} bad ${name} ${line} ${dim} "${input}")
  endforeach()

  # The benchmark's world rows and world scenes: docs/scenes.md's pair counts from every row and peer.
  add_test(NAME cli.world.bench.static_2d COMMAND ${BP_WORLD_CLI_TEST} bench_values static 2 10000 10 24)
  add_test(NAME cli.world.bench.static_3d COMMAND ${BP_WORLD_CLI_TEST} bench_values static 3 10000 10 74)
  add_test(NAME cli.world.bench.shooter_2d COMMAND ${BP_WORLD_CLI_TEST} bench_values shooter 2 1000 10 39)
  add_test(NAME cli.world.bench.shooter_3d COMMAND ${BP_WORLD_CLI_TEST} bench_values shooter 3 1000 10 655)
  add_test(NAME cli.world.bench.rows COMMAND ${BP_WORLD_CLI_TEST} bench_rows)
  add_test(NAME cli.world.usage.unknown_option COMMAND ${BP_WORLD_CLI_TEST} usage --frobnicate in)
  add_test(NAME cli.world.usage.bad_dim COMMAND ${BP_WORLD_CLI_TEST} usage --dim 4 in)
  add_test(NAME cli.world.usage.bad_mode COMMAND ${BP_WORLD_CLI_TEST} usage --mode fast in)
  add_test(NAME cli.world.usage.mode_without_value COMMAND ${BP_WORLD_CLI_TEST} usage in --mode)
  add_test(NAME cli.world.usage.two_files COMMAND ${BP_WORLD_CLI_TEST} usage in in)
  add_test(NAME cli.world.usage.missing_file COMMAND ${BP_WORLD_CLI_TEST} usage no_such_file)
endif()
