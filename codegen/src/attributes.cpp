#include "attributes.h"

#include <algorithm>
#include <set>

#include "string_literal.h"

namespace weavegen {

std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates) {
  int best = 3;
  std::string pick;
  for (const auto& c : candidates) {
    int d = edit_distance(name, c);
    if (d < best) {
      best = d;
      pick = c;
    }
  }
  return pick.empty() ? "" : "; did you mean '" + pick + "'?";
}

namespace {

const std::set<std::string> k_standard = {
    "nodiscard", "noreturn", "deprecated", "maybe_unused", "likely", "unlikely",
    "fallthrough", "no_unique_address", "carries_dependency", "assume", "optimize_for_synthesis"};

bool decode_string(const Token& t, RawValue& v, std::string& err) {
  const std::string& s = t.text;
  std::size_t q = s.find('"');
  if (q == std::string::npos) {
    err = "expected a string literal";
    return false;
  }
  std::string prefix = s.substr(0, q);
  v.kind = RawValue::string;
  v.loc = t.loc;
  v.length = static_cast<int>(s.size());
  v.text.clear();
  v.char_cols.clear();
  if (!prefix.empty() && prefix.back() == 'R') {
    std::size_t open = s.find('(', q);
    std::string delim = s.substr(q + 1, open - q - 1);
    std::size_t close = s.size() - 1 - delim.size() - 1;  // index of ')'
    for (std::size_t i = open + 1; i < close; ++i) {
      if (s[i] == '\n') {
        err = "multi-line raw string literals are not supported here";
        return false;
      }
      v.text += s[i];
      v.char_cols.push_back(t.loc.col + static_cast<int>(i));
    }
    v.char_cols.push_back(t.loc.col + static_cast<int>(close));
    return true;
  }
  if (!prefix.empty() && prefix != "u8") {
    err = "only plain (or u8) string literals are supported in annotations";
    return false;
  }
  std::vector<int> from;
  if (!decode_literal_body(std::string_view(s).substr(q + 1, s.size() - q - 2), v.text, from, err)) return false;
  for (const int offset : from) v.char_cols.push_back(t.loc.col + static_cast<int>(q + 1) + offset);
  v.char_cols.push_back(t.loc.col + static_cast<int>(s.size()) - 1);
  return true;
}

class Parser {
 public:
  Parser(const std::vector<Token>& t, const Vocabulary& v, Reporter& r, const std::string& p,
         const AttributeOptions& o)
      : toks_(t), vocab_(v), rep_(r), path_(p), options_(o) {}

  std::vector<RawAnnotation> run() {
    std::vector<RawAnnotation> out;
    for (std::size_t i = 0; i + 1 < toks_.size(); ++i) {
      if (is(i, "[") && is(i + 1, "[")) {
        std::size_t end = i;
        if (!specifier(i, out, end)) {
          // Skip to the matching "]]" if we can; carry on scanning after it.
          end = i + 2;
        }
        i = end - 1;
      }
    }
    return out;
  }

 private:
  bool is(std::size_t i, const char* s) const {
    return i < toks_.size() && toks_[i].kind == Token::punct && toks_[i].text == s;
  }
  void error(const Token& t, const std::string& msg) {
    rep_.error(path_, t.loc, msg, static_cast<int>(t.text.size()));
  }
  const Token& at(std::size_t i) const { return i < toks_.size() ? toks_[i] : toks_.back(); }

  // Parses [[ ... ]] starting at i; `end` is the index just past "]]".
  bool specifier(std::size_t i, std::vector<RawAnnotation>& out, std::size_t& end) {
    const unsigned spec_begin = toks_[i].offset;
    std::size_t j = i + 2;
    std::string using_ns;
    if (j < toks_.size() && toks_[j].kind == Token::keyword && toks_[j].text == "using") {
      if (at(j + 1).kind != Token::ident || !is(j + 2, ":")) {
        error(at(j + 1), "expected 'namespace:' after 'using' in attribute");
        return false;
      }
      using_ns = toks_[j + 1].text;
      j += 3;
    }
    std::vector<RawAnnotation> found;
    bool ok = true;
    while (j < toks_.size()) {
      if (is(j, "]") && is(j + 1, "]")) break;
      if (is(j, ",")) {
        ++j;
        continue;
      }
      if (toks_[j].kind != Token::ident && toks_[j].kind != Token::keyword) {
        // Not something we understand (e.g. a lambda in a subscript): leave it alone.
        return false;
      }
      std::string scope = using_ns, name = toks_[j].text;
      std::size_t name_tok = j;
      ++j;
      if (is(j, "::") && (at(j + 1).kind == Token::ident || at(j + 1).kind == Token::keyword)) {
        scope = name;
        name = toks_[j + 1].text;
        name_tok = j + 1;
        j += 2;
      }
      const AnnotationDef* def = nullptr;
      if (scope == "weave") {
        def = vocab_.find(name);
        if (!def) {
          error(toks_[name_tok], "unknown weave annotation 'weave::" + name + "'" +
                                     did_you_mean(name, vocab_.names()));
          ok = false;
        }
      } else if (scope.empty()) {
        def = vocab_.find(name);
        if (!def && !k_standard.count(name)) {
          const std::string hint = did_you_mean(name, vocab_.names());
          if (options_.allow_unknown) {
            rep_.warning(path_, toks_[name_tok].loc, "unknown attribute '" + name + "' is ignored" + hint,
                         static_cast<int>(name.size()));
          } else {
            rep_.error(path_, toks_[name_tok].loc,
                       "unknown attribute '" + name + "'" + hint +
                           " (neither standard nor an annotation: the method would run without it; give vendor "
                           "attributes their scope, e.g. 'gnu::" + name + "', or pass --allow-unknown-attributes)",
                       static_cast<int>(name.size()));
            ok = false;
          }
        }
      }
      RawAnnotation a;
      a.name = name;
      a.spelled = scope.empty() ? name : scope + "::" + name;
      a.loc = toks_[name_tok].loc;
      if (is(j, "(")) {
        std::size_t close = match(j);
        if (close == std::string::npos) {
          error(toks_[j], "unbalanced '(' in attribute");
          return false;
        }
        if (def && !arguments(j + 1, close, a)) ok = false;
        j = close + 1;
      }
      if (def) found.push_back(std::move(a));
      if (!is(j, ",") && !(is(j, "]") && is(j + 1, "]"))) {
        if (def) {
          error(at(j), "expected ',' or ']]' after annotation '" + a.spelled + "'");
          ok = false;
        }
        return false;
      }
    }
    if (j >= toks_.size()) return false;
    end = j + 2;
    const unsigned spec_end = toks_[j + 1].offset + 1;
    if (ok)
      for (auto& a : found) {
        a.spec_begin = spec_begin;
        a.spec_end = spec_end;
        out.push_back(std::move(a));
      }
    else
      for (auto& a : found) {  // keep the annotation (for attachment) but without bad args
        a.spec_begin = spec_begin;
        a.spec_end = spec_end;
        a.args.clear();
        a.name.clear();  // marks "already diagnosed"
        out.push_back(std::move(a));
      }
    return true;
  }

  std::size_t match(std::size_t open) const {
    int depth = 0;
    for (std::size_t k = open; k < toks_.size(); ++k) {
      if (toks_[k].kind != Token::punct) continue;
      const std::string& t = toks_[k].text;
      if (t == "(" || t == "[" || t == "{") ++depth;
      else if (t == ")" || t == "]" || t == "}") {
        if (--depth == 0) return t == ")" ? k : std::string::npos;
      }
    }
    return std::string::npos;
  }

  // name=value, ... between tokens [b, e).
  bool arguments(std::size_t b, std::size_t e, RawAnnotation& a) {
    std::size_t j = b;
    while (j < e) {
      const Token& n = toks_[j];
      if (n.kind != Token::ident && n.kind != Token::keyword) {
        error(n, "expected an argument name in '" + a.spelled + "(...)'");
        return false;
      }
      if (j + 1 >= e || !is(j + 1, "=")) {
        error(j + 1 < e ? toks_[j + 1] : toks_[e], "expected '=' after argument name '" + n.text + "'");
        return false;
      }
      RawArg arg;
      arg.name = n.text;
      arg.loc = n.loc;
      j += 2;
      if (j >= e) {
        error(toks_[e], "expected a value for argument '" + n.text + "'");
        return false;
      }
      if (!value(j, e, arg.value)) return false;
      a.args.push_back(std::move(arg));
      if (j < e) {
        if (!is(j, ",")) {
          error(toks_[j], "expected ',' between annotation arguments");
          return false;
        }
        ++j;
      }
    }
    return true;
  }

  bool value(std::size_t& j, std::size_t e, RawValue& v) {
    const Token& t = toks_[j];
    v.loc = t.loc;
    v.length = static_cast<int>(t.text.size());
    if (is(j, "[")) {
      v.kind = RawValue::list;
      ++j;
      while (j < e && !is(j, "]")) {
        RawValue item;
        if (!value(j, e, item)) return false;
        v.items.push_back(std::move(item));
        if (is(j, ",")) ++j;
        else if (!is(j, "]")) {
          error(at(j), "expected ',' or ']' in list");
          return false;
        }
      }
      if (j >= e) {
        error(t, "unterminated list");
        return false;
      }
      ++j;
      return true;
    }
    if (is(j, "-") && j + 1 < e && toks_[j + 1].kind == Token::literal) {
      v.kind = RawValue::number;
      v.text = "-" + toks_[j + 1].text;
      v.length = static_cast<int>(toks_[j + 1].offset + toks_[j + 1].text.size() - t.offset);
      j += 2;
      return true;
    }
    if (t.kind == Token::literal) {
      if (t.text.find('"') != std::string::npos) {
        std::string err;
        if (!decode_string(t, v, err)) {
          error(t, err);
          return false;
        }
        if (j + 1 < e && toks_[j + 1].kind == Token::literal && toks_[j + 1].text.find('"') != std::string::npos) {
          error(toks_[j + 1], "adjacent string literals are not supported in annotations");
          return false;
        }
      } else if (t.text.find('\'') != std::string::npos) {
        error(t, "character literals are not supported in annotations");
        return false;
      } else {
        v.kind = RawValue::number;
        v.text = t.text;
        // A rate, `100/s` or `5/10s`: one value of three tokens.
        if (is(j + 1, "/") && j + 2 < e &&
            (toks_[j + 2].kind == Token::ident ||
             (toks_[j + 2].kind == Token::literal && toks_[j + 2].text.find_first_of("\"'") == std::string::npos))) {
          v.text += "/" + toks_[j + 2].text;
          v.length = static_cast<int>(toks_[j + 2].offset + toks_[j + 2].text.size() - t.offset);
          j += 2;
        } else if (is(j + 1, "%")) {  // a percentage, `50%`: one value of two tokens
          v.text += "%";
          v.length = static_cast<int>(toks_[j + 1].offset + 1 - t.offset);
          j += 1;
        }
      }
      ++j;
      return true;
    }
    if (t.kind == Token::keyword && (t.text == "true" || t.text == "false")) {
      v.kind = RawValue::boolean;
      v.text = t.text;
      ++j;
      return true;
    }
    // An identifier, qualified perhaps (`pay::Transient`, `::std::system_error`):
    // one value of its tokens.
    const bool rooted = is(j, "::") && j + 1 < e && toks_[j + 1].kind == Token::ident;
    if (rooted || t.kind == Token::ident || t.kind == Token::keyword) {
      v.kind = RawValue::identifier;
      if (rooted) {
        v.text = "::";
        ++j;
      }
      v.text += toks_[j].text;
      ++j;
      while (is(j, "::") && j + 1 < e && toks_[j + 1].kind == Token::ident) {
        v.text += "::" + toks_[j + 1].text;
        j += 2;
      }
      v.length = static_cast<int>(toks_[j - 1].offset + toks_[j - 1].text.size() - t.offset);
      return true;
    }
    error(t, "expected a value (string, number, duration, rate, identifier, true/false or [list])");
    return false;
  }

  const std::vector<Token>& toks_;
  const Vocabulary& vocab_;
  Reporter& rep_;
  const std::string& path_;
  const AttributeOptions& options_;
};

}  // namespace

std::vector<RawAnnotation> scan_attributes(const std::vector<Token>& tokens, const Vocabulary& vocab,
                                           Reporter& rep, const std::string& path, const AttributeOptions& options) {
  if (tokens.empty()) return {};
  return Parser(tokens, vocab, rep, path, options).run();
}

}  // namespace weavegen
