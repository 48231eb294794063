# Writes OUT: a C++ file holding gpus/gpus.yaml (IN) as a string literal.
file(READ ${IN} content)
set(body "// Generated from gpus/gpus.yaml by cmake/embed_gpus.cmake. Do not edit.\n#include \"analysis/gpu_table_data.h\"\n\nnamespace torchcost::analysis {\n\nstd::string_view BuiltinGpuTableText() {\n  static const char kText[] = R\"tcgpus(${content})tcgpus\";\n  return std::string_view(kText, sizeof(kText) - 1);\n}\n\n}  // namespace torchcost::analysis\n")
file(WRITE ${OUT}.tmp "${body}")
execute_process(COMMAND ${CMAKE_COMMAND} -E copy_if_different ${OUT}.tmp ${OUT})
file(REMOVE ${OUT}.tmp)
