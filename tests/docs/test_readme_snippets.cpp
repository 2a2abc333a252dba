// Every C++ snippet of README.md compiles warning-free under the build's
// compiler and clang++ (-Wall -Wextra -Werror). A snippet with annotations is
// a header: weavegen generates its proxy, and the generated source is what is
// compiled. Any other snippet is code: its #include lines go on top, the rest
// into a function body. Snippets see readme_prelude.h (Receipt, Item...) and,
// in order, the headers of the snippets before them.
#include <catch2/catch.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

struct Snippet {
  int line = 0;       // README line of the opening fence
  std::string text;   // dedented
  std::string header; // "order_service.h" from a first line "// order_service.h", or ""
  bool annotated = false;
};

std::vector<Snippet> cpp_snippets(const std::string& path) {
  std::ifstream in(path);
  std::vector<Snippet> out;
  std::string line;
  int n = 0;
  Snippet* open = nullptr;
  std::size_t indent = 0;
  while (std::getline(in, line)) {
    ++n;
    const std::size_t first = line.find_first_not_of(' ');
    const std::string body = first == std::string::npos ? "" : line.substr(first);
    if (!open && body == "```cpp") {
      out.push_back({n, "", "", false});
      open = &out.back();
      indent = first;
      continue;
    }
    if (open && body.rfind("```", 0) == 0) {
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

}  // namespace

TEST_CASE("README: every C++ snippet compiles under g++ and clang++ with -Wall -Wextra -Werror", "[docs]") {
  const fs::path dir = fs::temp_directory_path() / ("weave_readme_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "gen");
  const std::string includes = " -I'" + dir.string() + "' -I'" + (dir / "gen").string() + "' -I'" +
                               WEAVE_INCLUDE_DIR + "' -I'" + WEAVE_DOCS_TEST_DIR + "'";
  const std::string flags = " -std=c++20 -Wall -Wextra -Werror" + includes;
  const auto compilers_used = compilers(dir, flags);
  const auto snippets = cpp_snippets(WEAVE_README);
  REQUIRE(snippets.size() >= 6);
  int headers = 0;
  for (std::size_t i = 0; i < snippets.size(); ++i) {
    const Snippet& s = snippets[i];
    // An asynchronous method's snippet needs Boost, which only a build with
    // the async component has.
    if (!WEAVE_DOCS_ASYNC && s.text.find("boost/asio") != std::string::npos) continue;
    INFO("README.md:" << s.line << "\n" << s.text);
    std::string output;
    fs::path unit;
    if (s.annotated) {
      const std::string name = s.header.empty() ? "readme_" + std::to_string(s.line) + ".h" : s.header;
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
      unit = dir / ("readme_" + std::to_string(s.line) + ".cpp");
      std::ofstream(unit) << "#include \"readme_prelude.h\"\n" << top << "void readme_snippet() {\n" << body << "}\n";
    }
    for (const auto& cxx : compilers_used) {
      const int rc = run("'" + cxx.path + "'" + flags + " -fsyntax-only" + cxx.use_prelude + " '" + unit.string() + "'",
                         output, dir / "compile.txt");
      INFO(cxx.path << ":\n" << output);
      CHECK(rc == 0);
    }
  }
  CHECK(headers >= 3);
  fs::remove_all(dir);
}
