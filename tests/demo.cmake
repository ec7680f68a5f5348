# Tests of broadphase-demo (issue #7). This file is both the CTest registration (included from
# tests/CMakeLists.txt) and, run with `cmake -P`, the test driver: the demo target is defined
# after tests/ is read, so each test carries its path through a generator expression and the
# driver reports a skip when the demo is not built (no SDL2, or no scene generator).
#
# Driver: cmake -DDEMO=<demo or empty> -DCHECK=<checker> -P demo.cmake -- DEMO_ARGS [:: CHECK_ARGS]
if(CMAKE_SCRIPT_MODE_FILE)
  set(demo_args "")
  set(check_args "")
  set(where "")
  math(EXPR last "${CMAKE_ARGC} - 1")
  foreach(k RANGE ${last})
    set(a "${CMAKE_ARGV${k}}")
    if(where STREQUAL "" AND a STREQUAL "--")
      set(where demo)
    elseif(where STREQUAL "demo" AND a STREQUAL "::")
      set(where check)
    elseif(where STREQUAL "demo")
      list(APPEND demo_args "${a}")
    elseif(where STREQUAL "check")
      list(APPEND check_args "${a}")
    endif()
  endforeach()
  if(NOT DEMO)
    message("broadphase-demo not built: skipped")
    return()
  endif()
  execute_process(COMMAND ${DEMO} ${demo_args} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "broadphase-demo ${demo_args}: exit status ${rc}")
  endif()
  if(check_args)
    execute_process(COMMAND ${CHECK} ${check_args} RESULT_VARIABLE rc)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "bp_demo_check ${check_args}: exit status ${rc}")
    endif()
  endif()
  return()
endif()

set(BP_DEMO_EXE "$<$<TARGET_EXISTS:broadphase-demo>:$<TARGET_FILE:broadphase-demo>>")
set(BP_DEMO_CHECK "$<$<TARGET_EXISTS:bp_demo_check>:$<TARGET_FILE:bp_demo_check>>")
set(BP_DEMO_DRIVER ${CMAKE_CURRENT_LIST_FILE})
set(BP_DEMO_OUT ${CMAKE_CURRENT_BINARY_DIR}/demo)
file(MAKE_DIRECTORY ${BP_DEMO_OUT})

function(bp_demo_test name)
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DDEMO=${BP_DEMO_EXE} -DCHECK=${BP_DEMO_CHECK}
    -P ${BP_DEMO_DRIVER} -- ${ARGN})
  set_tests_properties(${name} PROPERTIES SKIP_REGULAR_EXPRESSION "not built: skipped" TIMEOUT 300)
endfunction()

# The headless picture: red exactly at overlapping circles' centres, white at isolated ones.
bp_demo_test(demo.png.seed_frame30
  --headless --frames 30 --method sweep --png ${BP_DEMO_OUT}/seed30.png
  :: --png ${BP_DEMO_OUT}/seed30.png --frames 30)
bp_demo_test(demo.png.seed_frame0_snap
  --headless --frames 0 --snap --method brute --png ${BP_DEMO_OUT}/seed0snap.png
  :: --png ${BP_DEMO_OUT}/seed0snap.png --frames 0 --snap)
bp_demo_test(demo.png.seed_n1000_frame10
  --headless --n 1000 --frames 10 --png ${BP_DEMO_OUT}/seed1000.png
  :: --png ${BP_DEMO_OUT}/seed1000.png --n 1000 --frames 10)
bp_demo_test(demo.png.uniform_frame5
  --headless --scene uniform --n 2000 --scale 4 --frames 5 --png ${BP_DEMO_OUT}/uniform.png
  :: --png ${BP_DEMO_OUT}/uniform.png --scene uniform --n 2000 --scale 4 --frames 5)
bp_demo_test(demo.png.mixed_frame5
  --headless --scene mixed --n 1000 --frames 5 --png ${BP_DEMO_OUT}/mixed.png
  :: --png ${BP_DEMO_OUT}/mixed.png --scene mixed --n 1000 --frames 5)

# Every method runs 60 frames with the all-pairs check and draws its partition. A method this
# build lacks reports a skip; the test runs by itself once the method lands.
foreach(m auto brute sweep grid quadtree rdc)
  bp_demo_test(demo.frames.${m}
    --headless --frames 60 --method ${m} --check --partition --png ${BP_DEMO_OUT}/frames_${m}.png)
endforeach()

# The keys, as events through SDL's queue: partition, snap, double, each method in turn, halve,
# pause, direct method keys; checked against all pairs every frame.
bp_demo_test(demo.keys
  --headless --frames 24 --check --script d,s,+,tab,tab,tab,tab,tab,tab,-,-,space,1,2,3,4,5,6,space,s,d,+
  --png ${BP_DEMO_OUT}/keys.png)

# The persistent world (issue #13): circles added and removed in batches (+ +, then - - -), the
# world's modes (--mode, and `m` cycling them), bullets fired with `b` and coloured by their
# begin/end events (alive at frame 30, some touching a circle; all dead a second after), and
# the mouse drag (a circle grabbed at the stage's crowded centre and dragged to a corner), each
# with the all-pairs check every frame (pairs, events, red set).
bp_demo_test(demo.world.add_remove --headless --frames 8 --check --script +,+,-,-,-)
set_tests_properties(demo.world.add_remove PROPERTIES PASS_REGULAR_EXPRESSION "frame 8 method [a-z]+ n 250 ")
foreach(mode incremental rebuild)
  bp_demo_test(demo.world.mode.${mode} --headless --frames 40 --check --mode ${mode} --script b,m,none,b)
endforeach()
bp_demo_test(demo.world.bullets --headless --frames 30 --check --script b,none,b)
set_tests_properties(demo.world.bullets PROPERTIES PASS_REGULAR_EXPRESSION "bullets 512 touching [1-9][0-9]* ")
bp_demo_test(demo.world.bullets_die --headless --frames 63 --check --script b,none,b)
set_tests_properties(demo.world.bullets_die PROPERTIES PASS_REGULAR_EXPRESSION "bullets 0 touching 0 ")
bp_demo_test(demo.world.drag --headless --frames 12 --check --script grab:150:150,drag:120:130,drag:60:60,drag:10:10)
set_tests_properties(demo.world.drag PROPERTIES PASS_REGULAR_EXPRESSION "drag [0-9]+ at 10.00 10.00")

# The windowed path (window, renderer, event loop, reading the window's pixels back) with SDL's
# dummy video driver, so it runs without a display.
bp_demo_test(demo.window.dummy_driver
  --frames 20 --script d,s,tab --png ${BP_DEMO_OUT}/window.png
  :: --png ${BP_DEMO_OUT}/window.png --frames 20 --snap)
set_tests_properties(demo.window.dummy_driver PROPERTIES ENVIRONMENT "SDL_VIDEODRIVER=dummy")

# Usage errors fail (exit status 2): an unknown method, --headless without --frames, a bad count.
foreach(bad "--method;nope" "--headless" "--frames;x")
  string(REPLACE ";" "_" tag "${bad}")
  string(REPLACE "-" "" tag "${tag}")
  add_test(NAME demo.usage.${tag} COMMAND ${CMAKE_COMMAND} -DDEMO=${BP_DEMO_EXE} -P ${BP_DEMO_DRIVER} -- ${bad})
  set_tests_properties(demo.usage.${tag} PROPERTIES WILL_FAIL TRUE SKIP_REGULAR_EXPRESSION "not built: skipped")
endforeach()

# A count whose pairs do not fit in memory (the seed's small stage, 200,000 circles, under a
# 300 MB address-space limit) is halved in the window instead of ending the demo. Not under the
# sanitizers: they reserve terabytes of address space.
if(NOT BP_SANITIZE AND CMAKE_SYSTEM_NAME STREQUAL "Linux")
  add_test(NAME demo.nomem.halves COMMAND sh -c
    "if [ -z \"$1\" ]; then echo 'not built: skipped'; exit 0; fi; ulimit -v 300000 && SDL_VIDEODRIVER=dummy exec \"$1\" --n 200000 --frames 2"
    sh ${BP_DEMO_EXE})
  set_tests_properties(demo.nomem.halves PROPERTIES SKIP_REGULAR_EXPRESSION "not built: skipped" TIMEOUT 300
    PASS_REGULAR_EXPRESSION "frame 2 method [a-z]+ n [0-9]+ pairs" FAIL_REGULAR_EXPRESSION " n 200000 pairs")
endif()
