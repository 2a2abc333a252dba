// The real (un-woven) implementation of plat/file_cache.h (no real I/O: the
// "file" contents are made from the path).
#include "plat/file_cache.h"

#include <stdexcept>
#include <string>

#include "realworld/probe.h"

namespace plat {

std::string FileCache::Read(const std::string& path) {
  realworld::Probe::note("FileCache::Read " + path);
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = files_.find(path);
  if (it == files_.end()) it = files_.emplace(path, "contents of " + Resolve(path)).first;
  return it->second;
}

long FileCache::Stat(const std::string& path) {
  realworld::Probe::note("FileCache::Stat " + path);
  return static_cast<long>(path.size());
}

auto FileCache::length(const std::string& id) -> decltype(id.size()) {
  realworld::Probe::note("FileCache::length " + id);
  std::lock_guard<std::mutex> guard(mutex_);
  auto it = files_.find(id);
  return it == files_.end() ? 0 : it->second.size();
}

void FileCache::Sync(const std::string& path) noexcept(false) {
  realworld::Probe::note("FileCache::Sync " + path);
  if (path.empty()) throw std::invalid_argument("FileCache::Sync: empty path");
}

void FileCache::EvictAll() noexcept {
  realworld::Probe::note("FileCache::EvictAll");
  std::lock_guard<std::mutex> guard(mutex_);
  files_.clear();
}

std::size_t FileCache::size() const {
  std::lock_guard<std::mutex> guard(mutex_);
  return files_.size();
}

}  // namespace plat
