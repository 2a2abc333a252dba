// The real (un-woven) implementation of mydb/db.h: an in-memory table.
#include "mydb/db.h"

#include <string>

#include "realworld/probe.h"

namespace MYDB_NAMESPACE {

std::string Status::ToString(bool verbose) const {
  const char* name = "OK";
  switch (code_) {
    case Code::kOk: return "OK";
    case Code::kNotFound: name = "NotFound"; break;
    case Code::kCorruption: name = "Corruption"; break;
    case Code::kInvalidArgument: name = "Invalid argument"; break;
    case Code::kIOError: name = "IO error"; break;
  }
  std::string out(name);
  if (verbose) out += " (" + std::to_string(static_cast<int>(code_)) + ")";
  return out + ": " + msg_;
}

DB::~DB() = default;

Status DB::Put(const WriteOptions&, const Slice& key, const Slice& value) {
  realworld::Probe::note("DB::Put " + key.ToString());
  std::lock_guard<std::mutex> guard(mutex_);
  if (!bg_error_.ok()) return bg_error_;
  table_[key.ToString()] = value.ToString();
  return Status::OK();
}

Status DB::Delete(const WriteOptions&, const Slice& key) {
  realworld::Probe::note("DB::Delete " + key.ToString());
  std::lock_guard<std::mutex> guard(mutex_);
  if (!bg_error_.ok()) return bg_error_;
  table_.erase(key.ToString());
  return Status::OK();
}

Status DB::Get(const ReadOptions&, const Slice& key, std::string* value) {
  realworld::Probe::note("DB::Get " + key.ToString());
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = table_.find(key.ToString());
  if (it == table_.end()) return Status::NotFound(key.ToString());
  *value = it->second;
  return Status::OK();
}

void DB::CompactRange(const Slice* begin, const Slice* end) {
  realworld::Probe::note(std::string("DB::CompactRange ") + (begin ? begin->ToString() : "*") + ".." +
                         (end ? end->ToString() : "*"));
}

void DB::RecordBackgroundError(const Status& s) {
  realworld::Probe::note("DB::RecordBackgroundError");
  std::lock_guard<std::mutex> guard(mutex_);
  if (bg_error_.ok()) bg_error_ = s;
}

bool DB::GetProperty(const Slice& property, std::string* value) {
  std::lock_guard<std::mutex> guard(mutex_);
  if (property.ToString() == "mydb.num-entries") {
    *value = std::to_string(table_.size());
    return true;
  }
  return false;
}

Status DestroyDB(const std::string& name, const Options&) {
  realworld::Probe::note("DestroyDB " + name);
  if (name.empty()) return Status::InvalidArgument("empty database name");
  return Status::OK();
}

Status RepairDB(const std::string& name, const Options&) {
  realworld::Probe::note("RepairDB " + name);
  return Status::OK();
}

Status CheckDBName(const std::string& name, const Options& options) {
  realworld::Probe::note("CheckDBName " + name);
  if (name.find('/') != std::string::npos && !options.create_if_missing) {
    return Status::InvalidArgument("nested name needs create_if_missing: " + name);
  }
  return Status::OK();
}

}  // namespace MYDB_NAMESPACE
