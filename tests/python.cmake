# The Python package's tests (python/tests, pytest): one CTest case per test function, run with
# the build tree's libbroadphase_python (BROADPHASE_LIBRARY) and the package from the source tree
# (PYTHONPATH); the docstring examples; and `pip install` of the package into a fresh virtual
# environment, both with the library just built and with the library built by setup.py itself.
# Included from tests/CMakeLists.txt. Needs Debian's python3-numpy, python3-cffi, python3-pytest
# (scripts/setup.sh --full).
if(NOT TARGET broadphase_python)
  return()
endif()

# Debian's interpreter first: that is where Debian's numpy, cffi and pytest are installed (another
# python3 earlier in PATH, such as pyenv's, usually lacks them). -DBP_PYTHON=... overrides.
find_program(BP_PYTHON python3 PATHS /usr/bin NO_DEFAULT_PATH)
find_program(BP_PYTHON python3)
if(NOT BP_PYTHON)
  message(WARNING "python3 not found: the Python package's tests are not registered")
  return()
endif()
execute_process(COMMAND ${BP_PYTHON} -c "import numpy, cffi, pytest"
  RESULT_VARIABLE bp_py_rc OUTPUT_QUIET ERROR_VARIABLE bp_py_err)
if(NOT bp_py_rc EQUAL 0)
  message(WARNING "${BP_PYTHON} lacks numpy, cffi or pytest (scripts/setup.sh --full installs them): "
    "test python.dependencies will fail\n${bp_py_err}")
  add_test(NAME python.dependencies COMMAND ${BP_PYTHON} -c "import numpy, cffi, pytest")
  return()
endif()

set(bp_py_src ${PROJECT_SOURCE_DIR}/python)
set(bp_py_env
  BROADPHASE_LIBRARY=$<TARGET_FILE:broadphase_python>
  PYTHONPATH=${bp_py_src}
  PYTHONDONTWRITEBYTECODE=1)
if(BP_SANITIZE MATCHES "address")
  # The library is instrumented, the interpreter is not: ASan's runtime must be loaded first.
  # Leak checking is off for these tests (the interpreter keeps memory at exit by design); the
  # library's own tests check for leaks.
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=libasan.so
    OUTPUT_VARIABLE bp_asan_rt OUTPUT_STRIP_TRAILING_WHITESPACE)
  list(APPEND bp_py_env LD_PRELOAD=${bp_asan_rt} ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 BP_SANITIZED=1)
endif()

# A case counts as skipped when pytest skipped all of it ("N skipped in" with nothing passed).
set(bp_py_skip "(^|\n)[0-9]+ skipped in ")
file(GLOB bp_py_files CONFIGURE_DEPENDS ${bp_py_src}/tests/test_*.py)
foreach(bp_file IN LISTS bp_py_files)
  get_filename_component(bp_stem ${bp_file} NAME_WE)
  string(REGEX REPLACE "^test_" "" bp_topic ${bp_stem})
  file(STRINGS ${bp_file} bp_defs REGEX "^def test_[A-Za-z0-9_]+")
  foreach(bp_def IN LISTS bp_defs)
    string(REGEX REPLACE "^def (test_[A-Za-z0-9_]+).*" "\\1" bp_fn "${bp_def}")
    string(REGEX REPLACE "^test_" "" bp_case ${bp_fn})
    add_test(NAME python.${bp_topic}.${bp_case}
      COMMAND ${BP_PYTHON} -m pytest -q -p no:cacheprovider ${bp_file}::${bp_fn}
      WORKING_DIRECTORY ${bp_py_src}/tests)
    set_tests_properties(python.${bp_topic}.${bp_case} PROPERTIES
      ENVIRONMENT "${bp_py_env}" SKIP_REGULAR_EXPRESSION "${bp_py_skip}" TIMEOUT 300 LABELS python)
  endforeach()
endforeach()

add_test(NAME python.doctest
  COMMAND ${BP_PYTHON} -m pytest -q -p no:cacheprovider --doctest-modules ${bp_py_src}/broadphase
  WORKING_DIRECTORY ${bp_py_src})
set_tests_properties(python.doctest PROPERTIES ENVIRONMENT "${bp_py_env}" TIMEOUT 300 LABELS python)

# pip install into a virtual environment (Debian's numpy and cffi seen through
# --system-site-packages, nothing fetched). Not in sanitized builds: the installed library is
# what a user gets, and the sanitized one cannot load into a plain interpreter.
if(NOT BP_SANITIZE)
  execute_process(COMMAND ${BP_PYTHON} -c "import venv, ensurepip" RESULT_VARIABLE bp_venv_rc OUTPUT_QUIET ERROR_QUIET)
  if(NOT bp_venv_rc EQUAL 0)
    message(WARNING "${BP_PYTHON} cannot make virtual environments (python3-venv): python.install.* will fail")
  endif()
  add_test(NAME python.install.prebuilt
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/python_install.sh ${BP_PYTHON} ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/python-install-prebuilt $<TARGET_FILE:broadphase_python>)
  add_test(NAME python.install.build
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/python_install.sh ${BP_PYTHON} ${PROJECT_SOURCE_DIR}
            ${CMAKE_CURRENT_BINARY_DIR}/python-install-build)
  set_tests_properties(python.install.prebuilt python.install.build PROPERTIES TIMEOUT 600 LABELS python)
endif()
