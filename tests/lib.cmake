# The library's own tests (oracle, errors, out of memory, allocation, queries, narrow tests, API,
# radix sort, install), registered with CTest one case at a time. Included from
# tests/CMakeLists.txt.

# Methods to test: AUTO, and every method whose source fills the find_pairs slot (an
# unimplemented method is a class without it, see src/grid.c). The list is made at configure
# time so that CTest shows only real tests; `api.method_list` checks it against
# bp_method_available() at run time, so a method that exists can never go untested silently.
set(BP_TEST_METHODS auto)
foreach(bp_m brute sweep grid quadtree rdc)
  set(bp_src ${PROJECT_SOURCE_DIR}/src/${bp_m}.c)
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${bp_src})
  if(EXISTS ${bp_src})
    file(STRINGS ${bp_src} bp_impl REGEX "\\.find_pairs[ \t]*=")
    if(bp_impl)
      list(APPEND BP_TEST_METHODS ${bp_m})
    endif()
  endif()
endforeach()
string(REPLACE ";" "," BP_TEST_METHOD_CSV "${BP_TEST_METHODS}")
message(STATUS "broadphase tests cover the methods: ${BP_TEST_METHOD_CSV}")

function(bp_lib_test_exe name)
  add_executable(${name} ${CMAKE_CURRENT_SOURCE_DIR}/${name}.c ${ARGN})
  target_link_libraries(${name} PRIVATE broadphase::broadphase bp_warnings)
  set_target_properties(${name} PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  # The tests' own brute-force oracle dominates a sanitized Debug run at -O0; -O1 keeps the
  # whole suite within its time budget and still gives usable stacks.
  target_compile_options(${name} PRIVATE $<$<CONFIG:Debug>:-O1>)
endfunction()

# bp_lib_test(NAME exe args...): one CTest case. Exit code 77 means skipped.
function(bp_lib_test name exe)
  add_test(NAME ${name} COMMAND ${exe} ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 300 LABELS lib)
endfunction()

foreach(bp_t oracle errors nomem alloc queries narrow api world)
  bp_lib_test_exe(test_${bp_t})
endforeach()

# Internals: the radix sort, compiled in directly (its symbols are hidden in a shared build).
add_executable(test_radix ${CMAKE_CURRENT_SOURCE_DIR}/test_radix.c ${PROJECT_SOURCE_DIR}/src/radix_sort.c
               ${PROJECT_SOURCE_DIR}/src/pool.c)
target_include_directories(test_radix PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/include)
target_compile_definitions(test_radix PRIVATE BP_STATIC)
target_link_libraries(test_radix PRIVATE bp_warnings Threads::Threads)
target_compile_options(test_radix PRIVATE $<$<CONFIG:Debug>:-O1>)
set_target_properties(test_radix PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
foreach(bp_c keys32 vals32 keys64 vals64 bits edge)
  bp_lib_test(radix.${bp_c} test_radix ${bp_c})
endforeach()

# Per method and dimension.
set(BP_ORACLE_CASES random large frames shuffle touching identical points line_x line_y huge cover tiny
    one_spot mixed_scale between dense crowded sticks sizes giants extent far)
foreach(bp_m ${BP_TEST_METHODS})
  foreach(bp_d 2 3)
    foreach(bp_c ${BP_ORACLE_CASES})
      bp_lib_test(oracle.${bp_m}.${bp_d}d.${bp_c} test_oracle ${bp_c} ${bp_m} ${bp_d})
    endforeach()
    if(bp_d EQUAL 3)
      bp_lib_test(oracle.${bp_m}.${bp_d}d.line_z test_oracle line_z ${bp_m} ${bp_d})
    endif()
    foreach(bp_c recover stopped)
      bp_lib_test(errors.${bp_m}.${bp_d}d.${bp_c} test_errors ${bp_c} ${bp_m} ${bp_d})
    endforeach()
    foreach(bp_c scenario chaos)
      bp_lib_test(nomem.${bp_m}.${bp_d}d.${bp_c} test_nomem ${bp_c} ${bp_m} ${bp_d})
    endforeach()
    foreach(bp_c warm bytes)
      bp_lib_test(alloc.${bp_m}.${bp_d}d.${bp_c} test_alloc ${bp_c} ${bp_m} ${bp_d})
    endforeach()
    foreach(bp_c random degenerate after_between)
      bp_lib_test(queries.${bp_m}.${bp_d}d.${bp_c} test_queries ${bp_c} ${bp_m} ${bp_d})
    endforeach()
    foreach(bp_c stats sorted batches debug_draw)
      bp_lib_test(api.${bp_m}.${bp_d}d.${bp_c} test_api ${bp_c} ${bp_m} ${bp_d})
    endforeach()
  endforeach()
endforeach()

# Independent of the method.
foreach(bp_c null_args nonfinite inverted too_many dimension bad_def no_boxes bad_query statuses)
  bp_lib_test(errors.${bp_c} test_errors ${bp_c})
endforeach()
foreach(bp_c create)
  bp_lib_test(nomem.${bp_c} test_nomem ${bp_c})
endforeach()
foreach(bp_c box2 box3 circle sphere circle_box sphere_box random bad_input)
  bp_lib_test(narrow.${bp_c} test_narrow ${bp_c})
endforeach()
foreach(bp_c names def destroy_null version auto_rule)
  bp_lib_test(api.${bp_c} test_api ${bp_c})
endforeach()
bp_lib_test(api.method_list test_api method_list ${BP_TEST_METHOD_CSV})
# Proxy ids are a type of their own: tests/typed_ids.c compiles, and each misuse in it does not
# (GCC and Clang flags), as C and as C++ where a C++ compiler is found.
if(CMAKE_C_COMPILER_ID MATCHES "GNU|Clang")
  include(CheckLanguage)
  check_language(CXX)
  add_test(NAME api.typed_ids COMMAND ${CMAKE_COMMAND} -DBP_C=${CMAKE_C_COMPILER} -DBP_CXX=${CMAKE_CXX_COMPILER}
           -DBP_INCLUDE=${PROJECT_SOURCE_DIR}/include -DBP_SOURCE=${CMAKE_CURRENT_SOURCE_DIR}/typed_ids.c
           -P ${CMAKE_CURRENT_SOURCE_DIR}/typed_ids.cmake)
  set_tests_properties(api.typed_ids PROPERTIES LABELS lib TIMEOUT 120)
endif()

# The persistent world (issue #13), against the brute-force model world in test_world.c.
foreach(bp_d 2 3)
  foreach(bp_mode auto incremental rebuild)
    foreach(bp_c random frames nomem near lag same_box)
      bp_lib_test(world.${bp_c}.${bp_d}d.${bp_mode} test_world ${bp_c} ${bp_d} ${bp_mode})
    endforeach()
  endforeach()
  foreach(bp_c order warm huge large)
    bp_lib_test(world.${bp_c}.${bp_d}d test_world ${bp_c} ${bp_d})
  endforeach()
  foreach(bp_mode auto incremental rebuild)
    bp_lib_test(world.static.${bp_d}d.${bp_mode} test_world static ${bp_d} ${bp_mode})
  endforeach()
endforeach()
foreach(bp_c errors ids null_id defs)
  bp_lib_test(world.${bp_c} test_world ${bp_c})
endforeach()

# Install: `cmake --install` into a prefix under the build tree, then two consumers, one through
# find_package and one through pkg-config. Single-configuration generators only.
if(NOT CMAKE_CONFIGURATION_TYPES AND NOT CMAKE_CROSSCOMPILING)
  set(bp_iwork ${CMAKE_CURRENT_BINARY_DIR}/install-test)
  set(bp_iargs -DBP_BUILD_DIR=${PROJECT_BINARY_DIR} -DBP_SOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR}/install
      -DBP_WORK_DIR=${bp_iwork} -DBP_C_COMPILER=${CMAKE_C_COMPILER} -DBP_GENERATOR=${CMAKE_GENERATOR}
      -DBP_BUILD_TYPE=${CMAKE_BUILD_TYPE} -DBP_SANITIZE=${BP_SANITIZE})
  add_test(NAME install.prefix COMMAND ${CMAKE_COMMAND} ${bp_iargs} -DBP_STEP=prefix
           -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run.cmake)
  add_test(NAME install.find_package COMMAND ${CMAKE_COMMAND} ${bp_iargs} -DBP_STEP=find_package
           -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run.cmake)
  add_test(NAME install.pkg_config COMMAND ${CMAKE_COMMAND} ${bp_iargs} -DBP_STEP=pkg_config
           -P ${CMAKE_CURRENT_SOURCE_DIR}/install/run.cmake)
  set_tests_properties(install.prefix PROPERTIES FIXTURES_SETUP bp_installed LABELS install TIMEOUT 300)
  set_tests_properties(install.find_package PROPERTIES FIXTURES_REQUIRED bp_installed LABELS install TIMEOUT 300)
  set_tests_properties(install.pkg_config PROPERTIES FIXTURES_REQUIRED bp_installed LABELS install TIMEOUT 300
                       SKIP_REGULAR_EXPRESSION "SKIPPED: pkg-config not found")
endif()

# Exports: the shared library exports the BP_API functions of broadphase.h and nothing else. A
# static build (the default) checks libbroadphase_python.so instead: the same sources under the
# same rule (hidden visibility, BP_BUILDING; python/CMakeLists.txt).
if(CMAKE_SYSTEM_NAME STREQUAL "Linux" AND NOT CMAKE_CROSSCOMPILING)
  get_target_property(bp_core_type broadphase TYPE)
  set(bp_core_shared "")
  if(bp_core_type STREQUAL "SHARED_LIBRARY")
    set(bp_core_shared broadphase)
  elseif(TARGET broadphase_python)
    set(bp_core_shared broadphase_python)
  endif()
  if(bp_core_shared)
    add_test(NAME install.exports
      COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/exports_test.sh $<TARGET_FILE:${bp_core_shared}>
              ${PROJECT_SOURCE_DIR}/include/broadphase.h BP_API bp_)
    set_tests_properties(install.exports PROPERTIES LABELS install SKIP_REGULAR_EXPRESSION "SKIPPED: nm not found")
  endif()
endif()

# Chaos allocation (issue #17): allocations refused at random, 1 in 3 and 1 in 100, over long
# runs of frames (every method) and world operations (both dimensions).
bp_lib_test_exe(test_chaos)
foreach(bp_rate 3 100)
  foreach(bp_d 2 3)
    foreach(bp_m ${BP_TEST_METHODS})
      bp_lib_test(chaos.context.${bp_m}.${bp_d}d.1in${bp_rate} test_chaos context ${bp_m} ${bp_d} ${bp_rate})
    endforeach()
    bp_lib_test(chaos.world.${bp_d}d.1in${bp_rate} test_chaos world auto ${bp_d} ${bp_rate})
  endforeach()
endforeach()
# Hooks that break their promise: debug builds assert (the test passes on that abort).
if(CMAKE_BUILD_TYPE STREQUAL "Debug")
  foreach(bp_how misaligned twice)
    bp_lib_test(chaos.broken_hooks.${bp_how} test_chaos broken ${bp_how})
  endforeach()
endif()

# The speed features' counters in bp_stats (sweep axis, coherence, full sorts, resorts, moved).
bp_lib_test_exe(test_stats)
foreach(bp_d 2 3)
  foreach(bp_c axis hysteresis moved defaults)
    bp_lib_test(stats.${bp_d}d.${bp_c} test_stats ${bp_c} ${bp_d})
  endforeach()
  foreach(bp_m sweep quadtree rdc grid)
    if(bp_m IN_LIST BP_TEST_METHODS)
      bp_lib_test(stats.${bp_m}.${bp_d}d.coherence test_stats coherence ${bp_m} ${bp_d})
      bp_lib_test(stats.${bp_m}.${bp_d}d.coherence_workers test_stats coherence ${bp_m} ${bp_d} 2)
    endif()
  endforeach()
endforeach()

# The source tree's structure (issue #35, scripts/arch_check.py): no two modules of src/ use each
# other, no file in src/ is over 1,000 lines, no function in src/, mpi/ or tools/ over 100.
# Needs python3 and Universal Ctags (scripts/setup.sh --full installs it); not registered without.
find_program(BP_PYTHON3 python3)
find_program(BP_CTAGS ctags)
if(BP_PYTHON3 AND BP_CTAGS)
  add_test(NAME arch.limits COMMAND ${BP_PYTHON3} ${PROJECT_SOURCE_DIR}/scripts/arch_check.py ${PROJECT_SOURCE_DIR})
  set_tests_properties(arch.limits PROPERTIES LABELS lib TIMEOUT 120)
endif()
