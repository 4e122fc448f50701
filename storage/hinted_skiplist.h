#ifndef GOODPUT_STORAGE_HINTED_SKIPLIST_H_
#define GOODPUT_STORAGE_HINTED_SKIPLIST_H_

#include "rocksdb/memtablerep.h"

namespace goodput::storage {

// A RocksDB memtable: a skip list whose insert with a hint (RocksDB keeps
// one per key prefix when the column family sets
// memtable_insert_with_hint_prefix_extractor) starts where that prefix's
// previous key went in and walks forward (a finger search). Appending to
// each of many interleaved prefixes, as a fleet's batches append to each
// job's events, then costs two or three key comparisons instead of a search
// from the top. RocksDB's own skip list keeps such hints too, but as Debian
// builds it (without NDEBUG) it also checks its whole hint after every
// insert: about 30 comparisons an insert (BENCHMARKS.md, section 2, "The
// memtable insert"). Inserts without a hint search from the top.
//
// Memory: nodes, keys and hints live in the memtable's arena; iterators that
// RocksDB would not free (those in its own arena, and those of
// MemTableRep's default Get: one per point read, freed with the table) are
// kept by the table.
// Thread safety: the factory is immutable; a table it makes takes one
// inserting thread at a time (allow_concurrent_memtable_write = false) and
// any number of reading threads beside it.
class HintedSkipListFactory : public rocksdb::MemTableRepFactory {
 public:
  using rocksdb::MemTableRepFactory::CreateMemTableRep;
  rocksdb::MemTableRep* CreateMemTableRep(
      const rocksdb::MemTableRep::KeyComparator& compare,
      rocksdb::Allocator* allocator, const rocksdb::SliceTransform* transform,
      rocksdb::Logger* logger) override;
  const char* Name() const override { return "goodput.HintedSkipList"; }
};

}  // namespace goodput::storage

#endif  // GOODPUT_STORAGE_HINTED_SKIPLIST_H_
