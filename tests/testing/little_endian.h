// Appending little-endian integers to a byte string: the tests that write zip
// archives by hand.
#ifndef TORCHCOST_TESTS_TESTING_LITTLE_ENDIAN_H_
#define TORCHCOST_TESTS_TESTING_LITTLE_ENDIAN_H_

#include <cstdint>
#include <string>

namespace torchcost::testing {

// Appends `v`'s two bytes, low first.
inline void Put16(std::string& s, uint16_t v) {
  s += static_cast<char>(v & 0xFF);
  s += static_cast<char>(v >> 8);
}

// Appends `v`'s four bytes, low first.
inline void Put32(std::string& s, uint32_t v) {
  Put16(s, static_cast<uint16_t>(v & 0xFFFF));
  Put16(s, static_cast<uint16_t>(v >> 16));
}

}  // namespace torchcost::testing

#endif  // TORCHCOST_TESTS_TESTING_LITTLE_ENDIAN_H_
