#include "store/reply.h"

#include <charconv>

#include <hiredis/hiredis.h>

#include "store/executor.h"

namespace WEAVE_NAMESPACE::store {

ReplyView::Kind ReplyView::kind() const noexcept {
  switch (r_->type) {
    case REDIS_REPLY_NIL: return Kind::nil;
    case REDIS_REPLY_INTEGER: return Kind::integer;
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS: return Kind::text;
    case REDIS_REPLY_ARRAY: return Kind::array;
    case REDIS_REPLY_ERROR: return Kind::error;
    default: return Kind::other;
  }
}

long long ReplyView::integer() const {
  if (r_->type != REDIS_REPLY_INTEGER) unexpected();
  return r_->integer;
}

long long ReplyView::number() const {
  if (r_->type == REDIS_REPLY_INTEGER) return r_->integer;
  long long n = 0;
  if (r_->type == REDIS_REPLY_STRING) {
    const char* end = r_->str + r_->len;
    auto [p, ec] = std::from_chars(r_->str, end, n);
    if (ec == std::errc() && p == end) return n;
  }
  unexpected();
}

std::string_view ReplyView::text() const {
  if (r_->type != REDIS_REPLY_STRING && r_->type != REDIS_REPLY_STATUS) unexpected();
  return {r_->str, r_->len};
}

std::string_view ReplyView::error() const noexcept {
  if (r_->type != REDIS_REPLY_ERROR) return {};
  return {r_->str, r_->len};
}

std::size_t ReplyView::size() const {
  if (r_->type != REDIS_REPLY_ARRAY) unexpected();
  return r_->elements;
}

ReplyView ReplyView::operator[](std::size_t i) const {
  if (r_->type != REDIS_REPLY_ARRAY || i >= r_->elements) unexpected();
  return ReplyView(r_->element[i], what_);
}

void ReplyView::unexpected() const { bad_reply(r_, what_); }

}  // namespace weave::store
