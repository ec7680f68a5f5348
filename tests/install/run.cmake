# The install test, one step per CTest case (cmake -P with -DBP_STEP=...):
#   prefix        `cmake --install` of the build tree into BP_WORK_DIR/prefix
#   find_package  configure, build and run the consumer with find_package(broadphase)
#   pkg_config    compile and run main.c with `pkg-config --cflags --libs broadphase`
# Prints "SKIPPED: pkg-config not found" (CTest skips on it) when pkg-config is absent.
cmake_minimum_required(VERSION 3.16)

set(prefix ${BP_WORK_DIR}/prefix)

function(bp_run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message(STATUS "${what}:\n${out}${err}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc})")
  endif()
endfunction()

# Sanitized builds: the consumers need the same runtime the library was built against.
set(san_flags "")
if(BP_SANITIZE)
  set(san_flags "-fsanitize=${BP_SANITIZE}")
endif()

if(BP_STEP STREQUAL "prefix")
  file(REMOVE_RECURSE ${prefix})
  bp_run("cmake --install" ${CMAKE_COMMAND} --install ${BP_BUILD_DIR} --prefix ${prefix})
  # Only the public headers are installed (broadphase_mpi.h with the MPI companion library);
  # private headers never.
  file(GLOB_RECURSE headers RELATIVE ${prefix} ${prefix}/*.h)
  set(expected "include/broadphase.h")
  if(EXISTS ${prefix}/include/broadphase_mpi.h)
    list(APPEND expected "include/broadphase_mpi.h")
  endif()
  list(SORT headers)
  if(NOT headers STREQUAL expected)
    message(FATAL_ERROR "installed headers: ${headers} (expected ${expected})")
  endif()
  # The licence goes with every install; each installed program has its manual page.
  file(GLOB_RECURSE licence RELATIVE ${prefix} ${prefix}/*/doc/broadphase/LICENSE)
  if(NOT licence)
    message(FATAL_ERROR "LICENSE not installed under ${prefix}/share/doc/broadphase")
  endif()
  foreach(program broadphase broadphase-demo)
    file(GLOB exe ${prefix}/bin/${program})
    file(GLOB_RECURSE page ${prefix}/*/${program}.1)
    if(exe AND NOT page)
      message(FATAL_ERROR "bin/${program} installed without its manual page (man1/${program}.1)")
    endif()
  endforeach()
elseif(BP_STEP STREQUAL "find_package")
  set(build ${BP_WORK_DIR}/consumer-cmake)
  file(REMOVE_RECURSE ${build})
  bp_run("configure the consumer" ${CMAKE_COMMAND} -S ${BP_SOURCE_DIR} -B ${build} -G ${BP_GENERATOR}
         -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=${BP_BUILD_TYPE}
         -DCMAKE_C_COMPILER=${BP_C_COMPILER} "-DCMAKE_EXE_LINKER_FLAGS=${san_flags}")
  bp_run("build the consumer" ${CMAKE_COMMAND} --build ${build})
  bp_run("run the consumer" ${build}/consumer)
elseif(BP_STEP STREQUAL "pkg_config")
  find_program(PKG_CONFIG_EXE NAMES pkg-config pkgconf)
  if(NOT PKG_CONFIG_EXE)
    message("SKIPPED: pkg-config not found")
    return()
  endif()
  # The .pc file lands in lib/pkgconfig or lib64/pkgconfig (GNUInstallDirs).
  file(GLOB_RECURSE pcs ${prefix}/*/broadphase.pc)
  if(NOT pcs)
    message(FATAL_ERROR "no broadphase.pc under ${prefix}")
  endif()
  list(GET pcs 0 pc)
  get_filename_component(pcdir ${pc} DIRECTORY)
  set(ENV{PKG_CONFIG_PATH} ${pcdir})
  execute_process(COMMAND ${PKG_CONFIG_EXE} --cflags --libs broadphase RESULT_VARIABLE rc
                  OUTPUT_VARIABLE flags OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pkg-config --cflags --libs broadphase failed (${rc})")
  endif()
  message(STATUS "pkg-config --cflags --libs broadphase: ${flags}")
  # The flags must point into the prefix the files were installed to.
  if(NOT flags MATCHES "-I${prefix}/")
    message(FATAL_ERROR "pkg-config points to '${flags}', not to the install prefix ${prefix}: "
                        "broadphase.pc is not relocatable (prefix=\${pcfiledir}/../.. fixes it)")
  endif()
  separate_arguments(flag_list UNIX_COMMAND "${flags}")
  set(exe ${BP_WORK_DIR}/consumer-pc)
  bp_run("compile the consumer with pkg-config" ${BP_C_COMPILER} -std=c17 ${san_flags} ${BP_SOURCE_DIR}/main.c
         -o ${exe} ${flag_list})
  # A shared library is found at run time through the loader path (pkg-config adds no rpath).
  get_filename_component(libdir ${pcdir} DIRECTORY)
  set(ENV{LD_LIBRARY_PATH} "${libdir}:$ENV{LD_LIBRARY_PATH}")
  bp_run("run the pkg-config consumer" ${exe})
else()
  message(FATAL_ERROR "unknown BP_STEP '${BP_STEP}'")
endif()
