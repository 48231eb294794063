// Fuzzes a Hugging Face config.json (builder::BuildHfConfigText): the input up
// to its first NUL is the file, the rest the overrides ("KEY=VAL,...").
// Every input is a model or a one-line error, in bounded time and memory.
//
// NB: inputs with a layer count over 1000 (the keys num_hidden_layers,
// n_layer, and T5's num_layers and num_decoder_layers, in the file or an
// override) are skipped, as family_config_fuzz.cc skips them: the builder's
// limit of 100,000 layers builds for tens of seconds under the sanitizers;
// tests/builder covers the limit itself.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include "torchcost/hf_config.h"

namespace {

// Returns true if a layer-count key of `input` is followed (after quotes,
// spaces, ':' or '=') by a number over 1000.
bool TooDeep(const std::string& input) {
  for (const char* key :
       {"num_hidden_layers", "n_layer", "num_layers", "num_decoder_layers"}) {
    const size_t len = std::char_traits<char>::length(key);
    for (size_t at = input.find(key); at != std::string::npos;
         at = input.find(key, at + 1)) {
      size_t i = at + len;
      while (i < input.size() && (input[i] == '"' || input[i] == ' ' ||
                                  input[i] == ':' || input[i] == '='))
        ++i;
      while (i < input.size() && input[i] == '0') ++i;
      long n = 0;
      while (i < input.size() && input[i] >= '0' && input[i] <= '9')
        n = std::min(10000L, n * 10 + (input[i++] - '0'));
      if (n > 1000) return true;
    }
  }
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (TooDeep(input)) return 0;
  const size_t nul = input.find('\0');
  const std::string json = input.substr(0, nul);
  const std::string overrides =
      nul == std::string::npos ? "" : input.substr(nul + 1);
  (void)torchcost::builder::BuildHfConfigText(json, "fuzz.json", overrides);
  return 0;
}
