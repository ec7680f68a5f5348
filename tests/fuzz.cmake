# Fuzz targets (issue #17, tests/fuzz/): each a decoder from bytes to operations with its own
# brute-force oracle. Two builds of each:
#  - fuzz_replay_<target>, with any compiler: replays the seed corpus and every regression input
#    in tests/fuzz/corpus/<target>/ (CTest fuzz.replay.<target>), so they run in every build;
#  - fuzz_<target>, the libFuzzer executable, only with -DBP_FUZZ=ON and clang (which also
#    instruments every target for coverage). tests/fuzz/run.sh configures that build when clang
#    is found and runs each target for a bounded time (.ci/run).
set(BP_FUZZ_TARGETS context world parser)
set(BP_FUZZ_DIR ${CMAKE_CURRENT_SOURCE_DIR}/fuzz)

function(bp_fuzz_sources out target)
  set(srcs ${BP_FUZZ_DIR}/fuzz_${target}.c)
  if(target STREQUAL "parser")
    list(APPEND srcs ${PROJECT_SOURCE_DIR}/tools/input.c ${PROJECT_SOURCE_DIR}/tools/world_script.c)
  endif()
  set(${out} ${srcs} PARENT_SCOPE)
endfunction()

# bp_fuzz_exe(NAME SOURCES...): a fuzz target's executable, either build.
function(bp_fuzz_exe name)
  add_executable(${name} ${ARGN})
  target_include_directories(${name} PRIVATE ${BP_FUZZ_DIR} ${PROJECT_SOURCE_DIR}/tools)
  target_link_libraries(${name} PRIVATE broadphase::broadphase bp_warnings)
  if(BP_LIBM)
    target_link_libraries(${name} PRIVATE ${BP_LIBM})
  endif()
  set_target_properties(${name} PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
endfunction()

foreach(bp_t ${BP_FUZZ_TARGETS})
  bp_fuzz_sources(bp_srcs ${bp_t})
  set(bp_replay_srcs ${BP_FUZZ_DIR}/replay.c ${bp_srcs})
  list(APPEND bp_replay_srcs ${PROJECT_SOURCE_DIR}/tools/input.c)  # its file reader
  list(REMOVE_DUPLICATES bp_replay_srcs)
  bp_fuzz_exe(fuzz_replay_${bp_t} ${bp_replay_srcs})
  target_compile_options(fuzz_replay_${bp_t} PRIVATE $<$<CONFIG:Debug>:-O1>)
  add_test(NAME fuzz.replay.${bp_t} COMMAND fuzz_replay_${bp_t} ${BP_FUZZ_DIR}/corpus/${bp_t})
  set_tests_properties(fuzz.replay.${bp_t} PROPERTIES TIMEOUT 300 LABELS fuzz)

  if(BP_FUZZ)
    bp_fuzz_exe(fuzz_${bp_t} ${bp_srcs})
    target_compile_options(fuzz_${bp_t} PRIVATE -fsanitize=fuzzer)
    target_link_options(fuzz_${bp_t} PRIVATE -fsanitize=fuzzer)
  endif()
endforeach()
