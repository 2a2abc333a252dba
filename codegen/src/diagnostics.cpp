#include "diagnostics.h"

#include <fstream>
#include <sstream>

namespace weavegen {

void Reporter::add_source(const std::string& path, std::string contents) {
  sources_[path] = std::move(contents);
}

const std::string* Reporter::source(const std::string& path) {
  auto it = sources_.find(path);
  if (it != sources_.end()) return &it->second;
  std::ifstream in(path, std::ios::binary);
  if (!in) return nullptr;
  std::ostringstream ss;
  ss << in.rdbuf();
  return &(sources_[path] = ss.str());
}

void Reporter::error(const std::string& path, Loc loc, const std::string& message, int length) {
  ++errors_;
  report("error", path, loc, message, length);
}
void Reporter::warning(const std::string& path, Loc loc, const std::string& message, int length) {
  ++warnings_;
  report("warning", path, loc, message, length);
}
void Reporter::note(const std::string& path, Loc loc, const std::string& message, int length) {
  report("note", path, loc, message, length);
}
void Reporter::error(const std::string& message) {
  ++errors_;
  *out_ << "weavegen: error: " << message << '\n';
}

void Reporter::report(const char* severity, const std::string& path, Loc loc,
                      const std::string& message, int length) {
  std::ostream& o = *out_;
  if (loc.line <= 0) {
    o << path << ": " << severity << ": " << message << '\n';
    return;
  }
  o << path << ':' << loc.line << ':' << loc.col << ": " << severity << ": " << message << '\n';
  const std::string* text = source(path);
  if (!text) return;
  // Find the line.
  std::size_t pos = 0;
  for (int l = 1; l < loc.line && pos != std::string::npos; ++l) {
    pos = text->find('\n', pos);
    if (pos != std::string::npos) ++pos;
  }
  if (pos == std::string::npos || pos > text->size()) return;
  std::size_t end = text->find('\n', pos);
  std::string line = text->substr(pos, end == std::string::npos ? std::string::npos : end - pos);
  if (!line.empty() && line.back() == '\r') line.pop_back();
  o << line << '\n';
  std::string caret;
  for (int i = 0; i < loc.col - 1 && i < static_cast<int>(line.size()); ++i)
    caret += line[i] == '\t' ? '\t' : ' ';
  caret += '^';
  int room = static_cast<int>(line.size()) - loc.col;
  for (int i = 1; i < length && i <= room; ++i) caret += '~';
  o << caret << '\n';
}

}  // namespace weavegen
