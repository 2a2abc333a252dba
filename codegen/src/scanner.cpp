#include "scanner.h"

#include <clang-c/Index.h>

#include <filesystem>
#include <set>

#include "attributes.h"
#include "clang_util.h"
#include "declarations.h"
#include "model_builder.h"
#include "source.h"

namespace fs = std::filesystem;

namespace weavegen {

namespace {

// Owns the libclang index and translation unit.
struct Parsed {
  CXIndex index = nullptr;
  CXTranslationUnit tu = nullptr;
  ~Parsed() {
    if (tu) clang_disposeTranslationUnit(tu);
    if (index) clang_disposeIndex(index);
  }
};

// Parses the header; forwards the compiler's errors. False when it failed.
bool parse(const ScanOptions& opt, Reporter& rep, Parsed& p) {
  p.index = clang_createIndex(/*excludeDeclarationsFromPCH=*/0, /*displayDiagnostics=*/0);
  std::vector<std::string> args = {"-xc++", "-std=c++20"};
  for (const auto& a : opt.clang_args) args.push_back(a);
  // weavegen reports unknown attributes itself.
  args.push_back("-Wno-unknown-attributes");
  args.push_back("-Wno-ignored-attributes");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  // The detailed record lists macro uses (export macros, macro-made declarations).
  // Function bodies are skipped (a quarter of the parse): weavegen reads
  // declarations, and clang still parses the bodies it needs for types
  // (constexpr functions, deduced return types); an error inside a body is
  // the compiler's to report.
  CXErrorCode ec = clang_parseTranslationUnit2(p.index, opt.header.c_str(), argv.data(), static_cast<int>(argv.size()),
                                               nullptr, 0, CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies, &p.tu);
  if (ec != CXError_Success || !p.tu) {
    rep.error("cannot parse '" + opt.header + "' (libclang error " + std::to_string(ec) +
              "; check the clang arguments after --)");
    return false;
  }
  bool failed = false;
  CXFile main = clang_getFile(p.tu, opt.header.c_str());
  for (unsigned i = 0, n = clang_getNumDiagnostics(p.tu); i < n; ++i) {
    CXDiagnostic d = clang_getDiagnostic(p.tu, i);
    if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error) {
      failed = true;
      CXFile f;
      unsigned line, col;
      clang_getExpansionLocation(clang_getDiagnosticLocation(d), &f, &line, &col, nullptr);
      std::string msg = str(clang_getDiagnosticSpelling(d));
      if (f) {
        std::string path = str(clang_getFileName(f));
        if (main && clang_File_isEqual(f, main)) path = opt.header;
        rep.error(path, {static_cast<int>(line), static_cast<int>(col)}, msg);
      } else {
        rep.error(msg);
      }
    }
    clang_disposeDiagnostic(d);
  }
  return !failed;
}

// Every file the translation unit read, plus the header itself.
std::vector<std::string> dependencies(CXTranslationUnit tu, const std::string& header) {
  std::set<std::string> deps;
  clang_getInclusions(
      tu,
      [](CXFile f, CXSourceLocation*, unsigned, CXClientData d) {
        std::string name = str(clang_getFileName(f));
        if (!name.empty()) static_cast<std::set<std::string>*>(d)->insert(fs::weakly_canonical(name).string());
      },
      &deps);
  deps.insert(fs::absolute(header).lexically_normal().string());
  return {deps.begin(), deps.end()};
}

// An annotation written inside a #define would silently never apply where the
// macro is used (weavegen reads the file, not the expansion): an error.
void check_macro_definitions(const Source& src, const Vocabulary& vocab, const AttributeOptions& ao, Reporter& rep) {
  for (const auto& line : src.definitions) {
    for (const auto& a : scan_attributes(line, vocab, rep, src.path, ao)) {
      if (a.name.empty()) continue;
      const std::string macro = line.size() > 2 ? line[2].text : "?";
      rep.error(src.path, a.loc,
                "annotation '" + a.spelled + "' inside the definition of macro '" + macro +
                    "' is not seen where the macro is used; write it in front of each declaration instead",
                static_cast<int>(a.spelled.size()));
    }
  }
}

}  // namespace

bool scan(const ScanOptions& opt, const Vocabulary& vocab, Reporter& rep, Model& model) {
  model.header = opt.header;
  Parsed p;
  if (!parse(opt, rep, p)) return false;
  CXFile file = clang_getFile(p.tu, opt.header.c_str());
  if (!file) {
    rep.error("cannot find '" + opt.header + "' in its own translation unit");
    return false;
  }
  const Source src = read_source(p.tu, file, opt.header);
  rep.add_source(opt.header, src.text);
  model.dependencies = dependencies(p.tu, opt.header);

  const AttributeOptions ao{opt.allow_unknown_attributes};
  check_macro_definitions(src, vocab, ao, rep);
  const std::vector<RawAnnotation> annotations = scan_attributes(src.tokens, vocab, rep, opt.header, ao);
  const std::vector<DeclEntry> decls = index_declarations(p.tu, file);
  ModelBuilder builder(p.tu, src, decls, vocab, rep, model);
  for (const auto& [index, anns] : attach_annotations(annotations, decls, src, rep)) builder.add(decls[index], anns);
  builder.finish();
  return rep.errors() == 0;
}

}  // namespace weavegen
