#include "schedule/cron.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>

namespace WEAVE_NAMESPACE::detail {

using namespace std::chrono;

namespace {

constexpr std::string_view kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                            "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
// Monday 1 to Sunday 7, as Spring numbers them (7 and 0 both mean Sunday).
constexpr std::string_view kWeekdayNames[] = {"MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"};

enum FieldIndex { kSecond, kMinute, kHour, kDayOfMonth, kMonth, kDayOfWeek, kFieldCount };

struct FieldSpec {
  std::string_view name;
  unsigned min, max;
  const std::string_view* names = nullptr;  // names[i] is the value i + 1
  unsigned name_count = 0;
};

constexpr std::array<FieldSpec, kFieldCount> kFields{{
    {"second", 0, 59},
    {"minute", 0, 59},
    {"hour", 0, 23},
    {"day-of-month", 1, 31},
    {"month", 1, 12, kMonthNames, 12},
    {"day-of-week", 0, 7, kWeekdayNames, 7},
}};

struct Macro {
  std::string_view name, fields;
};
constexpr Macro kMacros[] = {
    {"@yearly", "0 0 0 1 1 *"}, {"@annually", "0 0 0 1 1 *"}, {"@monthly", "0 0 0 1 * *"}, {"@weekly", "0 0 0 * * 0"},
    {"@daily", "0 0 0 * * *"},  {"@midnight", "0 0 0 * * *"}, {"@hourly", "0 0 * * * *"},
};

bool is_space(char c) { return c == ' ' || c == '\t'; }
char upper(char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); }
bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (upper(a[i]) != upper(b[i])) return false;
  return true;
}

// One field's values: bit v for each plain value v, and the elements that
// name a day only within a month.
struct ParsedField {
  std::uint64_t bits = 0;
  std::vector<CronExpression::MonthDay> month_days;
};

// Reads one field; every refusal names the field and throws CronError.
class FieldParser {
 public:
  FieldParser(std::string_view expression, int index, std::string_view text, std::size_t offset)
      : expression_(expression), text_(text), offset_(offset), index_(index), spec_(kFields[index]) {}

  ParsedField parse() {
    ParsedField out;
    if (text_ == "?") {
      if (index_ != kDayOfMonth && index_ != kDayOfWeek) fail("'?' is allowed only in day-of-month and day-of-week");
      element("*", out);
      return out;
    }
    std::size_t start = 0;
    for (;;) {
      const std::size_t comma = text_.find(',', start);
      const std::string_view item = text_.substr(start, comma == std::string_view::npos ? comma : comma - start);
      if (item.empty()) fail("empty list item in '" + std::string(text_) + "'");
      element(item, out);
      if (comma == std::string_view::npos) return out;
      start = comma + 1;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& problem) const {
    throw CronError(expression_, index_, text_, offset_, std::string(spec_.name) + ": " + problem);
  }

  // A refusal for the character at item[i], which no rule here reads.
  [[noreturn]] void unexpected(std::string_view item, std::size_t i) const {
    const char c = upper(item[i]);
    if (c == 'L' && index_ != kDayOfMonth && index_ != kDayOfWeek)
      fail("'L' is allowed only in day-of-month and day-of-week");
    if (c == 'W' && index_ != kDayOfMonth) fail("'W' is allowed only in day-of-month");
    if (c == '#' && index_ != kDayOfWeek) fail("'#' is allowed only in day-of-week");
    if (c == '?') fail("'?' must be the whole field");
    fail("unexpected '" + std::string(1, item[i]) + "' in '" + std::string(item) + "'");
  }

  // A number at item[i], advancing i; none when there are no digits.
  std::optional<unsigned> number(std::string_view item, std::size_t& i) const {
    const std::size_t begin = i;
    unsigned n = 0;
    for (; i < item.size() && item[i] >= '0' && item[i] <= '9'; ++i)
      n = n > 100'000 ? n : n * 10 + static_cast<unsigned>(item[i] - '0');  // (large stays large: out of range)
    if (i == begin) return std::nullopt;
    return n;
  }

  // A value at item[i] (a number or, in month and day-of-week, a name),
  // within the field's range, advancing i.
  unsigned value(std::string_view item, std::size_t& i) const {
    if (i < item.size() && std::isalpha(static_cast<unsigned char>(item[i])) && spec_.names) {
      for (unsigned v = 0; v < spec_.name_count; ++v)
        if (iequals(item.substr(i, 3), spec_.names[v])) {
          i += 3;
          return v + 1;
        }
      std::size_t end = i;
      while (end < item.size() && std::isalpha(static_cast<unsigned char>(item[end]))) ++end;
      if (end - i == 1) unexpected(item, i);  // (an L or W out of place says so)
      fail("unknown name '" + std::string(item.substr(i, end - i)) + "' (" + std::string(spec_.names[0]) + "-" +
           std::string(spec_.names[spec_.name_count - 1]) + ")");
    }
    const std::optional<unsigned> n = number(item, i);
    if (!n) {
      if (i == item.size()) fail(std::string("'").append(item).append("' lacks a value"));  // (not "'" + ...: g++ 12 -Wrestrict)
      unexpected(item, i);
    }
    return in_range(*n, spec_.min, spec_.max);
  }

  unsigned in_range(unsigned n, unsigned min, unsigned max, std::string_view prefix = "") const {
    if (n < min || n > max)
      fail(std::string(prefix) + std::to_string(n) + " is out of range " + std::to_string(min) + "-" +
           std::to_string(max));
    return n;
  }

  // The value before an item's one-letter suffix: 15 of 15W, 5 of FRIL.
  unsigned value_before_suffix(std::string_view item) const {
    std::size_t i = 0;
    const unsigned n = value(item, i);
    if (i != item.size() - 1) unexpected(item, i);
    return n;
  }

  static std::uint8_t sunday_is_0(unsigned weekday) { return static_cast<std::uint8_t>(weekday % 7); }

  void element(std::string_view item, ParsedField& out) const {
    if (index_ == kDayOfMonth && month_day(item, out)) return;
    if (index_ == kDayOfWeek && weekday_day(item, out)) return;
    std::size_t i = 0;
    unsigned lo, hi;
    bool range = false;
    if (item[0] == '*') {
      ++i;
      // Spring's day-of-week * is 1-7 (Monday to Sunday): */2 is Mon, Wed, Fri, Sun.
      lo = index_ == kDayOfWeek ? 1 : spec_.min;
      hi = spec_.max;
      range = true;
    } else {
      lo = hi = value(item, i);
      if (i < item.size() && item[i] == '-') {
        ++i;
        hi = value(item, i);
        range = true;
        // Sunday as 7 at a range's start means 0 (SUN-FRI is 0-5), as in Spring.
        if (index_ == kDayOfWeek && lo == 7 && hi != 7) lo = 0;
        if (lo > hi)
          fail("range " + std::to_string(lo) + "-" + std::to_string(hi) +
               " is reversed (a range does not wrap around: write it as two)");
      }
    }
    unsigned step = 1;
    if (i < item.size() && item[i] == '/') {
      ++i;
      const std::optional<unsigned> n = number(item, i);
      if (!n) fail("'/' needs a step after it, as in */5");
      if (*n == 0) fail("step 0 must be 1 or more");
      step = *n;
      if (!range) hi = spec_.max;  // a/n: from a to the field's last value
    }
    if (i < item.size()) unexpected(item, i);
    for (unsigned v = lo; v <= hi; v += step) out.bits |= std::uint64_t{1} << v;
  }

  // Day-of-month's L, L-n, LW and nW; false for anything else.
  bool month_day(std::string_view item, ParsedField& out) const {
    using MD = CronExpression::MonthDay;
    if (upper(item[0]) == 'L') {
      if (item.size() == 1) {
        out.month_days.push_back({MD::last_minus, 0, 0});
      } else if (item.size() == 2 && upper(item[1]) == 'W') {
        out.month_days.push_back({MD::last_weekday, 0, 0});
      } else if (item[1] == '-') {
        std::size_t i = 2;
        const std::optional<unsigned> n = number(item, i);
        if (!n) fail("'L-' needs a number of days after it, as in L-3");
        if (i < item.size()) unexpected(item, i);
        out.month_days.push_back({MD::last_minus, static_cast<std::uint8_t>(in_range(*n, 1, 30, "L-")), 0});
      } else {
        fail("unexpected '" + std::string(item.substr(1)) + "' after 'L' (L, L-3 or LW)");
      }
      return true;
    }
    if (upper(item.back()) != 'W') return false;
    if (item.size() == 1) fail("'W' needs a day before it, as in 15W");
    out.month_days.push_back({MD::nearest_weekday, static_cast<std::uint8_t>(value_before_suffix(item)), 0});
    return true;
  }

  // Day-of-week's dL and d#k; false for anything else.
  bool weekday_day(std::string_view item, ParsedField& out) const {
    using MD = CronExpression::MonthDay;
    if (const std::size_t hash = item.find('#'); hash != std::string_view::npos) {
      if (hash == 0) fail("'#' needs a day of the week before it, as in 5#3");
      std::size_t i = 0;
      const unsigned n = value(item, i);
      if (i != hash) unexpected(item, i);
      ++i;
      const std::optional<unsigned> k = number(item, i);
      if (!k) fail("'#' needs an ordinal after it (1-5), as in 5#3");
      if (i < item.size()) unexpected(item, i);
      out.month_days.push_back({MD::nth_of_weekday, sunday_is_0(n), static_cast<std::uint8_t>(in_range(*k, 1, 5, "#"))});
      return true;
    }
    if (upper(item.back()) != 'L') return false;
    if (item.size() == 1) fail("'L' needs a day of the week before it, as in 5L (the last Friday)");
    out.month_days.push_back({MD::last_of_weekday, sunday_is_0(value_before_suffix(item)), 0});
    return true;
  }

  std::string_view expression_, text_;
  std::size_t offset_;
  int index_;
  const FieldSpec& spec_;
};

// Bits `first` and up.
template <typename Bits>
constexpr Bits bits_from(unsigned first) {
  return first >= sizeof(Bits) * 8 ? Bits{0} : static_cast<Bits>(~Bits{0} << first);
}

}  // namespace

CronExpression CronExpression::parse(std::string_view expression) {
  std::size_t begin = 0, end = expression.size();
  while (begin < end && is_space(expression[begin])) ++begin;
  while (end > begin && is_space(expression[end - 1])) --end;
  const std::string_view trimmed = expression.substr(begin, end - begin);
  if (trimmed.empty()) throw CronError(expression, -1, expression, 0, "the expression is empty");

  std::string_view fields_text = expression;
  if (trimmed[0] == '@') {
    const Macro* macro = nullptr;
    for (const Macro& m : kMacros)
      if (iequals(trimmed, m.name)) macro = &m;
    if (!macro)
      throw CronError(expression, -1, trimmed, begin,
                      "unknown macro '" + std::string(trimmed) +
                          "' (@yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly)");
    fields_text = macro->fields;
  }

  std::array<std::string_view, kFieldCount> fields;
  std::array<std::size_t, kFieldCount> offsets{};
  int count = 0;
  for (std::size_t i = 0; i < fields_text.size();) {
    if (is_space(fields_text[i])) {
      ++i;
      continue;
    }
    std::size_t j = i;
    while (j < fields_text.size() && !is_space(fields_text[j])) ++j;
    if (count == kFieldCount)
      throw CronError(expression, -1, fields_text.substr(i, end - i), i,
                      "expected 6 fields (second minute hour day-of-month month day-of-week), found more");
    fields[count] = fields_text.substr(i, j - i);
    offsets[count] = i;
    ++count;
    i = j;
  }
  if (count < kFieldCount)
    throw CronError(expression, -1, trimmed, begin,
                    "expected 6 fields (second minute hour day-of-month month day-of-week), found " +
                        std::to_string(count));

  std::array<ParsedField, kFieldCount> parsed;
  for (int f = 0; f < kFieldCount; ++f)
    parsed[f] = FieldParser(expression, f, fields[f], offsets[f]).parse();  // (a macro's fields are all valid)

  CronExpression cron;
  cron.text_ = std::string(expression);
  cron.seconds_ = parsed[kSecond].bits;
  cron.minutes_ = parsed[kMinute].bits;
  cron.hours_ = static_cast<std::uint32_t>(parsed[kHour].bits);
  cron.days_ = static_cast<std::uint32_t>(parsed[kDayOfMonth].bits);
  cron.months_ = static_cast<std::uint16_t>(parsed[kMonth].bits);
  const std::uint64_t weekdays = parsed[kDayOfWeek].bits;
  cron.weekdays_ = static_cast<std::uint8_t>((weekdays | weekdays >> 7) & 0x7f);  // 7 is Sunday, 0
  cron.month_days_ = std::move(parsed[kDayOfMonth].month_days);
  cron.weekday_days_ = std::move(parsed[kDayOfWeek].month_days);
  return cron;
}

std::uint32_t CronExpression::days_of(year_month ym) const {
  const unsigned last = static_cast<unsigned>((ym / std::chrono::last).day());
  const unsigned first_weekday = weekday(sys_days(ym / 1)).c_encoding();  // 0 Sunday
  const auto weekday_of = [&](unsigned dom) { return (first_weekday + dom - 1) % 7; };
  const std::uint32_t in_month = bits_from<std::uint32_t>(1) & ~bits_from<std::uint32_t>(last + 1);

  std::uint32_t by_month_day = days_;
  for (const MonthDay& d : month_days_) {
    unsigned dom = 0;  // none
    switch (d.kind) {
      case MonthDay::last_minus:
        dom = last > d.n ? last - d.n : 0;
        break;
      case MonthDay::last_weekday:
        dom = last - (weekday_of(last) == 6 ? 1 : weekday_of(last) == 0 ? 2 : 0);
        break;
      case MonthDay::nearest_weekday:
        dom = d.n;
        if (dom > last) dom = 0;  // (31W: only months of 31 days)
        else if (weekday_of(dom) == 6) dom = dom == 1 ? 3 : dom - 1;     // Saturday: the Friday before, or Monday 3rd
        else if (weekday_of(dom) == 0) dom = dom == last ? dom - 2 : dom + 1;  // Sunday: the Monday after, or Friday
        break;
      default:
        break;
    }
    if (dom) by_month_day |= std::uint32_t{1} << dom;
  }

  std::uint32_t by_weekday = 0;
  for (unsigned dom = 1; dom <= last; ++dom)
    if (weekdays_ >> weekday_of(dom) & 1) by_weekday |= std::uint32_t{1} << dom;
  for (const MonthDay& d : weekday_days_) {
    unsigned dom = 0;
    if (d.kind == MonthDay::last_of_weekday) {
      dom = last - (weekday_of(last) + 7 - d.n) % 7;
    } else if (d.kind == MonthDay::nth_of_weekday) {
      dom = 1 + (d.n + 7 - first_weekday) % 7 + 7 * (d.k - 1u);
      if (dom > last) dom = 0;
    }
    if (dom) by_weekday |= std::uint32_t{1} << dom;
  }
  return by_month_day & by_weekday & in_month;
}

std::optional<std::uint32_t> CronExpression::time_from(std::uint32_t from_second) const {
  const unsigned h0 = from_second / 3600, m0 = from_second / 60 % 60, s0 = from_second % 60;
  for (std::uint32_t hours = hours_ & bits_from<std::uint32_t>(h0); hours; hours &= hours - 1) {
    const unsigned h = static_cast<unsigned>(std::countr_zero(hours));
    for (std::uint64_t minutes = minutes_ & bits_from<std::uint64_t>(h == h0 ? m0 : 0); minutes; minutes &= minutes - 1) {
      const unsigned m = static_cast<unsigned>(std::countr_zero(minutes));
      const std::uint64_t seconds = seconds_ & bits_from<std::uint64_t>(h == h0 && m == m0 ? s0 : 0);
      if (seconds) return h * 3600 + m * 60 + static_cast<unsigned>(std::countr_zero(seconds));
    }
  }
  return std::nullopt;
}

std::optional<local_seconds> CronExpression::next(local_seconds after) const {
  // The calendar's years end at 32767; stop a year early so every month
  // looked at is a valid one.
  constexpr int kLastYear = static_cast<int>(year::max()) - 1;
  const local_days max_day{year{kLastYear} / December / 31};
  if (after >= max_day) return std::nullopt;
  if (after < local_days{year::min() / January / 1}) after = local_days{year::min() / January / 1};

  const local_seconds start = after + seconds(1);
  const local_days start_day = floor<days>(start);
  const year_month_day ymd{start_day};
  int y = static_cast<int>(ymd.year());
  unsigned m = static_cast<unsigned>(ymd.month()), d = static_cast<unsigned>(ymd.day());
  auto second_of_day = static_cast<std::uint32_t>((start - start_day).count());

  // 400 years hold every date and weekday the calendar has: nothing there, nothing ever.
  const int last_year = std::min(y + 400, kLastYear);
  for (; y <= last_year; ++y, m = 1) {
    for (; m <= 12; ++m, d = 1, second_of_day = 0) {
      if (!(months_ >> m & 1)) continue;
      const year_month ym{year{y}, month{m}};
      for (std::uint32_t doms = days_of(ym) & bits_from<std::uint32_t>(d); doms; doms &= doms - 1) {
        const unsigned dom = static_cast<unsigned>(std::countr_zero(doms));
        if (const auto t = time_from(dom == d ? second_of_day : 0))
          return local_days{ym / day{dom}} + seconds(*t);
      }
    }
  }
  return std::nullopt;
}

bool CronExpression::matches(local_seconds t) const {
  const local_days date = floor<days>(t);
  const year_month_day ymd{date};
  if (!ymd.ok()) return false;
  const auto second_of_day = static_cast<std::uint32_t>((t - date).count());
  return (months_ >> static_cast<unsigned>(ymd.month()) & 1) &&
         (days_of(ymd.year() / ymd.month()) >> static_cast<unsigned>(ymd.day()) & 1) &&
         time_from(second_of_day) == second_of_day;
}

}  // namespace weave::detail
