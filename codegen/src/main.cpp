// weavegen: reads a C++ header with [[lock(...)]]-style annotations and writes
// a proxy header + source (see docs/weavegen.md).
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "diagnostics.h"
#include "emitter.h"
#include "scanner.h"
#include "vocabulary.h"

#ifndef WEAVE_DEFAULT_ANNOTATIONS_DIR
#define WEAVE_DEFAULT_ANNOTATIONS_DIR ""
#endif

namespace fs = std::filesystem;
using namespace weavegen;

namespace {

constexpr const char* k_usage =
    "usage: weavegen [--annotations <file.json|dir>]... --output-header <path.weave.h>\n"
    "                --output-source <path.weave.cpp> [--depfile <path.d>] [--include-as <spelling>]\n"
    "                [--source-root <dir>] [--allow-unknown-attributes] [--warnings-as-errors]\n"
    "                <header.h> [-- <clang args: -I.. -D.. -std=c++20 ...>]\n";

int usage_error(const std::string& msg) {
  std::cerr << "weavegen: error: " << msg << "\n" << k_usage;
  return 2;
}

std::string make_escape(const std::string& p) {
  std::string r;
  for (char c : p) {
    if (c == ' ' || c == '#' || c == '\\') r += '\\';
    if (c == '$') r += '$';
    r += c;
  }
  return r;
}

// The directories a quoted #include in the generated header searches after the
// header's own directory, in order: -iquote, then -I (both "-Idir" and "-I dir").
std::vector<fs::path> quote_search_dirs(const std::vector<std::string>& args) {
  std::vector<fs::path> iquote, dash_i;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::size_t flag = a.rfind("-iquote", 0) == 0 ? 7 : a.rfind("-I", 0) == 0 ? 2 : 0;
    if (flag == 0) continue;
    std::string dir = a.substr(flag);
    if (dir.empty() && i + 1 < args.size()) dir = args[++i];
    if (!dir.empty()) (flag == 7 ? iquote : dash_i).push_back(fs::absolute(dir).lexically_normal());
  }
  iquote.insert(iquote.end(), dash_i.begin(), dash_i.end());
  return iquote;
}

// `p` relative to `dir` if `p` lies inside `dir` (lexically), else "".
std::string relative_inside(const fs::path& p, const fs::path& dir) {
  fs::path rel = p.lexically_relative(dir);
  if (rel.empty() || rel == "." || *rel.begin() == "..") return "";
  return rel.generic_string();
}

// The same, also trying both paths with symlinks resolved.
std::string relative_inside_any(const fs::path& p, const fs::path& dir) {
  std::string r = relative_inside(p, dir);
  if (!r.empty()) return r;
  std::error_code e1, e2;
  fs::path cp = fs::weakly_canonical(p, e1), cd = fs::weakly_canonical(dir, e2);
  return e1 || e2 ? "" : relative_inside(cp, cd);
}

// How the generated header (in `own_dir`) includes `header`: the shortest
// spelling relative to a search directory that the compiler's quoted-include
// lookup (own directory first, then `dirs` in order) resolves to `header`
// itself; else the path relative to `own_dir`. Never absolute unless the two
// share no root.
std::string choose_include(const fs::path& header, const fs::path& own_dir, const std::vector<fs::path>& dirs) {
  std::vector<std::string> candidates;
  for (const auto& d : dirs) {
    std::string rel = relative_inside_any(header, d);
    if (!rel.empty() && std::find(candidates.begin(), candidates.end(), rel) == candidates.end())
      candidates.push_back(rel);
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [](const std::string& a, const std::string& b) { return a.size() < b.size(); });
  for (const auto& c : candidates) {
    std::error_code ec;
    fs::path found;
    if (fs::is_regular_file(own_dir / c, ec)) found = own_dir / c;
    for (std::size_t i = 0; found.empty() && i < dirs.size(); ++i)
      if (fs::is_regular_file(dirs[i] / c, ec)) found = dirs[i] / c;
    if (!found.empty() && fs::equivalent(found, header, ec)) return c;
  }
  // `..` steps are resolved by the kernel after symlinks, so relate real paths.
  std::error_code e1, e2;
  fs::path ch = fs::weakly_canonical(header, e1), cd = fs::weakly_canonical(own_dir, e2);
  fs::path rel = (e1 || e2) ? header.lexically_relative(own_dir) : ch.lexically_relative(cd);
  return rel.empty() ? header.generic_string() : rel.generic_string();
}

// Writes all files or none: temp files first, then renames.
bool write_all(const std::vector<std::pair<std::string, std::string>>& files, Reporter& rep) {
  std::vector<std::string> temps;
  auto cleanup = [&] {
    for (const auto& t : temps) std::remove(t.c_str());
  };
  for (const auto& [path, content] : files) {
    std::error_code ec;
    fs::path parent = fs::path(path).parent_path();
    if (!parent.empty()) fs::create_directories(parent, ec);
    std::string tmp = path + ".tmp" + std::to_string(::getpid());
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (out) out << content;
    out.close();
    temps.push_back(tmp);
    if (!out) {
      rep.error("cannot write '" + path + "'");
      cleanup();
      return false;
    }
  }
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (std::rename(temps[i].c_str(), files[i].first.c_str()) != 0) {
      rep.error("cannot rename '" + temps[i] + "' to '" + files[i].first + "': " + std::strerror(errno));
      // Undo what was already moved into place so no partial output stays behind.
      for (std::size_t j = 0; j < i; ++j) std::remove(files[j].first.c_str());
      for (std::size_t j = i; j < temps.size(); ++j) std::remove(temps[j].c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> annotations;
  std::string out_header, out_source, depfile, include_as, source_root, header;
  std::vector<std::string> clang_args;
  bool allow_unknown_attributes = false, warnings_as_errors = false;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string& dst) -> bool {
      if (i + 1 >= argc) return false;
      dst = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--") {
      // Empty arguments (e.g. from empty CMake generator expressions) are dropped.
      for (++i; i < argc; ++i)
        if (argv[i][0] != '\0') clang_args.push_back(argv[i]);
      break;
    } else if (a == "-h" || a == "--help") {
      std::cout << k_usage;
      return 0;
    } else if (a == "--annotations") {
      if (!value(v)) return usage_error("--annotations needs a value");
      annotations.push_back(v);
    } else if (a == "--output-header") {
      if (!value(out_header)) return usage_error("--output-header needs a value");
    } else if (a == "--output-source") {
      if (!value(out_source)) return usage_error("--output-source needs a value");
    } else if (a == "--depfile") {
      if (!value(depfile)) return usage_error("--depfile needs a value");
    } else if (a == "--allow-unknown-attributes") {
      allow_unknown_attributes = true;
    } else if (a == "--warnings-as-errors") {
      warnings_as_errors = true;
    } else if (a == "--include-as") {
      if (!value(include_as)) return usage_error("--include-as needs a value");
    } else if (a == "--source-root") {
      if (!value(source_root) || source_root.empty()) return usage_error("--source-root needs a value");
    } else if (a.size() > 1 && a[0] == '-') {
      return usage_error("unknown option '" + a + "'");
    } else if (header.empty()) {
      header = a;
    } else {
      return usage_error("more than one input header ('" + header + "' and '" + a + "')");
    }
  }
  if (header.empty()) return usage_error("no input header");
  if (out_header.empty()) return usage_error("missing --output-header");
  if (out_source.empty()) return usage_error("missing --output-source");
  std::error_code ec;
  if (!fs::is_regular_file(header, ec)) return usage_error("cannot read input header '" + header + "'");
  if (annotations.empty()) annotations.push_back(WEAVE_DEFAULT_ANNOTATIONS_DIR);
  for (const auto& a : annotations)
    if (a.empty() || !fs::exists(a, ec)) return usage_error("annotation vocabulary '" + a + "' does not exist");

  Reporter rep(std::cerr);
  Vocabulary vocab;
  for (const auto& a : annotations) vocab.load(a, rep);
  if (rep.errors()) return 1;

  Model model;
  ScanOptions so{header, clang_args, allow_unknown_attributes};
  if (!scan(so, vocab, rep, model) || rep.errors()) return 1;
  if (warnings_as_errors && rep.warnings()) {
    rep.error(std::to_string(rep.warnings()) + (rep.warnings() == 1 ? " warning" : " warnings") +
              " treated as errors (--warnings-as-errors)");
    return 1;
  }

  EmitOptions eo;
  // No absolute path of this machine goes into the output (relocatable builds).
  const fs::path header_abs = fs::absolute(header).lexically_normal();
  const fs::path out_dir = fs::absolute(out_header).lexically_normal().parent_path();
  eo.include_as = !include_as.empty() ? include_as : choose_include(header_abs, out_dir, quote_search_dirs(clang_args));
  if (!source_root.empty())
    eo.display_path = relative_inside_any(header_abs, fs::absolute(source_root).lexically_normal());
  if (eo.display_path.empty()) {
    eo.display_path = eo.include_as;
    if (eo.display_path.size() > 1 && eo.display_path.front() == '<')  // <dir/x.h> names dir/x.h
      eo.display_path = eo.display_path.substr(1, eo.display_path.size() - 2);
  }
  eo.header_path = out_header;
  eo.source_path = fs::path(out_source).filename().string();
  {
    fs::path src_dir = fs::absolute(out_source).parent_path();
    fs::path rel = fs::absolute(out_header).lexically_normal().lexically_relative(src_dir.lexically_normal());
    eo.header_from_source = rel.empty() ? fs::absolute(out_header).string() : rel.string();
  }
  std::vector<std::pair<std::string, std::string>> files = {
      {out_header, emit_header(model, eo)},
      {out_source, emit_source(model, eo)},
  };
  if (!depfile.empty()) {
    std::string d = make_escape(out_header) + ":";
    std::vector<std::string> deps = model.dependencies;
    for (const auto& f : vocab.files()) deps.push_back(f);
    for (const auto& f : deps) d += " \\\n  " + make_escape(f);
    d += "\n";
    files.push_back({depfile, d});
  }
  if (!write_all(files, rep)) return 1;
  return 0;
}
