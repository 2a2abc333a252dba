// Stage 2 of weavegen: the main file's declarations, and which annotations
// stand in front of which declaration.
//
// An annotation belongs to the declaration whose extent encloses it with the
// declared name after it (`template <..> [[lock]] void f()`), or else to the
// next declaration when only attributes, `alignas(...)`, `__attribute__((..))`,
// `__declspec(..)` or macro uses (export and thread-safety macros) stand
// between them.
#pragma once

#include <clang-c/Index.h>

#include <map>
#include <vector>

#include "attributes.h"
#include "diagnostics.h"
#include "source.h"

namespace weavegen {

struct DeclEntry {
  CXCursor cursor;
  unsigned begin = 0, end = 0, name = 0;  // file offsets in the main file
};

// Every declaration written in `file` (macro expansions count where they are
// used), ordered by position.
std::vector<DeclEntry> index_declarations(CXTranslationUnit tu, CXFile file);

// Declaration index -> its annotations, in written order. Annotations that
// stand before no declaration, or before a macro that declares several, are
// reported.
std::map<std::size_t, std::vector<const RawAnnotation*>> attach_annotations(
    const std::vector<RawAnnotation>& annotations, const std::vector<DeclEntry>& decls, const Source& source,
    Reporter& rep);

}  // namespace weavegen
