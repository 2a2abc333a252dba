// A small HTTP service on Boost.Beast whose asynchronous handlers are woven:
// GET /rate/<ccy> is cached ([[cache]]), GET /convert/<account>/<ccy>/<amount>
// is locked per account ([[lock]]), GET /stats tells how often the rate was
// loaded and how many conversions of one account ever ran at once.
//
//   rates [port]      (0 or nothing: a free port; prints "listening on 127.0.0.1:<port>")
//   curl http://127.0.0.1:<port>/rate/EUR
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "rate_service.weave.h"
#include "weave/config.h"
#include "weave/woven.h"

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

std::vector<std::string> split_path(const std::string& target) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : target.substr(1) + "/") {
    if (c != '/') {
      part += c;
    } else if (!part.empty()) {
      parts.push_back(part);
      part.clear();
    }
  }
  return parts;
}

asio::awaitable<http::response<http::string_body>> handle(rates::RateService& svc, const std::string& target) {
  http::response<http::string_body> res{http::status::ok, 11};
  res.set(http::field::content_type, "application/json");
  const std::vector<std::string> p = split_path(target);
  char body[256];
  try {
    if (p.size() == 2 && p[0] == "rate") {
      const double r = co_await svc.rate(p[1]);
      std::snprintf(body, sizeof body, "{\"ccy\":\"%s\",\"rate\":%g}", p[1].c_str(), r);
    } else if (p.size() == 4 && p[0] == "convert") {
      const double v = co_await svc.convert(p[1], p[2], std::stod(p[3]));
      std::snprintf(body, sizeof body, "{\"account\":\"%s\",\"%s\":%g}", p[1].c_str(), p[2].c_str(), v);
    } else if (p.size() == 1 && p[0] == "stats") {
      std::snprintf(body, sizeof body, "{\"rate_loads\":%d,\"most_inside\":%d}", svc.rate_loads(), svc.most_inside());
    } else {
      res.result(http::status::not_found);
      std::snprintf(body, sizeof body, "{\"error\":\"no such path\"}");
    }
  } catch (const std::exception& e) {
    res.result(http::status::internal_server_error);
    std::snprintf(body, sizeof body, "{\"error\":\"%s\"}", e.what());
  }
  res.body() = body;
  co_return res;
}

asio::awaitable<void> session(tcp::socket socket, rates::RateService& svc) {
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  try {
    for (;;) {
      http::request<http::string_body> req;
      co_await http::async_read(stream, buffer, req, asio::use_awaitable);
      const std::string target(req.target());
      http::response<http::string_body> res = co_await handle(svc, target);
      res.keep_alive(req.keep_alive());
      res.prepare_payload();
      co_await http::async_write(stream, res, asio::use_awaitable);
      if (!res.keep_alive()) break;
    }
  } catch (const std::exception&) {
    // The client went away.
  }
  beast::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
}

asio::awaitable<void> listen(tcp::acceptor& acceptor, rates::RateService& svc) {
  for (;;) {
    tcp::socket socket = co_await acceptor.async_accept(asio::use_awaitable);
    auto served = session(std::move(socket), svc);
    asio::co_spawn(acceptor.get_executor(), std::move(served), asio::detached);
  }
}

}  // namespace

int main(int argc, char** argv) {
  weave::configure();  // WEAVE_URL and the other WEAVE_* variables; mem:// by default
  weave::Woven<rates::RateService> svc;
  asio::io_context io;
  tcp::acceptor acceptor(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"),
                                           static_cast<unsigned short>(argc > 1 ? std::atoi(argv[1]) : 0)));
  std::printf("listening on 127.0.0.1:%u\n", acceptor.local_endpoint().port());
  std::fflush(stdout);
  asio::co_spawn(io, listen(acceptor, svc), asio::detached);
  asio::signal_set stop(io, SIGINT, SIGTERM);
  stop.async_wait([&](beast::error_code, int) { io.stop(); });
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) threads.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : threads) t.join();
  return 0;
}
