// A feature suite on a redis-server that speaks TLS only (no plain port), reached through a
// local TLS tunnel, stunnel4 in client mode, that verifies the server's
// certificate: Debian's hiredis 0.14 has no TLS, and this is the supported
// way to reach a TLS-only Redis (docs/operations.md, "TLS"). The certificate
// is made here (openssl, self-signed for 127.0.0.1); Weave's URL is the
// tunnel's plain loopback port.
#include "store_under_test.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "redis_server.h"

namespace tls_test {
namespace {

class TlsRedis {
 public:
  TlsRedis() {
    dir_ = std::filesystem::temp_directory_path() / ("weave-tls-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const std::string cert = (dir_ / "cert.pem").string(), key = (dir_ / "key.pem").string();
    redis_test::Child make_cert({"/usr/bin/openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                                 "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", key,
                                 "-out", cert});
    make_cert.lines_until_eof();
    if (make_cert.wait() != 0) throw std::runtime_error("openssl could not make the test certificate");

    const int tls_port = redis_test::free_port();
    redis_ = std::make_unique<redis_test::Child>(std::vector<std::string>{
        "/usr/bin/redis-server", "--port", "0", "--tls-port", std::to_string(tls_port), "--bind", "127.0.0.1",
        "--tls-cert-file", cert, "--tls-key-file", key, "--tls-ca-cert-file", cert, "--tls-auth-clients", "no",
        "--save", "", "--appendonly", "no", "--loglevel", "warning"});
    port_ = redis_test::free_port();
    const std::string conf = (dir_ / "stunnel.conf").string();
    std::ofstream(conf) << "foreground = yes\npid =\n[redis]\nclient = yes\naccept = 127.0.0.1:" << port_
                        << "\nconnect = 127.0.0.1:" << tls_port << "\nCAfile = " << cert
                        << "\nverifyChain = yes\ncheckIP = 127.0.0.1\n";
    stunnel_ = std::make_unique<redis_test::Child>(std::vector<std::string>{"/usr/bin/stunnel4", conf});
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (;;) {
      try {
        if (redis_test::Raw(port_).cmd({"PING"}).str == "PONG") break;
      } catch (const std::exception&) {
      }
      if (std::chrono::steady_clock::now() > deadline)
        throw std::runtime_error("the TLS tunnel to redis-server did not answer PING in 20 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~TlsRedis() {
    stunnel_.reset();
    redis_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<redis_test::Child> redis_, stunnel_;
  int port_ = 0;
};

}  // namespace
}  // namespace tls_test

std::string test_store_url() {
  static tls_test::TlsRedis server;
  return server.url();
}

std::string test_admin_url() { return test_store_url(); }
