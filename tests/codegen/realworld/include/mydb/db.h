// mydb/db.h — a persistent ordered map from keys to values, in the shape of
// the leveldb / rocksdb public API, with its writers annotated for Weave.
//
// Writers of one key are serialised by a lock on "mydb:<key>"; destroying or
// repairing a database takes "db:<name>" for as long as it runs.
//
// The export macro stands between the annotation and the declaration, in
// both orders; the namespace is named by a macro (mydb/export.h).
#ifndef MYDB_INCLUDE_DB_H_
#define MYDB_INCLUDE_DB_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "mydb/export.h"
#include "mydb/status.h"

namespace MYDB_NAMESPACE {

struct MYLIB_EXPORT Options {
  bool create_if_missing = false;
  bool error_if_exists = false;
  std::size_t write_buffer_size = 4 << 20;
};

struct MYLIB_EXPORT ReadOptions {
  bool verify_checksums = false;
  bool fill_cache = true;
};

struct MYLIB_EXPORT WriteOptions {
  bool sync = false;
};

// A DB is safe for concurrent access from multiple threads.
class MYLIB_EXPORT DB {
 public:
  explicit DB(std::string name) : name_(std::move(name)) {}
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  virtual ~DB();

  const std::string& name() const { return name_; }

  // Sets the database entry for "key" to "value".
  [[lock(key="mydb:<key.ToString()>", wait=1s)]]
  virtual Status Put(const WriteOptions& options, const Slice& key, const Slice& value);

  // Removes the database entry (if any) for "key". It is not an error if
  // "key" did not exist.
  [[lock(key="mydb:<key.ToString()>", wait=1s)]]
  virtual Status Delete(const WriteOptions& options, const Slice& key);

  // Reads take no lock.
  virtual Status Get(const ReadOptions& options, const Slice& key, std::string* value);

  // Compacts the key range [*begin, *end]; nullptr means open-ended.
  [[lock(key="compact:<this.name()>", ttl=2min)]]
  virtual void CompactRange(const Slice* begin, const Slice* end);

  // Called by background work when it fails; the first error sticks and
  // later writes return it.
  [[audit(event="db.background_error", subject="<s.ToString()>", level=warn)]]
  [[lock(key="bgerror:<s.ToString()>")]]
  virtual void RecordBackgroundError(const Status& s);

  // "mydb.num-entries", "mydb.approximate-memory-usage"; false if unknown.
  bool GetProperty(const Slice& property, std::string* value);

 private:
  const std::string name_;
  std::mutex mutex_;
  std::map<std::string, std::string> table_;
  Status bg_error_;
};

// Destroys the contents of the named database. Be very careful using this.
[[lock(key="db:<name>", wait=5s)]] MYLIB_EXPORT Status DestroyDB(const std::string& name,
                                                                const Options& options);

// Salvages as much data as possible from a corrupted database.
MYLIB_EXPORT [[lock(key="db:<name>", wait=5s)]] Status RepairDB(const std::string& name,
                                                               const Options& options);

// The export macro between two annotations.
[[audit(event="db.open", subject="<name>")]] MYLIB_EXPORT [[lock(key="db:<name>")]]
Status CheckDBName(const std::string& name, const Options& options);

}  // namespace MYDB_NAMESPACE

#endif  // MYDB_INCLUDE_DB_H_
