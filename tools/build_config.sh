# Sourced by the scripts that configure a build (tools/quickstart.sh,
# tools/test.sh, tools/sanitizer_build.sh), so that they configure it alike.
#
# Prints the generator arguments for the build directory DIR: Ninja for a new
# build where it is installed, which schedules the whole build at once (a
# library's dependents compile while it links) where Makefiles wait target by
# target; nothing for an existing build, which keeps its generator.
#   generator_args DIR
generator_args() {
  if [ ! -f "$1/CMakeCache.txt" ] && command -v ninja >/dev/null; then
    echo "-G Ninja"
  fi
}

# The options every build takes: the libraries and unit tests compile in unity
# batches (TORCHCOST_UNITY_BUILD in CMakeLists.txt; with Ninja, CI's Release
# build took 241 s against 458 s on the 2-core machine).
BUILD_OPTIONS=(-DTORCHCOST_UNITY_BUILD=ON)
