# The Debian source package (debian/): built with dpkg-buildpackage in a copy of the tree,
# unpacked, and programs compiled against it (tests/debian_test.sh). Skipped (77) without
# dpkg-dev and debhelper. Registered in the plain build only: the sanitizers would not change
# the package (it builds from the sources with Debian's flags), so the sanitized builds skip it.
find_program(BP_BASH bash)
if(BP_BASH AND BP_BUILD_TOOLS AND NOT BP_SANITIZE AND NOT CMAKE_CROSSCOMPILING)
  add_test(NAME debian.package COMMAND ${BP_BASH} ${CMAKE_CURRENT_SOURCE_DIR}/debian_test.sh
           ${PROJECT_SOURCE_DIR} ${CMAKE_CURRENT_BINARY_DIR}/debian-test ${CMAKE_C_COMPILER})
  set_tests_properties(debian.package PROPERTIES LABELS debian TIMEOUT 900 SKIP_RETURN_CODE 77)
endif()
