# ctest Install.ExampleProject: installs this build into a temporary prefix inside the build
# tree, then configures, builds and tests tests/install_example against it, as another project
# would (find_package(lmoracle), lmoracle::oracle, EXPECT_MATCHES_REFERENCE).
# Variables: LMO_BUILD_DIR, EXAMPLE_DIR, WORK_DIR, GENERATOR, CXX_COMPILER, CXX_LAUNCHER.
function(run)
  execute_process(COMMAND ${ARGV} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGV}")
  endif()
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
run(${CMAKE_COMMAND} --install ${LMO_BUILD_DIR} --prefix ${WORK_DIR}/prefix)
set(launcher "")
if(CXX_LAUNCHER)
  set(launcher -DCMAKE_CXX_COMPILER_LAUNCHER=${CXX_LAUNCHER})
endif()
run(${CMAKE_COMMAND} -S ${EXAMPLE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${launcher}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
# The example must not reach back into this source tree for its cases.
set(ENV{LMO_CASES_DIR} "")
unset(ENV{LMO_CASES_DIR})
run(${CMAKE_CTEST_COMMAND} --test-dir ${WORK_DIR}/build --output-on-failure)
