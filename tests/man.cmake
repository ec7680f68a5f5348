# The manual pages (man/): each renders without a groff warning, and every command and option
# its program's --help prints appears in it, so the two cannot drift. Included from
# man/CMakeLists.txt, where the programs' targets are known. Without bash, nothing is registered.
find_program(BP_BASH bash)
if(BP_BASH)
  if(TARGET broadphase_cli)
    add_test(NAME man.broadphase COMMAND ${BP_BASH} ${PROJECT_SOURCE_DIR}/tests/man_test.sh
             ${CMAKE_CURRENT_BINARY_DIR}/broadphase.1 $<TARGET_FILE:broadphase_cli> commands)
  endif()
  if(TARGET broadphase-demo)
    add_test(NAME man.broadphase-demo COMMAND ${BP_BASH} ${PROJECT_SOURCE_DIR}/tests/man_test.sh
             ${CMAKE_CURRENT_BINARY_DIR}/broadphase-demo.1 $<TARGET_FILE:broadphase-demo>)
    # The demo prints its usage without a display.
    set_tests_properties(man.broadphase-demo PROPERTIES ENVIRONMENT "SDL_VIDEODRIVER=dummy")
  endif()
  get_property(bp_man_tests DIRECTORY PROPERTY TESTS)
  if(bp_man_tests)
    set_tests_properties(${bp_man_tests} PROPERTIES LABELS man)
  endif()
endif()
bp_finish_tests()  # tests/CMakeLists.txt
