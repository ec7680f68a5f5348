# Scenes (SCENES.md check values) and the command-line tool. Needs the tools build (bp_bench).
if(TARGET bp_bench)
  add_executable(test_scene ${CMAKE_CURRENT_SOURCE_DIR}/test_scene.c)
  set_target_properties(test_scene PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_scene PRIVATE bp_bench broadphase::broadphase bp_warnings)

  # Every row of the SCENES.md check-value table (seed 1): scene dim N frame pairs.
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
    "seed 2 3000 10 65243")
  foreach(row IN LISTS BP_SCENE_CHECKS)
    separate_arguments(args UNIX_COMMAND "${row}")
    list(GET args 0 sc)
    list(GET args 1 dm)
    list(GET args 2 nn)
    list(GET args 3 fr)
    add_test(NAME scene_${sc}_${dm}d_${nn}_frame${fr} COMMAND test_scene ${args})
  endforeach()
endif()
