// myrocks/rocks_db.h — an embedded key-value store in the shape of rocksdb's
// public API (and leveldb's before it): DB is an interface, and the way to
// get one is its static factory DB::Open, which hands back an implementation
// the caller never names (DBImpl lives in the library's sources).
//
// Opening "name" takes "open:<name>" without waiting, in the manner of
// leveldb's LOCK file: a second opener fails at once instead of sharing the
// files. Writers of one key are serialised by a lock on "rocks:<key>".
//
// weavegen gives an interface a decorator (weave::decorate<DB>), and weaves
// its annotated static methods on the decorator's type: the woven factory is
// weave::Decorated<DB>::Open.
#ifndef MYROCKS_INCLUDE_ROCKS_DB_H_
#define MYROCKS_INCLUDE_ROCKS_DB_H_

#include <string>
#include <vector>

#include "mydb/export.h"
#include "mydb/status.h"

namespace myrocks {

using mydb::Slice;
using mydb::Status;

struct MYLIB_EXPORT Options {
  bool create_if_missing = false;
  bool error_if_exists = false;
};

struct MYLIB_EXPORT ReadOptions {
  bool verify_checksums = false;
};

struct MYLIB_EXPORT WriteOptions {
  bool sync = false;
};

class MYLIB_EXPORT DB {
 public:
  // Opens the database "name". Stores a heap-allocated DB in *dbptr and
  // returns OK on success; stores nullptr and returns an error otherwise.
  // The caller deletes *dbptr when it is no longer needed.
  [[lock(key="open:<name>")]]
  static Status Open(const Options& options, const std::string& name, DB** dbptr);

  // Opens it with the named column families (not annotated: the original).
  static Status Open(const Options& options, const std::string& name,
                     const std::vector<std::string>& column_families, DB** dbptr);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB();

  [[lock(key="rocks:<key.ToString()>", wait=1s)]]
  virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value) = 0;

  [[lock(key="rocks:<key.ToString()>", wait=1s)]]
  virtual Status Delete(const WriteOptions& options, const Slice& key) = 0;

  // Reads take no lock.
  virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value) = 0;

  virtual const std::string& GetName() const = 0;
};

}  // namespace myrocks

#endif  // MYROCKS_INCLUDE_ROCKS_DB_H_
