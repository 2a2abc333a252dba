// The real (un-woven) implementation of myrocks/rocks_db.h: DBImpl, an
// in-memory table, made only by DB::Open.
#include "myrocks/rocks_db.h"

#include <cstddef>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "realworld/probe.h"

namespace myrocks {

namespace {

class DBImpl final : public DB {
 public:
  explicit DBImpl(std::string name) : name_(std::move(name)) {}

  Status Put(const WriteOptions&, const Slice& key, const Slice& value) override {
    realworld::Probe::note("DBImpl::Put " + key.ToString());
    std::lock_guard<std::mutex> guard(mutex_);
    table_[key.ToString()] = value.ToString();
    return Status::OK();
  }

  Status Delete(const WriteOptions&, const Slice& key) override {
    realworld::Probe::note("DBImpl::Delete " + key.ToString());
    std::lock_guard<std::mutex> guard(mutex_);
    table_.erase(key.ToString());
    return Status::OK();
  }

  Status Get(const ReadOptions&, const Slice& key, std::string* value) override {
    realworld::Probe::note("DBImpl::Get " + key.ToString());
    std::lock_guard<std::mutex> guard(mutex_);
    auto it = table_.find(key.ToString());
    if (it == table_.end()) return Status::NotFound(key.ToString());
    *value = it->second;
    return Status::OK();
  }

  const std::string& GetName() const override { return name_; }

 private:
  const std::string name_;
  std::mutex mutex_;
  std::map<std::string, std::string> table_;
};

// Makes the DB "name", or says why not. The databases created so far in
// this process stand for the files of a real store.
Status open_impl(const Options& options, const std::string& name, DB** dbptr) {
  static std::mutex mutex;
  static std::set<std::string> existing;
  *dbptr = nullptr;
  std::lock_guard<std::mutex> guard(mutex);
  const bool exists = existing.count(name) != 0;
  if (!exists && !options.create_if_missing) return Status::InvalidArgument(name + ": does not exist");
  if (exists && options.error_if_exists) return Status::InvalidArgument(name + ": exists");
  existing.insert(name);
  *dbptr = new DBImpl(name);
  return Status::OK();
}

}  // namespace

DB::~DB() = default;

Status DB::Open(const Options& options, const std::string& name, DB** dbptr) {
  realworld::Probe::note("DB::Open " + name);
  return open_impl(options, name, dbptr);
}

Status DB::Open(const Options& options, const std::string& name, const std::vector<std::string>& column_families,
                DB** dbptr) {
  std::string line = "DB::Open " + name + " [";
  for (std::size_t i = 0; i < column_families.size(); ++i) {
    if (i != 0) line += ',';
    line += column_families[i];
  }
  line += ']';
  realworld::Probe::note(line);
  return open_impl(options, name, dbptr);
}

}  // namespace myrocks
