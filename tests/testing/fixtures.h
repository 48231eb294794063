// The TorchScript fixtures a test reads: written by tools/make_fixtures.py
// into the build's fixtures/ when missing (ctest writes them all first; a test
// binary run alone, as tools/sanitize.sh runs them, writes what it needs).
#ifndef TORCHCOST_TESTS_TESTING_FIXTURES_H_
#define TORCHCOST_TESTS_TESTING_FIXTURES_H_

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

namespace torchcost::testing {

// Returns the path of fixture `file` ("tiny.pt").
inline std::string FixturePath(const std::string& file) {
  return std::string(TORCHCOST_BINARY_DIR "/fixtures/") + file;
}

// Makes sure the fixtures of `models` (comma-separated: "tiny,lenet5") exist;
// returns false if writing them failed.
inline bool EnsureFixtures(const std::string& models) {
  std::stringstream names(models);
  std::string name;
  bool missing = false;
  while (std::getline(names, name, ','))
    missing |= !std::filesystem::exists(FixturePath(name + ".pt"));
  if (!missing) return true;
  const std::string command =
      std::string("/usr/bin/python3 \"") + TORCHCOST_SOURCE_DIR +
      "/tools/make_fixtures.py\" \"" + TORCHCOST_BINARY_DIR +
      "/fixtures\" --models " + models;
  return std::system(command.c_str()) == 0;
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_FIXTURES_H_
