// The real-world corpus: headers written in the style of widely
// used libraries, woven by weavegen at build time (see CMakeLists.txt), called
// through their proxies with the built-in lock interceptor on mem://.
//
// The implementations record the keys of the lease their call holds
// (realworld::Probe), so every check below proves both that the chain ran and
// which key it rendered; the `audit` annotation (tests/codegen/vocab) is
// counted by an interceptor registered here.
#include <catch2/catch.hpp>

#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "admin_handlers.weave.h"
#include "db.weave.h"
#include "file_cache.weave.h"
#include "quota_tracker.weave.h"
#include "rocks_db.weave.h"
#include "string_builder.weave.h"
#include "user_service.grpc.pb.weave.h"
#include "user_service_impls.h"

#include "realworld/probe.h"
#include "weave/error.h"
#include "weave/interceptor.h"
#include "weave/lock.h"

namespace {

using realworld::Probe;
using Lines = std::vector<std::string>;

// Registers `audit` (records "<event> <subject> [<method>]"), uses the
// embedded lock backend, and starts each test with an empty probe.
struct Fixture {
  std::mutex mutex;
  Lines audits;

  Fixture() {
    weave::configure_locks(weave::LockOptions{});  // mem://, whatever the environment says
    weave::InterceptorRegistry::global().add("audit", [this](weave::Invocation& inv) {
      const weave::Annotation& a = inv.annotation();
      // Appended piece by piece: g++ 12 at -O3 (Release) reports a false -Wrestrict
      // inside libstdc++ for `" " + std::string(...)` (GCC PR 105329), and
      // this target builds with -Werror.
      std::string line(a.text("event"));
      if (a.has("subject")) {
        line += ' ';
        line += a.text("subject");
      }
      line += " [";
      line += inv.method();
      line += ']';
      {
        std::lock_guard<std::mutex> guard(mutex);
        audits.push_back(std::move(line));
      }
      inv.proceed();
    });
    Probe::take();
  }
  ~Fixture() { weave::InterceptorRegistry::global().remove("audit"); }

  Lines take_audits() {
    std::lock_guard<std::mutex> guard(mutex);
    Lines out;
    out.swap(audits);
    return out;
  }
};

// Holds `key` on the calling thread's behalf (outside any woven call), so a
// woven call made on another thread finds it busy.
weave::LeaseHandle hold(const std::string& key) { return weave::default_lock_client().acquire(key); }

}  // namespace

// --- 1. leveldb/rocksdb-style DB ---------------------------------------------

TEST_CASE("realworld mydb: writers lock mydb:<key> behind the export macro and the macro namespace",
          "[codegen][realworld]") {
  Fixture f;
  STATIC_REQUIRE(std::is_base_of_v<mydb::DB, weave::Woven<mydb::DB>>);
  weave::Woven<mydb::DB> woven("orders-db");  // DB's constructor
  mydb::DB& db = woven;                       // callers keep using DB&

  CHECK(db.Put(mydb::WriteOptions(), "user:42", "alice").ok());
  std::string value;
  CHECK(db.Get(mydb::ReadOptions(), "user:42", &value).ok());
  CHECK(value == "alice");
  CHECK(db.Delete(mydb::WriteOptions(), mydb::Slice("user:42")).ok());
  CHECK(db.Get(mydb::ReadOptions(), "user:42", &value).IsNotFound());
  // (A value's ':' is %-encoded in the key: weave/key.h.)
  CHECK(Probe::take() == Lines{"DB::Put user:42 @ mydb:user%3A42", "DB::Get user:42 @ -",
                               "DB::Delete user:42 @ mydb:user%3A42", "DB::Get user:42 @ -"});

  // `this.` in a key: the database's own name.
  mydb::Slice begin("a");
  db.CompactRange(&begin, nullptr);
  CHECK(Probe::take() == Lines{"DB::CompactRange a..* @ compact:orders-db"});

  // <s.ToString()>: a call of a method whose only parameter has a default.
  db.RecordBackgroundError(mydb::Status::IOError("disk full"));
  CHECK(Probe::take() == Lines{"DB::RecordBackgroundError @ bgerror:IO error%3A disk full"});
  CHECK(f.take_audits() == Lines{"db.background_error IO error: disk full [mydb::DB::RecordBackgroundError]"});
  CHECK(db.Put(mydb::WriteOptions(), "k", "v").IsIOError());  // the error stuck
  Probe::take();
}

TEST_CASE("realworld mydb: free functions with the export macro before, after and between annotations",
          "[codegen][realworld]") {
  Fixture f;
  mydb::Options options;
  CHECK(mydb::woven::DestroyDB("orders-db", options).ok());  // [[lock]] MYLIB_EXPORT Status ...
  CHECK(mydb::woven::RepairDB("orders-db", options).ok());   // MYLIB_EXPORT [[lock]] Status ...
  CHECK_FALSE(mydb::woven::CheckDBName("a/b", options).ok());
  CHECK(Probe::take() == Lines{"DestroyDB orders-db @ db:orders-db", "RepairDB orders-db @ db:orders-db",
                               "CheckDBName a/b @ db:a%2Fb"});
  CHECK(f.take_audits() == Lines{"db.open a/b [mydb::CheckDBName]"});
  // The originals stay callable, un-woven.
  CHECK(mydb::DestroyDB("plain", options).ok());
  CHECK(Probe::take() == Lines{"DestroyDB plain @ -"});
}

// --- 1b. rocksdb-style interface, opened by a static factory --------------------

TEST_CASE("realworld myrocks: the interface's static DB::Open is woven as weave::Decorated<DB>::Open",
          "[codegen][realworld]") {
  Fixture f;
  using WovenDB = weave::Decorated<myrocks::DB>;
  myrocks::Options options;
  options.create_if_missing = true;

  // The woven factory holds open:<name> while it runs; what it returns is
  // decorated like any implementation.
  myrocks::DB* raw = nullptr;
  REQUIRE(WovenDB::Open(options, "rocks-1", &raw).ok());
  REQUIRE(raw != nullptr);
  std::shared_ptr<myrocks::DB> db = weave::decorate<myrocks::DB>(std::unique_ptr<myrocks::DB>(raw));
  CHECK(db->GetName() == "rocks-1");
  CHECK(db->Put(myrocks::WriteOptions(), "k", "v").ok());
  std::string value;
  CHECK(db->Get(myrocks::ReadOptions(), "k", &value).ok());
  CHECK(value == "v");
  CHECK(db->Delete(myrocks::WriteOptions(), "k").ok());
  CHECK(Probe::take() == Lines{"DB::Open rocks-1 @ open:rocks-1", "DBImpl::Put k @ rocks:k", "DBImpl::Get k @ -",
                               "DBImpl::Delete k @ rocks:k"});

  // The static's result is the original's, failures included.
  options.create_if_missing = false;
  CHECK(WovenDB::Open(options, "rocks-missing", &raw).code() == mydb::Status::Code::kInvalidArgument);
  CHECK(raw == nullptr);
  CHECK(Probe::take() == Lines{"DB::Open rocks-missing @ open:rocks-missing"});

  // The original stays callable, un-woven; the unannotated overload stays
  // visible on the decorator's type.
  myrocks::DB* plain = nullptr;
  REQUIRE(myrocks::DB::Open(options, "rocks-1", &plain).ok());
  delete plain;
  REQUIRE(WovenDB::Open(options, "rocks-1", {"default", "meta"}, &plain).ok());
  delete plain;
  CHECK(Probe::take() == Lines{"DB::Open rocks-1 @ -", "DB::Open rocks-1 [default,meta] @ -"});
}

TEST_CASE("realworld myrocks: a held open:<name> makes the woven DB::Open throw LockBusy without opening",
          "[codegen][realworld]") {
  Fixture f;
  weave::LeaseHandle held = hold("open:rocks-busy");
  auto call = std::async(std::launch::async, [] {
    myrocks::Options options;
    options.create_if_missing = true;
    myrocks::DB* raw = nullptr;
    return weave::Decorated<myrocks::DB>::Open(options, "rocks-busy", &raw);
  });
  CHECK_THROWS_AS(call.get(), weave::LockBusy);
  CHECK(Probe::take().empty());  // DB::Open never ran
  held.release();
}

// --- 2. abseil-style component -------------------------------------------------

TEST_CASE("realworld myabsl: keys read the object (this.region_, this.tenant()) in an inline namespace",
          "[codegen][realworld]") {
  Fixture f;
  STATIC_REQUIRE(std::is_same_v<weave::Woven<myabsl::QuotaTracker>, weave::Woven<myabsl::lts_20240722::QuotaTracker>>);
  weave::Woven<myabsl::QuotaTracker> eu("eu-1", "tenant-7", 100);
  weave::Woven<myabsl::QuotaTracker> us("us-2", "tenant-9", 10);
  myabsl::QuotaTracker& quota = eu;

  CHECK(quota.TryCharge(50));
  CHECK(quota.TryCharge(40));  // crosses 80%: OnNearLimit, a protected virtual self-call, is audited
  CHECK_FALSE(quota.TryCharge(20));
  CHECK(quota.Remaining() == 10);
  CHECK(Probe::take() == Lines{"QuotaTracker::TryCharge 50 @ region:eu-1:tenant-7",
                               "QuotaTracker::TryCharge 40 @ region:eu-1:tenant-7",
                               "QuotaTracker::OnNearLimit 90 @ region:eu-1:tenant-7",
                               "QuotaTracker::TryCharge 20 @ region:eu-1:tenant-7"});
  CHECK(f.take_audits() == Lines{"quota.near_limit tenant-7 [myabsl::QuotaTracker::OnNearLimit]"});

  quota.ResetWindow();
  eu.RaiseLimit("ops", 50);  // not virtual: woven through the proxy type
  static_cast<myabsl::QuotaTracker&>(us).ResetWindow();
  CHECK(Probe::take() == Lines{"QuotaTracker::ResetWindow @ region:eu-1:tenant-7",
                               "QuotaTracker::RaiseLimit ops @ limit:eu-1:tenant-7:ops",
                               "QuotaTracker::ResetWindow @ region:us-2:tenant-9"});
  CHECK(f.take_audits() == Lines{"quota.reset tenant-7@eu-1 [myabsl::QuotaTracker::ResetWindow]",
                                 "quota.reset tenant-9@us-2 [myabsl::QuotaTracker::ResetWindow]"});
  CHECK(quota.Remaining() == 150);
}

// --- 3. platform blocks ---------------------------------------------------------

TEST_CASE("realworld plat: the active #if branch chooses the annotation, inactive blocks are ignored",
          "[codegen][realworld]") {
  Fixture f;
#if defined(_WIN32)
  const std::string read_key = "win:hosts";
#elif defined(__linux__)
  const std::string read_key = "linux:hosts";
#else
  const std::string read_key = "posix:hosts";
#endif
  weave::Woven<plat::FileCache> woven("/srv");
  plat::FileCache& cache = woven;
  CHECK(cache.Read("hosts") == "contents of /srv/hosts");
  CHECK(cache.Stat("hosts") == 5);  // the #if 0 annotation does not apply
  CHECK(Probe::take() == Lines{"FileCache::Read hosts @ " + read_key, "FileCache::Stat hosts @ -"});

  // A trailing return type naming the parameter.
  STATIC_REQUIRE(std::is_same_v<decltype(woven.length(std::string())), std::string::size_type>);
  CHECK(cache.length("hosts") == std::string("contents of /srv/hosts").size());
  CHECK(Probe::take() == Lines{"FileCache::length hosts @ len:hosts"});

  // noexcept(false) stays a throwing method; noexcept stays noexcept.
  STATIC_REQUIRE_FALSE(noexcept(woven.Sync(std::string())));
  STATIC_REQUIRE(noexcept(woven.EvictAll()));
  CHECK_THROWS_AS(cache.Sync(""), std::invalid_argument);
  cache.Sync("hosts");
  cache.EvictAll();
  CHECK(cache.size() == 0);
  CHECK(Probe::take() == Lines{"FileCache::Sync  @ sync:", "FileCache::Sync hosts @ sync:hosts",
                               "FileCache::EvictAll @ evict-all"});
}

// --- 4. overload set ------------------------------------------------------------

TEST_CASE("realworld mystrings: a large overload set, annotated and not, const and non-const",
          "[codegen][realworld]") {
  Fixture f;
  weave::Woven<mystrings::StringBuilder> sb("req-1");
  sb.Append(std::string("s"));
  sb.Append(std::string_view("v"));
  sb.Append("c");
  sb.Append('x', std::size_t{2});  // ('x', 2) would be ambiguous with Append(int, int)
  sb.Append('y');  // defaulted count
  sb.Append(255, 16);
  sb.Append(7);  // defaulted base
  sb.Append(8L);
  sb.Append(9ULL);
  sb.Append(0.5, 1);
  sb.Append(true);
  CHECK(sb.str() == "svcxxyff7890.5true");
  CHECK(Probe::take() == Lines{"Append(string) s @ sb:req-1",
                               "Append(string_view) @ -",
                               "Append(const char*) @ -",
                               "Append(char) x2 @ sb:req-1:char:120",  // a char formats as an integer (weave/key.h)
                               "Append(char) x1 @ sb:req-1:char:121",
                               "Append(int) @ -",
                               "Append(int) @ -",
                               "Append(long) @ -",
                               "Append(unsigned long long) @ -",
                               "Append(double) @ mystrings::StringBuilder::Append(double, int)",
                               "Append(bool) @ -"});
  CHECK(f.take_audits() == Lines{"append.int 255/16 [mystrings::StringBuilder::Append]",
                                 "append.int 7/10 [mystrings::StringBuilder::Append]"});

  std::string out, in = "!";
  const weave::Woven<mystrings::StringBuilder>& csb = sb;
  const std::size_t exported = csb.Append(&out);  // const overload
  CHECK(exported == out.size());
  CHECK(sb.Append(&in) == 1);  // non-const overload
  CHECK(in.empty());
  sb.Clear();
  CHECK(Probe::take() == Lines{"Append(string*) const @ sb:req-1:export", "Append(string*) @ sb:req-1:import",
                               "Clear @ sb:req-1"});

  std::string dest = "ab";
  mystrings::woven::StrAppend(&dest, "c");
  mystrings::StrAppend(&dest, "d", "e");
  mystrings::woven::StrAppend(&dest, "f", "g", "h");
  CHECK(dest == "abcdefgh");
  CHECK(Probe::take() == Lines{"StrAppend/1 @ str:2", "StrAppend/2 @ -", "StrAppend/3 @ str:5:f|g|h"});
}

// --- 5. gRPC-style interface, decorated -------------------------------------------

namespace {

using users::v1::UserService;

// The same conversation against any decorated implementation.
void converse(UserService& svc, const std::string& impl) {
  minigrpc::ServerContext ctx("ipv4:10.0.0.7:52011");
  users::v1::UpdateUserRequest update;
  update.mutable_user()->set_id("42");
  update.mutable_user()->set_display_name("Ada");
  users::v1::User updated;
  REQUIRE(svc.UpdateUser(&ctx, &update, &updated).ok());
  CHECK(updated.display_name() == "Ada");

  users::v1::GetUserRequest get;
  get.set_id("42");
  users::v1::GetUserResponse got;
  REQUIRE(svc.GetUser(&ctx, &get, &got).ok());
  CHECK(got.user().display_name() == "Ada");
  CHECK(got.user().served_by() == updated.served_by());

  users::v1::ListUsersRequest list;
  users::v1::ListUsersResponse listed;
  REQUIRE(svc.ListUsers(&ctx, &list, &listed).ok());
  CHECK(listed.users().size() == 1);

  users::v1::DeleteUserRequest del;
  del.set_id("42");
  del.set_tenant("t-1");
  users::v1::Empty empty;
  REQUIRE(svc.DeleteUser(&ctx, &del, &empty).ok());
  CHECK(svc.GetUser(&ctx, &get, &got).error_code() == minigrpc::StatusCode::NOT_FOUND);

  CHECK(Probe::take() == Lines{impl + ".UpdateUser 42 @ user:42", impl + ".GetUser 42 @ user:42",
                               impl + ".ListUsers @ -", impl + ".DeleteUser 42 @ tenant:t-1,user:42",
                               impl + ".GetUser 42 @ user:42"});
}

}  // namespace

TEST_CASE("realworld users: weave::decorate serves an interface of pure virtual methods, two implementations",
          "[codegen][realworld]") {
  Fixture f;
  STATIC_REQUIRE(std::is_same_v<decltype(weave::decorate<UserService>(std::make_shared<users::v1::InMemoryUserService>())),
                                std::shared_ptr<UserService>>);

  SECTION("from a shared_ptr: InMemoryUserService") {
    auto impl = std::make_shared<users::v1::InMemoryUserService>();
    std::shared_ptr<UserService> svc = weave::decorate<UserService>(impl);
    REQUIRE(svc != nullptr);
    CHECK(svc.get() != impl.get());
    converse(*svc, "memory");
    CHECK(f.take_audits() == Lines{"users.update ipv4:10.0.0.7:52011 [users::v1::UserService::UpdateUser]"});
  }
  SECTION("from a unique_ptr: ShardedUserService") {
    std::shared_ptr<UserService> svc =
        weave::decorate<UserService>(std::make_unique<users::v1::ShardedUserService>(4));
    converse(*svc, "sharded");
    CHECK(f.take_audits() == Lines{"users.update ipv4:10.0.0.7:52011 [users::v1::UserService::UpdateUser]"});
  }
  SECTION("from a reference: the caller keeps the implementation, and its state") {
    users::v1::InMemoryUserService impl;
    std::shared_ptr<UserService> svc = weave::decorate<UserService>(impl);  // I&
    minigrpc::ServerContext ctx;
    users::v1::UpdateUserRequest update;
    update.mutable_user()->set_id("7");
    users::v1::User out;
    REQUIRE(svc->UpdateUser(&ctx, &update, &out).ok());
    users::v1::GetUserRequest get;
    get.set_id("7");
    users::v1::GetUserResponse got;
    REQUIRE(impl.GetUser(&ctx, &get, &got).ok());  // straight to the implementation: no lock
    CHECK(Probe::take() == Lines{"memory.UpdateUser 7 @ user:7", "memory.GetUser 7 @ -"});
  }
}

TEST_CASE("realworld users: the decorator's lock really excludes (busy user:<id> throws LockBusy)",
          "[codegen][realworld]") {
  Fixture f;
  std::shared_ptr<UserService> svc = weave::decorate<UserService>(std::make_shared<users::v1::InMemoryUserService>());
  weave::LeaseHandle held = hold("user:99");
  auto call = std::async(std::launch::async, [&] {
    minigrpc::ServerContext ctx;
    users::v1::GetUserRequest get;
    get.set_id("99");
    users::v1::GetUserResponse got;
    return svc->GetUser(&ctx, &get, &got);
  });
  CHECK_THROWS_AS(call.get(), weave::LockBusy);
  CHECK(Probe::take().empty());  // the implementation never ran
  held.release();
}

// --- 6. macro-declared handlers --------------------------------------------------

TEST_CASE("realworld handlers: annotations in front of a declaration produced by a macro",
          "[codegen][realworld]") {
  Fixture f;
  weave::Woven<handlers::AdminHandlers> woven;
  handlers::AdminHandlers& h = woven;
  CHECK(h.put_user("u1") == 201);
  CHECK(h.get_user("u1") == 200);
  CHECK(h.ping("x") == 200);
  CHECK(h.drop_user("u1") == 204);
  CHECK(Probe::take() == Lines{"put_user u1 @ h:u1", "get_user u1 @ h:u1", "ping x @ -", "drop_user u1 @ h:u1"});
  CHECK(f.take_audits() == Lines{"admin.drop_user u1 [handlers::AdminHandlers::drop_user]"});

  // Busy: the fallback answers instead of the handler.
  weave::LeaseHandle held = hold("h:u2");
  CHECK(std::async(std::launch::async, [&] { return h.drop_user("u2"); }).get() == 503);
  held.release();
  CHECK(Probe::take() == Lines{"busy u2 @ -"});
  CHECK(f.take_audits() == Lines{"admin.drop_user u2 [handlers::AdminHandlers::drop_user]"});
}
