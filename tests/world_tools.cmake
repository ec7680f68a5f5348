# The tools side of the persistent world (issue #13): the world scenes of SCENES.md driven
# through bp_world and checked against the reference world (bench/world_ref.c), the `broadphase
# world` script command, and the benchmark's world rows. Included from tests/CMakeLists.txt.
if(TARGET bp_bench)
  add_executable(test_world_scene ${CMAKE_CURRENT_SOURCE_DIR}/test_world_scene.c)
  set_target_properties(test_world_scene PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_world_scene PRIVATE bp_bench broadphase::broadphase bp_warnings)

  # Every row of SCENES.md's world check values (seed 1): scene dim N, frame 0 pairs, frame 10
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
      add_test(NAME world_scene.${sc}.${dm}d.${nn}.${mode} COMMAND test_world_scene ${sc} ${dm} ${nn} ${mode} ${values})
    endforeach()
  endforeach()
endif()
