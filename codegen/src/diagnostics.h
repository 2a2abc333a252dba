// The one diagnostics reporter of weavegen: compiler-style messages
//   path:line:col: error: message
//   <source line>
//   <caret line>
#pragma once

#include <map>
#include <ostream>
#include <string>
#include <vector>

namespace weavegen {

struct Loc {
  int line = 0;  // 1-based; 0 = no location
  int col = 0;   // 1-based, in bytes
};

class Reporter {
 public:
  explicit Reporter(std::ostream& out) : out_(&out) {}

  // Registers file contents so source lines can be shown without re-reading.
  void add_source(const std::string& path, std::string contents);

  void error(const std::string& path, Loc loc, const std::string& message, int length = 1);
  void warning(const std::string& path, Loc loc, const std::string& message, int length = 1);
  void note(const std::string& path, Loc loc, const std::string& message, int length = 1);
  // Without a location: "weavegen: error: message".
  void error(const std::string& message);

  int errors() const { return errors_; }
  int warnings() const { return warnings_; }

 private:
  void report(const char* severity, const std::string& path, Loc loc,
              const std::string& message, int length);
  const std::string* source(const std::string& path);
  std::ostream* out_;
  std::map<std::string, std::string> sources_;
  int errors_ = 0;
  int warnings_ = 0;
};

}  // namespace weavegen
