// The fast path of the JSON graph frontend (src/import/graph_json.cc): finds
// the "nodes" array in a file's text and reads its nodes, in the forms most
// files use, straight from the text without building a JSON tree. Whatever
// leaves that strict subset of JSON is refused, and the caller hands it to the
// JSON parser.
#ifndef TORCHCOST_SRC_IMPORT_GRAPH_JSON_SCAN_H_
#define TORCHCOST_SRC_IMPORT_GRAPH_JSON_SCAN_H_

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "torchcost/graph.h"

namespace torchcost::import {

// Value kinds as the schema spells output types: sets *kind, and *elem to the
// element kind of a list ("int[]"), else kOther; false for an unknown name.
bool ParseKind(const std::string& type, ir::ValueKind* kind,
               ir::ValueKind* elem);

// Finds the array that the top-level key "nodes" holds: its text is
// text[*begin, *end), with about *count elements (commas at its top level,
// plus one). Returns false unless the text is an object with one
// "nodes" key, written without escapes, whose value is an array; the
// brackets are matched outside strings only, so the text need not be valid
// JSON (the parser checks the pieces).
// NB: the caller sets *end to std::string_view::npos and *count to 1 first;
// the commas are added to *count.
bool FindNodesArray(std::string_view text, size_t* begin, size_t* end,
                    size_t* count);

// One argument of a node in the forms most files use: a reference object
// ({"ref"|"param"|"buffer"|"input": name or int}) or a null, bool, int or
// string literal.
struct SimpleArg {
  enum class Kind {
    kRef,
    kParam,
    kBuffer,
    kInput,
    kNull,
    kBool,
    kInt,
    kString
  };
  std::string_view name;  // The argument's name (the key in "args").
  Kind kind = Kind::kNull;
  std::string_view text;  // kString, or a reference's target name.
  int64_t i = 0;          // kInt, or a reference's target int.
  bool b = false;         // kBool.
  // A reference whose target is an int ({"input": 0}).
  bool target_is_int = false;

  // Returns the argument as the JSON parser builds it.
  nlohmann::ordered_json ToJson() const;
};

// A node in the form most files use: "op", "overload" and "module" strings
// (or null), "args" an object of SimpleArgs, "outputs" a list of names or of
// {"name", "type", "shape", "dtype"}, no other key. Views into the file's text.
struct SimpleNode {
  std::string_view op, overload, module;
  bool has_op = false, has_overload = false, has_module = false,
       has_args = false, has_outputs = false;
  std::vector<SimpleArg> args;
  std::vector<ir::Value> outputs;  // As ReadOutput reads them.
};

// Scans a strict subset of JSON: what SimpleNode holds, plus the separators
// of the "nodes" array. Every Parse* returns false where the text leaves that
// subset (an escape, a non-ASCII byte, a float, a number of more than 18
// digits, a repeated key, ...), whether or not it is valid JSON; the caller
// then hands the element to the JSON parser.
// NB: the subset is valid JSON throughout, so what it accepts the JSON parser
// accepts and reads the same way.
class SimpleScanner {
 public:
  explicit SimpleScanner(std::string_view text) : text_(text) {}

  // Returns the offset in the text of the next byte to read.
  size_t pos() const { return pos_; }
  // Moves to offset `pos` (back to an element's start, to skip it instead).
  void set_pos(size_t pos) { pos_ = pos; }
  // Returns true if only white space is left (and moves past it).
  bool AtEnd();
  // Consumes `c` (after white space) if it is next.
  bool Eat(char c);

  // Parses one node object into `*n` (its vectors cleared first).
  // NB: true only says the object is in the subset; the caller checks that
  // "op", "args" and "outputs" were there (has_op, ...).
  bool ParseNode(SimpleNode* n);

  // Moves past one JSON value of any form (strings and brackets matched, the
  // rest left to the JSON parser to check); false at the end of the text.
  bool SkipValue();

 private:
  // Moves past spaces, newlines, carriage returns and tabs.
  void SkipSpace();

  // A string without escapes, control characters or non-ASCII bytes.
  bool ParseString(std::string_view* out);

  // Consumes the bare word `word` (null, true, false) if it is next and not
  // followed by a letter or digit.
  bool ParseLiteral(std::string_view word);

  // An integer of at most 18 digits (no fraction, no exponent).
  bool ParseInt(int64_t* out);

  // Returns true if `c` is next after white space (without consuming it).
  bool StartsWith(char c);

  // Parses one argument's value (a reference object or a literal) into `*a`.
  bool ParseArg(SimpleArg* a);

  // Parses "args": an object of SimpleArgs whose names are all different.
  bool ParseArgs(std::vector<SimpleArg>* args);

  // Outputs: names, or {"name", "type", "shape", "dtype"} objects whose type
  // and dtype are known names and whose shape is null or non-negative ints.
  bool ParseOutputs(std::vector<ir::Value>* outputs);

  // Parses one output object ({"name", "type", "shape", "dtype"}, "name"
  // required) into `*v`.
  bool ParseOutputObject(ir::Value* v);

  std::string_view text_;  // The text scanned (not owned).
  size_t pos_ = 0;         // The offset of the next byte to read.
};

}  // namespace torchcost::import

#endif  // TORCHCOST_SRC_IMPORT_GRAPH_JSON_SCAN_H_
