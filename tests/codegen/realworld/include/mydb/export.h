// mydb/export.h — symbol export and the library namespace, in the manner of
// leveldb's export.h and rocksdb's rocksdb_namespace.h.
//
// MYLIB_EXPORT stands in front of every public class and function. What it
// expands to depends on how the library is built:
//   MYLIB_STRICT_RESULTS   [[nodiscard]]: results (Status) must not be dropped
//   MYLIB_SHARED           __attribute__((visibility("default"))) with GCC/Clang
//   otherwise              nothing (static library)
#ifndef MYDB_INCLUDE_EXPORT_H_
#define MYDB_INCLUDE_EXPORT_H_

#if !defined(MYLIB_EXPORT)
#if defined(MYLIB_STRICT_RESULTS)
#define MYLIB_EXPORT [[nodiscard]]
#elif defined(MYLIB_SHARED) && (defined(__GNUC__) || defined(__clang__))
#define MYLIB_EXPORT __attribute__((visibility("default")))
#else
#define MYLIB_EXPORT
#endif
#endif  // !defined(MYLIB_EXPORT)

// Embedders may rename the namespace to link two copies into one binary.
#ifndef MYDB_NAMESPACE
#define MYDB_NAMESPACE mydb
#endif

#endif  // MYDB_INCLUDE_EXPORT_H_
