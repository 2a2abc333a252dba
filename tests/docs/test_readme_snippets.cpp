// Every C++ snippet of README.md and of docs/*.md compiles warning-free under
// the build's compiler and clang++ (-Wall -Wextra -Werror). A snippet is a
// block fenced ```cpp; a block fenced ```cpp fragment (a few declarations out
// of their class, the shape of generated code) is shown, not compiled, and
// any other word after ```cpp is an error. A snippet with annotations is a
// header: weavegen generates its proxy, and the generated source is what is
// compiled. Any other snippet is code: its #include lines go on top, the rest
// into a function body. Snippets see readme_prelude.h (Receipt, Item...) and
// the headers of the snippets before them (README.md first, then the pages of
// docs/ by name; a header is named by a first line "// name.h", unique
// across all pages, else after its page and line).
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Snippet {
  std::string where;  // "docs/lock.md:12": the page and the line of the opening fence
  std::string stem;   // "lock_12": names the files made from a snippet without a header name
  std::string text;   // dedented
  std::string header; // "order_service.h" from a first line "// order_service.h", or ""
  bool annotated = false;
};

// The ```cpp snippets of one page, in order. `bad_fences` gets every fence
// that starts with ```cpp but is neither ```cpp nor ```cpp fragment.
std::vector<Snippet> cpp_snippets(const fs::path& path, const std::string& name,
                                  std::vector<std::string>& bad_fences) {
  std::ifstream in(path);
  std::vector<Snippet> out;
  std::string line;
  int n = 0;
  Snippet* open = nullptr;
  bool in_other_block = false;  // a fence of another language, or a fragment
  std::size_t indent = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::size_t first = line.find_first_not_of(' ');
    const std::string body = first == std::string::npos ? "" : line.substr(first);
    const bool fence = body.rfind("```", 0) == 0;
    if (!open && !in_other_block && fence) {
      if (body == "```cpp") {
        out.push_back({name + ":" + std::to_string(n), path.stem().string() + "_" + std::to_string(n), "", "", false});
        open = &out.back();
        indent = first;
      } else {
        if (body.rfind("```cpp", 0) == 0 && body != "```cpp fragment") bad_fences.push_back(name + ":" + std::to_string(n) + ": " + body);
        in_other_block = true;
      }
      continue;
    }
    if (in_other_block) {
      if (fence) in_other_block = false;
      continue;
    }
    if (open && fence) {
      open = nullptr;
      continue;
    }
    if (!open) continue;
    const std::string text = line.size() >= indent ? line.substr(indent) : "";
    if (open->text.empty() && text.rfind("// ", 0) == 0 && text.size() > 5 && text.substr(text.size() - 2) == ".h")
      open->header = text.substr(3);
    if (text.find("[[") != std::string::npos) open->annotated = true;
    open->text += text + "\n";
  }
  return out;
}

int run(const std::string& cmd, std::string& output, const fs::path& log) {
  const int st = std::system((cmd + " > '" + log.string() + "' 2>&1").c_str());
  std::ifstream in(log);
  std::ostringstream ss;
  ss << in.rdbuf();
  output = ss.str();
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

// A compiler, and the option that reads readme_prelude.h precompiled:
// every unit starts with it, and parsing it (JSON, Weave's headers) was most
// of each compile.
struct Compiler {
  std::string path;
  std::string use_prelude;
};

std::vector<Compiler> compilers(const fs::path& dir, const std::string& flags) {
  std::vector<std::string> paths = {WEAVE_TEST_CXX};
  if (std::string(WEAVE_TEST_CLANGXX) != "") paths.push_back(WEAVE_TEST_CLANGXX);
  std::vector<Compiler> out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    // One folder per compiler: g++ takes <header>.gch beside the header it includes.
    const fs::path pch_dir = dir / ("pch" + std::to_string(i));
    fs::create_directories(pch_dir);
    const fs::path header = pch_dir / "readme_pch.h";
    std::ofstream(header) << "#include \"readme_prelude.h\"\n";
    std::string version;
    run("'" + paths[i] + "' --version", version, dir / "version.txt");
    const bool clang = version.find("clang") != std::string::npos;
    const fs::path pch = pch_dir / (clang ? "readme_pch.h.pch" : "readme_pch.h.gch");
    std::string output;
    const int rc = run("'" + paths[i] + "'" + flags + " -x c++-header '" + header.string() + "' -o '" + pch.string() + "'",
                       output, dir / "pch.txt");
    INFO(paths[i] << " precompiling readme_prelude.h:\n" << output);
    REQUIRE(rc == 0);
    out.push_back({paths[i], clang ? " -include-pch '" + pch.string() + "'"
                                   : " -Winvalid-pch -include '" + header.string() + "'"});
  }
  return out;
}

// README.md, then every page of docs/ by name.
std::vector<std::pair<fs::path, std::string>> pages() {
  std::vector<std::pair<fs::path, std::string>> out = {{WEAVE_README, "README.md"}};
  std::vector<fs::path> docs;
  for (const auto& e : fs::directory_iterator(WEAVE_DOCS_DIR))
    if (e.path().extension() == ".md") docs.push_back(e.path());
  std::sort(docs.begin(), docs.end());
  for (const auto& d : docs) out.emplace_back(d, "docs/" + d.filename().string());
  return out;
}

}  // namespace

TEST_CASE("README and docs: every C++ snippet compiles under g++ and clang++ with -Wall -Wextra -Werror", "[docs]") {
  const fs::path dir = fs::temp_directory_path() / ("weave_readme_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "gen");
  const std::string includes = " -I'" + dir.string() + "' -I'" + (dir / "gen").string() + "' -I'" +
                               WEAVE_INCLUDE_DIR + "' -I'" + WEAVE_DOCS_TEST_DIR + "'";
  const std::string flags = " -std=c++20 -Wall -Wextra -Werror" + includes;
  std::vector<Snippet> snippets;
  std::vector<std::string> bad_fences;
  std::size_t readme_snippets = 0;
  for (const auto& [path, name] : pages()) {
    auto page = cpp_snippets(path, name, bad_fences);
    if (name == "README.md") readme_snippets = page.size();
    snippets.insert(snippets.end(), page.begin(), page.end());
  }
  // ```cpp fragment is the one way to show C++ that is not compiled.
  for (const auto& f : bad_fences) FAIL_CHECK("unknown fence (```cpp or ```cpp fragment): " << f);
  REQUIRE(readme_snippets >= 2);
  REQUIRE(snippets.size() >= 20);
  // Header names are file names in one folder: a second one would replace the first.
  std::map<std::string, std::string> header_at;
  for (const auto& s : snippets)
    if (s.annotated && !s.header.empty()) {
      const auto [it, fresh] = header_at.emplace(s.header, s.where);
      INFO(s.header << " at " << s.where << " and at " << it->second);
      CHECK(fresh);
    }
  const auto compilers_used = compilers(dir, flags);
  int headers = 0;
  for (std::size_t i = 0; i < snippets.size(); ++i) {
    const Snippet& s = snippets[i];
    // An asynchronous method's snippet needs Boost.Asio, which only a build
    // with the async component on Boost has.
    if (!WEAVE_DOCS_ASYNC && s.text.find("boost/asio") != std::string::npos) continue;
    INFO(s.where << "\n" << s.text);
    std::string output;
    fs::path unit;
    if (s.annotated) {
      const std::string name = s.header.empty() ? s.stem + ".h" : s.header;
      const fs::path h = dir / name;
      std::ofstream(h) << "#pragma once\n#include \"readme_prelude.h\"\n" << s.text;
      const std::string stem = h.stem().string();
      unit = dir / "gen" / (stem + ".weave.cpp");
      const int rc = run(std::string("'") + WEAVEGEN_EXE + "' --annotations '" + WEAVE_ANNOTATIONS +
                             "' --output-header '" + (dir / "gen" / (stem + ".weave.h")).string() +
                             "' --output-source '" + unit.string() + "' '" + h.string() + "' --" + includes,
                         output, dir / "weavegen.txt");
      INFO("weavegen:\n" << output);
      REQUIRE(rc == 0);
      ++headers;
    } else {
      std::string top, body;
      std::istringstream lines(s.text);
      for (std::string l; std::getline(lines, l);) (l.rfind("#include", 0) == 0 ? top : body) += l + "\n";
      unit = dir / (s.stem + ".cpp");
      std::ofstream(unit) << "#include \"readme_prelude.h\"\n" << top << "void readme_snippet() {\n" << body << "}\n";
    }
    for (const auto& cxx : compilers_used) {
      const int rc = run("'" + cxx.path + "'" + flags + " -fsyntax-only" + cxx.use_prelude + " '" + unit.string() + "'",
                         output, dir / "compile.txt");
      INFO(cxx.path << ":\n" << output);
      CHECK(rc == 0);
    }
  }
  CHECK(headers >= 8);
  fs::remove_all(dir);
}
