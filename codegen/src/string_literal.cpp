#include "string_literal.h"

#include <cstdint>
#include <cstdio>

namespace weavegen {

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, std::uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace

bool decode_literal_body(std::string_view body, std::string& text, std::vector<int>& from, std::string& error) {
  text.clear();
  from.clear();
  for (std::size_t i = 0; i < body.size();) {
    const int start = static_cast<int>(i);
    const std::size_t before = text.size();
    if (body[i] != '\\') {
      text += body[i++];
    } else if (i + 1 >= body.size()) {
      error = "a string literal ends in a lone backslash";
      return false;
    } else {
      const char e = body[i + 1];
      i += 2;
      switch (e) {
        case 'n': text += '\n'; break;
        case 't': text += '\t'; break;
        case 'r': text += '\r'; break;
        case 'a': text += '\a'; break;
        case 'b': text += '\b'; break;
        case 'f': text += '\f'; break;
        case 'v': text += '\v'; break;
        case '\\': case '\'': case '"': case '?': text += e; break;
        case 'x': {
          std::uint32_t v = 0;
          std::size_t digits = 0;
          for (; i < body.size() && hex_digit(body[i]) >= 0; ++i, ++digits) {
            v = v * 16 + static_cast<std::uint32_t>(hex_digit(body[i]));
            if (v > 0xFF) {
              error = "hex escape '\\x" + std::string(body.substr(start + 2, i + 1 - start - 2)) +
                      "' is out of range for a char (at most \\xff)";
              return false;
            }
          }
          if (digits == 0) {
            error = "'\\x' needs hex digits";
            return false;
          }
          text += static_cast<char>(v);
          break;
        }
        case 'u': case 'U': {
          const std::size_t n = e == 'u' ? 4 : 8;
          std::uint32_t cp = 0;
          for (std::size_t k = 0; k < n; ++k, ++i) {
            if (i >= body.size() || hex_digit(body[i]) < 0) {
              error = std::string("'\\") + e + "' needs exactly " + std::to_string(n) + " hex digits";
              return false;
            }
            cp = cp * 16 + static_cast<std::uint32_t>(hex_digit(body[i]));
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
            error = "'" + std::string(body.substr(start, i - start)) + "' is not a Unicode character";
            return false;
          }
          append_utf8(text, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            std::uint32_t v = static_cast<std::uint32_t>(e - '0');
            for (int k = 0; k < 2 && i < body.size() && body[i] >= '0' && body[i] <= '7'; ++k, ++i)
              v = v * 8 + static_cast<std::uint32_t>(body[i] - '0');
            if (v > 0xFF) {
              error = "octal escape '" + std::string(body.substr(start, i - start)) + "' is out of range for a char";
              return false;
            }
            text += static_cast<char>(v);
            break;
          }
          error = std::string("unknown escape sequence '\\") + e + "'";
          return false;
      }
    }
    from.insert(from.end(), text.size() - before, start);
  }
  return true;
}

std::string cpp_string_literal(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default: {
        const auto b = static_cast<unsigned char>(c);
        if (b >= 0x20 && b < 0x7F) {
          out += c;
        } else {
          char buf[5];
          std::snprintf(buf, sizeof buf, "\\%03o", b);
          out += buf;
        }
      }
    }
  }
  return out + "\"";
}

}  // namespace weavegen
