#include "key_template.h"

#include <cctype>

namespace weavegen {

namespace {
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
}  // namespace

std::optional<std::vector<KeyPiece>> parse_key_template(const std::string& s, KeySyntaxError& err) {
  std::vector<KeyPiece> out;
  std::string lit;
  auto flush = [&] {
    if (!lit.empty()) {
      KeyPiece p;
      p.literal = lit;
      out.push_back(std::move(p));
      lit.clear();
    }
  };
  auto fail = [&](int pos, std::string msg, int len = 1) {
    err = {pos, len, std::move(msg)};
    return std::nullopt;
  };
  const int n = static_cast<int>(s.size());
  int i = 0;
  while (i < n) {
    char c = s[i];
    if (c == '>') {
      if (i + 1 < n && s[i + 1] == '>') {
        lit += '>';
        i += 2;
        continue;
      }
      return fail(i, "unbalanced '>' in key template; write '>>' for a literal '>'");
    }
    if (c != '<') {
      lit += c;
      ++i;
      continue;
    }
    if (i + 1 < n && s[i + 1] == '<') {
      lit += '<';
      i += 2;
      continue;
    }
    // Placeholder.
    const int open = i;
    int close = static_cast<int>(s.find('>', open + 1));
    // "->" inside a placeholder is not the closing '>'.
    while (close != -1 && close > 0 && s[close - 1] == '-') close = static_cast<int>(s.find('>', close + 1));
    if (close == -1)
      return fail(open, "unbalanced '<' in key template: placeholder is not closed with '>' "
                        "(write '<<' for a literal '<')");
    KeyPiece p;
    p.placeholder = true;
    p.pos = open;
    int j = open + 1;
    auto skip_ws = [&] { while (j < close && s[j] == ' ') ++j; };
    skip_ws();
    if (j == close) return fail(open, "empty placeholder '<>' in key template", close - open + 1);
    if (!ident_start(s[j]))
      return fail(j, std::string("expected a parameter name in placeholder, found '") + s[j] + "'");
    p.head_pos = j;
    while (j < close && ident_char(s[j])) p.head += s[j++];
    skip_ws();
    while (j < close) {
      KeyStep st;
      if (s[j] == '.') {
        ++j;
      } else if (s[j] == '-' && j + 1 <= close && s[j + 1] == '>') {
        st.arrow = true;
        j += 2;
      } else if (s[j] == '(') {
        return fail(j, p.steps.empty() ? "cannot call parameter '" + p.head + "' in a key template"
                                        : "unexpected '(' in placeholder");
      } else {
        return fail(j, std::string("unexpected '") + s[j] + "' in placeholder; expected '.', '->' or '>'");
      }
      skip_ws();
      if (j >= close || !ident_start(s[j]))
        return fail(j, std::string("expected a member name after '") + (st.arrow ? "->" : ".") + "'");
      st.pos = j;
      while (j < close && ident_char(s[j])) st.member += s[j++];
      skip_ws();
      if (j < close && s[j] == '(') {
        int k = j + 1;
        while (k < close && s[k] == ' ') ++k;
        if (k < close && s[k] == ')') {
          st.call = true;
          j = k + 1;
          skip_ws();
        } else {
          int arg = j + 1;
          while (arg < close && s[arg] == ' ') ++arg;
          return fail(arg, "calls with arguments are not supported in key templates ('" + st.member +
                               "' may only be called as '" + st.member + "()')");
        }
      }
      p.steps.push_back(std::move(st));
    }
    flush();
    out.push_back(std::move(p));
    i = close + 1;
  }
  flush();
  return out;
}

}  // namespace weavegen
