// The error tree's typed fields: what a caller decides on without parsing what().
#include <catch2/catch.hpp>

#include "weave/error.h"

TEST_CASE("ReplyError keeps the server's code and text apart from its message") {
  const weave::ReplyError moved("weave redis: subscribe refused", "MOVED 5168 127.0.0.1:7001");
  CHECK(moved.code() == "MOVED");
  CHECK(moved.reply() == "MOVED 5168 127.0.0.1:7001");  // what a redirect is read from
  CHECK(std::string(moved.what()) == "weave redis: subscribe refused: MOVED 5168 127.0.0.1:7001");
  CHECK_FALSE(moved.retryable());
  const weave::ReplyError loading("weave redis: acquire refused", "LOADING Redis is loading the dataset");
  CHECK(loading.code() == "LOADING");
  CHECK(loading.retryable());
}
