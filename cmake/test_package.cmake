# The package test (ctest package.embed): installs this build into a scratch
# prefix, builds examples/embed against it with find_package(torchcost), runs
# it and checks its first candidate's parameter count.
#   cmake -DSOURCE_DIR=... -DBINARY_DIR=... -P cmake/test_package.cmake
set(work ${BINARY_DIR}/package-test)
file(REMOVE_RECURSE ${work})
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
run(${CMAKE_COMMAND} --install ${BINARY_DIR} --prefix ${work}/prefix)
run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/examples/embed -B ${work}/build -DCMAKE_PREFIX_PATH=${work}/prefix
    -DCMAKE_BUILD_TYPE=Release)
run(${CMAKE_COMMAND} --build ${work}/build)
run(${work}/build/embed 8 128)
message("${out}")
# GPT-2 with 2 layers, hidden 128, vocab 1024 (a multiple of 128: no padding),
# 512 positions, tied head: wte 1024*128 + wpe 512*128 + ln_f 2*128
# + per layer (ln_1, ln_2: 4*128; c_attn 128*384+384; attn c_proj 128*128+128;
# c_fc 128*512+512; mlp c_proj 512*128+128) = 131072 + 65536 + 256 + 2*198272.
math(EXPR expected "131072 + 65536 + 256 + 2 * (4*128 + 128*384+384 + 128*128+128 + 128*512+512 + 512*128+128)")
if(NOT out MATCHES "\n2 +128 +${expected} ")
  message(FATAL_ERROR "examples/embed: expected ${expected} parameters for layers=2 hidden=128")
endif()
