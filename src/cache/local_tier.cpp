// The local tier: shards of W-TinyLFU (docs/cache.md, "The local tier").
//
// Each shard is a small cache of its own, behind its own mutex:
//   window     an LRU list of ~1% of the shard's capacity; every new key enters here
//   probation  the main space's entry segment (LRU)
//   protected  the main space's entries hit again while on probation (LRU, 80% of main)
// When the window overflows, its oldest entry (the candidate) moves to
// probation if the main space has room; otherwise it competes with the main
// space's victim (probation's oldest, or protected's oldest when probation is
// empty): TinyLFU keeps the one the frequency sketch says was requested more
// often, and drops the other. A hit on probation promotes to protected;
// protected's overflow is demoted back to probation's recent end.
//
// A hit takes no lock: it joins its stripe's readers (a counter on a cache
// line the thread shares with few others), checks that no writer is in,
// copies the entry and records the node in the stripe's read buffer. The
// policy's work for it (the sketch increment, the LRU move) is done by the
// next writer, which drains the buffers first, under the shard lock, once
// every reader has left (Caffeine's read buffer). A full buffer is drained by
// the reader that filled it if the lock is free; otherwise further records
// are dropped until the drain (the policy then misses a few hits, not a
// correctness matter). Every writer drains before it erases, so a recorded
// node is alive when it is drained.
//
// The hash of a key is computed once per call and used for the shard, the
// map (stored with the key, so the map never hashes a string again), the
// stamp bucket and the sketch.
#include "cache/local_tier.h"

#include "core/key_hash.h"
#include "core/striped.h"
#include "core/thread_annotations.h"
#include "weave/error.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>
#include <utility>

#include "cache/frequency_sketch.h"

namespace WEAVE_NAMESPACE::detail {
namespace {

constexpr std::size_t k_unbounded = std::numeric_limits<std::size_t>::max();
constexpr std::size_t k_min_shard_entries = 64;
constexpr std::size_t k_min_shard_bytes = 64 * 1024;
constexpr unsigned k_max_auto_shards = 64;
// TinyLFU: a candidate at least this frequent that does not beat its victim
// is still admitted once in 128 times, so that an attacker (or bad luck) that
// keeps a victim's count high with colliding keys cannot pin the main space.
constexpr unsigned k_random_admission_threshold = 6;

struct Link {
  Link* prev = this;
  Link* next = this;
};

enum class Queue : std::uint8_t { window, probation, protected_ };

struct Key {
  std::string text;
  std::uint64_t hash;
};
struct KeyRef {
  std::string_view text;
  std::uint64_t hash;
};
struct KeyHash {
  using is_transparent = void;
  std::size_t operator()(const Key& k) const noexcept { return k.hash; }
  std::size_t operator()(const KeyRef& k) const noexcept { return k.hash; }
};
struct KeyEq {
  using is_transparent = void;
  template <class A, class B>
  bool operator()(const A& a, const B& b) const noexcept {
    return a.hash == b.hash && std::string_view(a.text) == std::string_view(b.text);
  }
};

struct Node : Link {
  LocalEntry entry;
  std::uint64_t hash = 0;
  const Key* key = nullptr;  // the map's key of this node
  Queue queue = Queue::window;
};

// An intrusive circular LRU list: head.next is the least recently used.
struct List {
  Link head;
  std::size_t count = 0;
  std::size_t bytes = 0;

  List() = default;
  List(const List&) = delete;
  List& operator=(const List&) = delete;

  Node* lru() const noexcept { return head.next == &head ? nullptr : static_cast<Node*>(head.next); }
  void push_mru(Node* n) noexcept {
    n->prev = head.prev;
    n->next = &head;
    head.prev->next = n;
    head.prev = n;
    ++count;
    bytes += n->entry.weight;
  }
  void unlink(Node* n) noexcept {
    n->prev->next = n->next;
    n->next->prev = n->prev;
    --count;
    bytes -= n->entry.weight;
  }
  void move_to_mru(Node* n) noexcept {
    if (n->next == &head) return;  // already the most recent: no write
    unlink(n);
    push_mru(n);
  }
  void reset() noexcept {
    head.prev = head.next = &head;
    count = bytes = 0;
  }
};

// The shard lock: a critical section here is a few tens of nanoseconds, so a
// contended lock() first spins briefly (a std::mutex would sleep in the kernel
// at once, which costs microseconds and halved two-thread throughput), then
// waits on the futex behind std::atomic::wait. 0 free, 1 held, 2 held with
// sleepers (Drepper, "Futexes Are Tricky", mutex 2).
class WEAVE_CAPABILITY("mutex") ShardLock {
 public:
  void lock() noexcept WEAVE_ACQUIRE() {
    for (int spin = 0; spin < 128; ++spin) {
      std::uint32_t expected = 0;
      if (state_.load(std::memory_order_relaxed) == 0 &&
          state_.compare_exchange_weak(expected, 1, std::memory_order_acquire, std::memory_order_relaxed))
        return;
      pause();
    }
    while (state_.exchange(2, std::memory_order_acquire) != 0) state_.wait(2, std::memory_order_relaxed);
  }
  bool try_lock() noexcept WEAVE_TRY_ACQUIRE(true) {
    std::uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, 1, std::memory_order_acquire, std::memory_order_relaxed);
  }
  void unlock() noexcept WEAVE_RELEASE() {
    if (state_.exchange(0, std::memory_order_release) == 2) state_.notify_one();
  }
  static void pause() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }

 private:
  std::atomic<std::uint32_t> state_{0};
};

// Nonzero while this thread runs a visit() callback inside a read section:
// a tier call from there could wait for itself (a writer waits for the
// readers in to leave), so it throws instead.
thread_local int t_visiting = 0;

void refuse_inside_visit(const char* what) {
  if (t_visiting != 0)
    throw UsageError(std::string("cache: a value's copy, made while a local cache entry is read, called ") + what +
                     " on a local cache tier (a cached type's copy constructor must not use a cache)");
}

// 8 stripes: up to 8 threads hitting keys of one shard share no reader line.
constexpr unsigned k_read_stripes = 8;
constexpr std::uint32_t k_read_records = 32;  // a power of two

// One stripe of a shard's readers (threads by thread_slot()).
// Threads sharing a stripe may lose a record or a count of `used` to each
// other (a load and a store, not an atomic add: the policy misses a request,
// as Caffeine's lossy read buffer does). A drain runs with no reader in, so it
// never interleaves with a reader's update.
struct alignas(64) ReadStripe {
  std::atomic<std::uint32_t> readers{0};  // hits in progress
  std::atomic<std::uint32_t> used{0};     // hits since the last drain (recorded up to k_read_records)
  std::atomic<Node*> records[k_read_records] = {};
};

struct Limit {
  std::size_t entries = k_unbounded;
  std::size_t bytes = k_unbounded;
  bool exceeded(std::size_t n, std::size_t b) const noexcept { return n > entries || b > bytes; }
};

std::size_t fraction(std::size_t n, std::size_t num, std::size_t den) {
  return n == k_unbounded ? k_unbounded : n / den * num + n % den * num / den;
}

}  // namespace

struct alignas(64) LocalTier::Shard {
  ShardLock mu;  // between writers
  alignas(64) std::atomic<std::uint32_t> writing{0};  // 1: a writer holds mu and keeps readers out
  std::atomic<std::uint32_t> sleepers{0};             // readers asleep until writing is 0
  ReadStripe read[k_read_stripes];
  // Changed by a writer (mu held and the readers out: Writing), read by a
  // hit's read section without mu (read_hit).
  std::unordered_map<Key, Node, KeyHash, KeyEq> map;
  // The policy's state: writers only.
  List window WEAVE_GUARDED_BY(mu), probation WEAVE_GUARDED_BY(mu), protected_ WEAVE_GUARDED_BY(mu);
  Limit window_limit WEAVE_GUARDED_BY(mu), main_limit WEAVE_GUARDED_BY(mu), protected_limit WEAVE_GUARDED_BY(mu);
  FrequencySketch sketch WEAVE_GUARDED_BY(mu);
  std::uint64_t random WEAVE_GUARDED_BY(mu) = 0x2545f4914f6cdd1dULL;
  std::uint64_t hits WEAVE_GUARDED_BY(mu) = 0, misses WEAVE_GUARDED_BY(mu) = 0, evictions WEAVE_GUARDED_BY(mu) = 0,
                rejected_stale WEAVE_GUARDED_BY(mu) = 0, rejected_admission WEAVE_GUARDED_BY(mu) = 0,
                expirations WEAVE_GUARDED_BY(mu) = 0;
  // put() asks whether the entry it just installed survived its own evict().
  const Node* watched WEAVE_GUARDED_BY(mu) = nullptr;
  bool watched_dropped WEAVE_GUARDED_BY(mu) = false;

  // Before the tier is shared (its constructor): no lock yet.
  void configure(std::size_t entries, std::size_t bytes, std::uint64_t seed) WEAVE_NO_THREAD_SAFETY_ANALYSIS {
    auto window_share = [](std::size_t n) { return n == k_unbounded ? n : std::max<std::size_t>(1, n / 100); };
    window_limit = {window_share(entries), window_share(bytes)};
    main_limit = {entries == k_unbounded ? entries : entries - window_limit.entries,
                  bytes == k_unbounded ? bytes : bytes - window_limit.bytes};
    protected_limit = {fraction(main_limit.entries, 8, 10), fraction(main_limit.bytes, 8, 10)};
    sketch = FrequencySketch(entries == k_unbounded ? 64 : entries);
    random ^= mix64(seed);
  }

  List& list(Queue q) noexcept WEAVE_REQUIRES(mu) {
    switch (q) {
      case Queue::window: return window;
      case Queue::probation: return probation;
      default: return protected_;
    }
  }
  std::size_t main_count() const noexcept WEAVE_REQUIRES(mu) { return probation.count + protected_.count; }
  std::size_t main_bytes() const noexcept WEAVE_REQUIRES(mu) { return probation.bytes + protected_.bytes; }
  std::size_t bytes() const noexcept WEAVE_REQUIRES(mu) { return window.bytes + main_bytes(); }

  // Drops a node that is in no list any more.
  void erase(Node* n) WEAVE_REQUIRES(mu) {
    if (n == watched) watched_dropped = true;
    map.erase(map.find(KeyRef{n->key->text, n->hash}));
  }
  void remove(Node* n) WEAVE_REQUIRES(mu) {
    list(n->queue).unlink(n);
    erase(n);
  }

  void on_access(Node* n) noexcept WEAVE_REQUIRES(mu) {
    switch (n->queue) {
      case Queue::window: window.move_to_mru(n); break;
      case Queue::protected_: protected_.move_to_mru(n); break;
      case Queue::probation:
        probation.unlink(n);
        n->queue = Queue::protected_;
        protected_.push_mru(n);
        while (protected_limit.exceeded(protected_.count, protected_.bytes)) {
          Node* d = protected_.lru();
          protected_.unlink(d);
          d->queue = Queue::probation;
          probation.push_mru(d);
        }
        break;
    }
  }

  Node* main_victim() const noexcept WEAVE_REQUIRES(mu) {
    Node* v = probation.lru();
    return v ? v : protected_.lru();
  }

  bool admit(const Node* candidate, const Node* victim) noexcept WEAVE_REQUIRES(mu) {
    const unsigned fc = sketch.frequency(candidate->hash);
    const unsigned fv = sketch.frequency(victim->hash);
    if (fc > fv) return true;
    if (fc < k_random_admission_threshold) return false;
    random ^= random << 13;  // xorshift64
    random ^= random >> 7;
    random ^= random << 17;
    return (random & 127) == 0;
  }

  // The window's oldest entry, unlinked, enters the main space or is dropped.
  void offer_to_main(Node* c) WEAVE_REQUIRES(mu) {
    if (main_limit.exceeded(1, c->entry.weight)) {  // could not fit even alone
      erase(c);
      ++evictions;
      return;
    }
    while (main_limit.exceeded(main_count() + 1, main_bytes() + c->entry.weight)) {
      Node* v = main_victim();  // not null: c fits alone, so the main space is not empty
      if (!admit(c, v)) {
        erase(c);
        ++evictions;
        ++rejected_admission;
        return;
      }
      remove(v);
      ++evictions;
    }
    c->queue = Queue::probation;
    probation.push_mru(c);
  }

  // Restores the bounds after an insert or an update.
  void evict() WEAVE_REQUIRES(mu) {
    while (window_limit.exceeded(window.count, window.bytes)) {
      Node* c = window.lru();
      window.unlink(c);
      offer_to_main(c);
    }
    // Only an update that made a main entry heavier gets here.
    while (main_limit.exceeded(main_count(), main_bytes())) {
      remove(main_victim());
      ++evictions;
    }
  }

  // A hit's read section: false when the entry is not there or expired
  // (the caller takes the writer's path), else visit(entry) ran inside it.
  bool read_hit(KeyRef key, std::chrono::steady_clock::time_point now, void (*visit)(const LocalEntry&, void*),
                void* context) {
    ReadStripe& r = read[thread_slot() % k_read_stripes];
    for (int spin = 0;; ++spin) {
      r.readers.fetch_add(1, std::memory_order_seq_cst);
      if (!writing.load(std::memory_order_seq_cst)) break;
      r.readers.fetch_sub(1, std::memory_order_release);
      if (spin < 128) {
        ShardLock::pause();
        continue;
      }
      sleepers.fetch_add(1, std::memory_order_seq_cst);
      writing.wait(1, std::memory_order_seq_cst);
      sleepers.fetch_sub(1, std::memory_order_relaxed);
    }
    const auto it = map.find(key);
    if (it == map.end() || now >= it->second.entry.expires) {
      r.readers.fetch_sub(1, std::memory_order_release);
      return false;
    }
    Node* n = &it->second;
    try {
      ++t_visiting;
      visit(n->entry, context);
      --t_visiting;
    } catch (...) {
      --t_visiting;
      r.readers.fetch_sub(1, std::memory_order_release);
      throw;
    }
    const std::uint32_t i = r.used.load(std::memory_order_relaxed);
    r.used.store(i + 1, std::memory_order_relaxed);
    if (i < k_read_records) r.records[i].store(n, std::memory_order_relaxed);
    r.readers.fetch_sub(1, std::memory_order_release);
    if (((i + 1) & (k_read_records - 1)) == 0 && mu.try_lock()) {  // full: drain now, or retry 32 hits on
      exclude_readers();
      end_write();
    }
    return true;
  }

  // With mu held: waits for the readers in to leave, then applies what they recorded.
  void exclude_readers() noexcept WEAVE_REQUIRES(mu) {
    writing.store(1, std::memory_order_seq_cst);
    for (ReadStripe& r : read)
      for (int spin = 0; r.readers.load(std::memory_order_seq_cst) != 0; ++spin) {
        if (spin < 128) ShardLock::pause();
        else std::this_thread::yield();
      }
    for (ReadStripe& r : read) {
      const std::uint32_t n = std::min(r.used.load(std::memory_order_relaxed), k_read_records);
      for (std::uint32_t i = 0; i < n; ++i) {
        Node* hit = r.records[i].load(std::memory_order_relaxed);
        sketch.increment(hit->hash);
        on_access(hit);
      }
      hits += r.used.exchange(0, std::memory_order_relaxed);
    }
  }
  void end_write() noexcept WEAVE_RELEASE(mu) {
    writing.store(0, std::memory_order_seq_cst);
    if (sleepers.load(std::memory_order_seq_cst)) writing.notify_all();  // no system call when nobody sleeps
    mu.unlock();
  }

  void drop_all() noexcept WEAVE_REQUIRES(mu) {
    map.clear();
    window.reset();
    probation.reset();
    protected_.reset();
  }
};

namespace {
// A writer's hold of a shard: its lock, no reader in, the read buffers drained.
class WEAVE_SCOPED_CAPABILITY Writing {
 public:
  explicit Writing(LocalTier::Shard& s) noexcept WEAVE_ACQUIRE(s.mu) : s_(s) {
    s_.mu.lock();
    s_.exclude_readers();
  }
  ~Writing() WEAVE_RELEASE() { s_.end_write(); }
  Writing(const Writing&) = delete;
  Writing& operator=(const Writing&) = delete;

 private:
  LocalTier::Shard& s_;
};
}  // namespace

LocalTier::LocalTier(LocalTierOptions options) : options_(options) {
  const std::size_t max_e = options.max_entries;
  const std::size_t max_b = options.max_bytes;
  if (max_e == 0 && max_b == 0)
    throw std::invalid_argument("weave: a local cache tier needs max_entries or max_bytes (both are 0)");

  std::size_t n;
  if (options.shards) {
    n = std::bit_ceil(std::size_t{options.shards});
  } else {
    const std::size_t hw = std::max(1u, std::thread::hardware_concurrency());
    n = std::min<std::size_t>(k_max_auto_shards, std::bit_ceil(hw * 4));
    while (n > 1 && ((max_e && max_e / n < k_min_shard_entries) || (max_b && max_b / n < k_min_shard_bytes))) n /= 2;
  }
  while (n > 1 && ((max_e && max_e < n) || (max_b && max_b < n))) n /= 2;  // every shard holds something
  options_.shards = static_cast<unsigned>(n);
  shard_mask_ = n - 1;
  shards_ = std::make_unique<Shard[]>(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t e = max_e ? max_e / n + (i < max_e % n ? 1 : 0) : k_unbounded;
    const std::size_t b = max_b ? max_b / n + (i < max_b % n ? 1 : 0) : k_unbounded;
    shards_[i].configure(e, b, i + 1);
  }

  const std::size_t buckets = std::bit_ceil(std::max<std::size_t>(1, options.stamp_buckets));
  options_.stamp_buckets = buckets;
  bucket_mask_ = buckets - 1;
  buckets_ = std::make_unique<std::atomic<std::uint64_t>[]>(buckets);
  for (std::size_t i = 0; i < buckets; ++i) buckets_[i].store(0, std::memory_order_relaxed);
}

LocalTier::~LocalTier() = default;

LocalTier::Shard& LocalTier::shard_of(std::uint64_t hash) const noexcept {
  return shards_[(mix64(hash) >> 32) & shard_mask_];
}

std::atomic<std::uint64_t>& LocalTier::bucket_of(std::uint64_t hash) const noexcept {
  return buckets_[mix64(hash) & bucket_mask_];
}

// Both counters only grow, so the sum differs from an earlier one exactly
// when either moved.
std::uint64_t LocalTier::stamp_of(std::uint64_t hash) const noexcept {
  return bucket_of(hash).load() + epoch_.load();
}

std::uint64_t LocalTier::stamp(std::string_view key) const noexcept { return stamp_of(key_hash(key)); }

std::optional<LocalEntry> LocalTier::get(std::string_view key, std::chrono::steady_clock::time_point now) {
  std::optional<LocalEntry> hit;
  visit(key, now, [&](const LocalEntry& e) { hit.emplace(e); });
  return hit;
}

bool LocalTier::visit_entry(std::string_view key, std::chrono::steady_clock::time_point now,
                            void (*visit)(const LocalEntry&, void*), void* context) {
  refuse_inside_visit("get");
  const std::uint64_t h = key_hash(key);
  Shard& s = shard_of(h);
  if (s.read_hit(KeyRef{key, h}, now, visit, context)) return true;
  // A miss or an expired entry (or an entry installed since): as a writer.
  LocalEntry hit;  // visited after the lock is released
  {
    Writing lock(s);
    s.sketch.increment(h);
    const auto it = s.map.find(KeyRef{key, h});
    if (it == s.map.end()) {
      ++s.misses;
      return false;
    }
    Node* n = &it->second;
    if (now >= n->entry.expires) {
      s.remove(n);
      ++s.expirations;
      ++s.misses;
      return false;
    }
    s.on_access(n);
    ++s.hits;
    hit = n->entry;
  }
  visit(hit, context);
  return true;
}

bool LocalTier::put(std::string key, LocalEntry entry, std::uint64_t stamp) {
  refuse_inside_visit("put");
  const std::uint64_t h = key_hash(key);
  Shard& s = shard_of(h);
  std::shared_ptr<const void> replaced;  // destroyed after the lock is released
  Writing lock(s);
  // Read under the shard lock, which invalidate() holds while it bumps this
  // key's bucket and drops the key, and which clear() takes (after bumping the
  // epoch) to empty the shard: either the bump is seen here, or the drop comes
  // after this install.
  if (stamp != stamp_of(h)) {
    ++s.rejected_stale;
    return false;
  }
  auto it = s.map.find(KeyRef{key, h});
  if (it != s.map.end() && it->second.entry.version > entry.version) {
    ++s.rejected_stale;
    return false;
  }
  if (entry.weight > s.main_limit.bytes && entry.weight > s.window_limit.bytes) {
    if (it != s.map.end()) s.remove(&it->second);  // it was to be replaced: do not keep serving it
    ++s.rejected_admission;
    return false;
  }
  Node* n;
  if (it != s.map.end()) {
    n = &it->second;
    List& l = s.list(n->queue);
    l.bytes = l.bytes - n->entry.weight + entry.weight;
    replaced = std::move(n->entry.value);
    n->entry = std::move(entry);
    s.on_access(n);
  } else {
    it = s.map.try_emplace(Key{std::move(key), h}).first;
    n = &it->second;
    n->entry = std::move(entry);
    n->hash = h;
    n->key = &it->first;
    n->queue = Queue::window;
    s.window.push_mru(n);
    s.sketch.ensure_capacity(s.map.size());
  }
  s.watched = n;
  s.watched_dropped = false;
  s.evict();
  s.watched = nullptr;
  return !s.watched_dropped;  // false: dropped at once (lost its admission)
}

void LocalTier::invalidate(std::string_view key) {
  refuse_inside_visit("invalidate");
  const std::uint64_t h = key_hash(key);
  Shard& s = shard_of(h);
  std::shared_ptr<const void> dropped;
  Writing lock(s);
  bucket_of(h).fetch_add(1);
  const auto it = s.map.find(KeyRef{key, h});
  if (it == s.map.end()) return;
  dropped = std::move(it->second.entry.value);
  s.remove(&it->second);
}

void LocalTier::clear() {
  refuse_inside_visit("clear");
  epoch_.fetch_add(1);
  for (std::size_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[i];
    Writing lock(s);
    s.drop_all();
  }
}

LocalTier::Stats LocalTier::stats() const {
  Stats out;
  for (std::size_t i = 0; i <= shard_mask_; ++i) {
    Shard& s = shards_[i];
    Writing lock(s);
    out.hits += s.hits;
    out.misses += s.misses;
    out.evictions += s.evictions;
    out.rejected_stale += s.rejected_stale;
    out.rejected_admission += s.rejected_admission;
    out.expirations += s.expirations;
    out.entries += s.map.size();
    out.bytes += s.bytes();
  }
  return out;
}

std::chrono::milliseconds jittered(std::chrono::milliseconds ttl, std::string_view key) noexcept {
  const auto t = ttl.count();
  if (t <= 0) return ttl;
  const auto per_10k = static_cast<std::chrono::milliseconds::rep>(mix64(key_hash(key)) % 1001);  // 0 .. 10.00 %
  const auto cut = t / 10000 * per_10k + t % 10000 * per_10k / 10000;
  return std::chrono::milliseconds(t - cut);
}

}  // namespace weave::detail
