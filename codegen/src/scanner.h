// The libclang scanner: parses the header, finds annotated declarations,
// validates them against the vocabulary and builds the Model.
#pragma once

#include <string>
#include <vector>

#include "diagnostics.h"
#include "model.h"
#include "vocabulary.h"

namespace weavegen {

struct ScanOptions {
  std::string header;                  // as given on the command line
  std::vector<std::string> clang_args;
};

// Returns false when errors were reported.
bool scan(const ScanOptions& opt, const Vocabulary& vocab, Reporter& rep, Model& model);

}  // namespace weavegen
