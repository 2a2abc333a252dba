// weavegen's front end: parses the header with libclang and runs the stages
// (source.h → attributes.h → declarations.h → model_builder.h, which calls
// validator.h) to fill the Model the emitter prints.
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
  bool allow_unknown_attributes = false;  // unknown unscoped attributes: warning instead of error
};

// Returns false when errors were reported.
bool scan(const ScanOptions& opt, const Vocabulary& vocab, Reporter& rep, Model& model);

}  // namespace weavegen
