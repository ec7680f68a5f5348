# The peers of issue #6 (bench/peers): one test per peer compiled in, each comparing the peer's
# exact pairs with brute force and sort-and-sweep on uniform 2D (N = 1,000 and 10,000).
get_property(BP_PEER_NAMES_FOR_TESTS GLOBAL PROPERTY BP_PEER_NAMES)
if(TARGET bp_peers AND TARGET bp_bench AND BP_PEER_NAMES_FOR_TESTS)
  add_executable(test_peers ${CMAKE_CURRENT_SOURCE_DIR}/test_peers.c)
  set_target_properties(test_peers PROPERTIES C_STANDARD 17 C_STANDARD_REQUIRED ON C_EXTENSIONS OFF)
  target_link_libraries(test_peers PRIVATE bp_peers bp_bench broadphase::broadphase bp_warnings)
  foreach(peer IN LISTS BP_PEER_NAMES_FOR_TESTS)
    add_test(NAME peer_${peer} COMMAND test_peers ${peer})
  endforeach()
endif()
