# api.typed_ids: tests/typed_ids.c compiles as it is and does not compile with any of its
# misuses (an integer passed for a proxy id, or an id for an integer), as C and, when a C++
# compiler was found, as C++. Run as: cmake -DBP_C=cc [-DBP_CXX=c++] -DBP_INCLUDE=dir
# -DBP_SOURCE=file -P typed_ids.cmake
foreach(bp_lang C CXX)
  set(bp_cc "${BP_${bp_lang}}")
  if(NOT bp_cc)
    continue()
  endif()
  if(bp_lang STREQUAL "C")
    set(bp_flags -x c -std=c17)
  else()
    set(bp_flags -x c++ -std=c++11)
  endif()
  foreach(bp_misuse 0 1 2 3 4 5)
    execute_process(
      COMMAND ${bp_cc} ${bp_flags} -fsyntax-only -Wall -Wextra -Wpedantic -Werror -I${BP_INCLUDE}
              -DBP_MISUSE=${bp_misuse} ${BP_SOURCE}
      RESULT_VARIABLE bp_rc OUTPUT_VARIABLE bp_out ERROR_VARIABLE bp_err)
    if(bp_misuse EQUAL 0 AND NOT bp_rc EQUAL 0)
      message(FATAL_ERROR "${bp_lang}: typed_ids.c does not compile as it is:\n${bp_err}")
    elseif(bp_misuse GREATER 0 AND bp_rc EQUAL 0)
      message(FATAL_ERROR "${bp_lang}: typed_ids.c compiles with misuse ${bp_misuse}: ids and integers mix")
    endif()
    message(STATUS "${bp_lang} misuse ${bp_misuse}: exit ${bp_rc}")
  endforeach()
endforeach()
