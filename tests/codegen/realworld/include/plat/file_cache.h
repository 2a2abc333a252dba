// plat/file_cache.h — a read-through cache of small files, with the
// platform #if blocks a portable library accumulates. Only the annotations
// of the branch the compiler takes count: on Linux a read locks
// "linux:<path>", elsewhere a different key; the annotations in inactive
// blocks (#ifdef _WIN32, #if 0) name things that do not exist here and must
// be ignored.
#ifndef PLAT_FILE_CACHE_H_
#define PLAT_FILE_CACHE_H_

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#if defined(_WIN32)
#define PLAT_PATH_SEP '\\'
#else
#define PLAT_PATH_SEP '/'
#endif

namespace plat {

class FileCache {
 public:
  explicit FileCache(std::string root) : root_(std::move(root)) {}
  virtual ~FileCache() = default;

  // The contents of `path` (relative to the root), loaded on first use.
#if defined(_WIN32)
  [[lock(key="win:<path>", wait=2s)]]
#elif defined(__linux__)
  [[lock(key="linux:<path>", wait=1s)]]
#else
  [[lock(key="posix:<path>")]] [[audit(event="file.read", subject="<path>")]]
#endif
  virtual std::string Read(const std::string& path);

#ifdef _WIN32
  // Windows keeps files open; the handle type does not exist elsewhere.
  [[lock(key="handle:<h>")]]
  virtual void CloseHandle(HANDLE h);
#endif

#if 0  // disabled until the new key scheme ships; `missing` is no parameter
  [[lock(key="stat:<missing>")]]
#endif
  virtual long Stat(const std::string& path);

  // The cached length of `id`: the return type names the parameter.
  [[lock(key="len:<id>", type=read)]]
  virtual auto length(const std::string& id) -> decltype(id.size());

  // Writes the cache back; may throw on I/O errors, and says so.
  [[lock(key="sync:<path>")]]
  virtual void Sync(const std::string& path) noexcept(false);

  // Drops every cached file; never throws.
  [[lock(key="evict-all", on_busy=skip)]]
  virtual void EvictAll() noexcept;

  std::size_t size() const;

 protected:
  std::string Resolve(const std::string& path) const { return root_ + PLAT_PATH_SEP + path; }

 private:
  const std::string root_;
  mutable std::mutex mutex_;
  std::map<std::string, std::string> files_;
};

}  // namespace plat

#endif  // PLAT_FILE_CACHE_H_
