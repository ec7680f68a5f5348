# The browser demo (issue #19, docs/web.md): web/ built with emscripten and driven in headless
# Chromium by playwright-core; tests/web_test.sh skips when emcc, node, Chromium or playwright-core
# (from npm) is missing. bp_web_boxes gives the scene's boxes to the native `broadphase pairs`,
# the count the page must show.
if(NOT TARGET bp_bench OR NOT TARGET broadphase_cli)
  return()
endif()
if(BP_SANITIZE)
  # The page runs WebAssembly, which the sanitizers do not see; the Release run tests it.
  return()
endif()
add_executable(bp_web_boxes web_boxes.c ${PROJECT_SOURCE_DIR}/demo/demo_sim.c)
target_include_directories(bp_web_boxes PRIVATE ${PROJECT_SOURCE_DIR}/demo)
set_target_properties(bp_web_boxes PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
target_link_libraries(bp_web_boxes PRIVATE broadphase::broadphase bp_bench bp_warnings)
if(BP_LIBM)
  target_link_libraries(bp_web_boxes PRIVATE ${BP_LIBM})
endif()
add_test(NAME web.browser
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/web_test.sh ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}
          $<TARGET_FILE:broadphase_cli> $<TARGET_FILE:bp_web_boxes>)
set_tests_properties(web.browser PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 240 LABELS web)
