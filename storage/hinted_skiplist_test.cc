#include "storage/hinted_skiplist.h"

#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/write_batch.h"

namespace goodput::storage {
namespace {

// Keys as job_events writes them: a 4-byte length, an id, an 8-byte counter.
std::string Key(const std::string& id, uint64_t n) {
  std::string k;
  for (int i = 3; i >= 0; --i) k.push_back(char((id.size() >> (8 * i)) & 0xff));
  k += id;
  for (int i = 7; i >= 0; --i) k.push_back(char((n >> (8 * i)) & 0xff));
  return k;
}

class IdPrefix : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "test.IdPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    return rocksdb::Slice(key.data(), key.size() - 8);
  }
  bool InDomain(const rocksdb::Slice& key) const override {
    return key.size() > 8;
  }
};

class HintedSkipListTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    std::string tmpl = ::testing::TempDir() + "hinted_skiplist_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    rocksdb::Options options;
    options.create_if_missing = true;
    options.allow_concurrent_memtable_write = false;
    options.write_buffer_size = 256 << 20;  // everything stays in memory
    options.memtable_factory = std::make_shared<HintedSkipListFactory>();
    if (GetParam()) {
      options.memtable_insert_with_hint_prefix_extractor =
          std::make_shared<IdPrefix>();
    }
    rocksdb::DB* db = nullptr;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &db).ok());
    db_.reset(db);
  }
  void TearDown() override {
    db_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The whole table forwards, then backwards, against the model.
  void ExpectScans() {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    auto m = model_.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model_.end());
      ASSERT_EQ(it->key().ToString(), m->first);
      ASSERT_EQ(it->value().ToString(), m->second);
    }
    EXPECT_EQ(m, model_.end());
    auto r = model_.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      ASSERT_NE(r, model_.rend());
      ASSERT_EQ(it->key().ToString(), r->first);
    }
    EXPECT_EQ(r, model_.rend());
    ASSERT_TRUE(it->status().ok());
  }

  // Seek and SeekForPrev to `target` land where the model says.
  void ExpectSeeks(const std::string& target) {
    std::unique_ptr<rocksdb::Iterator> it(
        db_->NewIterator(rocksdb::ReadOptions()));
    it->Seek(target);
    auto after = model_.lower_bound(target);
    ASSERT_EQ(it->Valid(), after != model_.end()) << target;
    if (it->Valid()) EXPECT_EQ(it->key().ToString(), after->first);
    it->SeekForPrev(target);
    auto upto = model_.upper_bound(target);
    ASSERT_EQ(it->Valid(), upto != model_.begin()) << target;
    if (it->Valid()) EXPECT_EQ(it->key().ToString(), std::prev(upto)->first);
  }

  void Put(rocksdb::WriteBatch* wb, const std::string& key,
           const std::string& value) {
    wb->Put(key, value);
    model_[key] = value;
  }

  std::string dir_;
  std::unique_ptr<rocksdb::DB> db_;
  std::map<std::string, std::string> model_;
};

// As a fleet writes: each batch appends one key to each of many ids, in
// shuffled order, and now and then rewrites a key, goes back to an earlier
// counter (the finger is past it) or deletes one.
TEST_P(HintedSkipListTest, MatchesAModelUnderInterleavedAppends) {
  std::mt19937 rng(7);
  std::vector<std::string> ids;
  for (int j = 0; j < 300; ++j) ids.push_back("job-" + std::to_string(j * 7));
  std::vector<uint64_t> next(ids.size(), 0);
  for (int batch = 0; batch < 120; ++batch) {
    rocksdb::WriteBatch wb;
    std::vector<int> order(ids.size());
    for (size_t j = 0; j < order.size(); ++j) order[j] = static_cast<int>(j);
    std::shuffle(order.begin(), order.end(), rng);
    for (int j : order) {
      const std::string value = "v" + std::to_string(batch);
      switch (rng() % 50) {
        case 0:  // the newest key again: same user key, newer sequence
          if (next[j] > 0) Put(&wb, Key(ids[j], 2 * (next[j] - 1)), value);
          break;
        case 1:  // between earlier keys: before the finger
          Put(&wb, Key(ids[j], 2 * (rng() % (next[j] + 1)) + 1), value);
          break;
        case 2:  // far ahead: the next appends are before the finger
          Put(&wb, Key(ids[j], 1'000'000 + batch), value);
          break;
        case 3:
          wb.Delete(Key(ids[j], 2 * (next[j] / 2)));
          model_.erase(Key(ids[j], 2 * (next[j] / 2)));
          break;
        default:
          Put(&wb, Key(ids[j], 2 * next[j]++), value);
      }
    }
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &wb).ok());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectScans());
  for (const auto& id : ids) {
    ASSERT_NO_FATAL_FAILURE(ExpectSeeks(Key(id, 0)));
    ASSERT_NO_FATAL_FAILURE(ExpectSeeks(Key(id, 57)));
    ASSERT_NO_FATAL_FAILURE(ExpectSeeks(Key(id, ~uint64_t{0})));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectSeeks(""));
  ASSERT_NO_FATAL_FAILURE(ExpectSeeks("\xff"));
  for (const auto& [key, value] : model_) {
    std::string got;
    ASSERT_TRUE(db_->Get(rocksdb::ReadOptions(), key, &got).ok());
    ASSERT_EQ(got, value);
  }
  // A flush writes the table out through its iterator, in order.
  ASSERT_TRUE(db_->Flush(rocksdb::FlushOptions()).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectScans());
}

// A snapshot reads the older of two versions of a key, both in the table.
TEST_P(HintedSkipListTest, ASnapshotSeesTheOlderVersion) {
  rocksdb::WriteBatch first;
  Put(&first, Key("a", 1), "old");
  Put(&first, Key("b", 1), "b");
  ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &first).ok());
  const rocksdb::Snapshot* snapshot = db_->GetSnapshot();
  rocksdb::WriteBatch second;
  Put(&second, Key("a", 1), "new");
  Put(&second, Key("a", 2), "later");
  ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &second).ok());
  rocksdb::ReadOptions at;
  at.snapshot = snapshot;
  std::string got;
  ASSERT_TRUE(db_->Get(at, Key("a", 1), &got).ok());
  EXPECT_EQ(got, "old");
  EXPECT_TRUE(db_->Get(at, Key("a", 2), &got).IsNotFound());
  ASSERT_TRUE(db_->Get(rocksdb::ReadOptions(), Key("a", 1), &got).ok());
  EXPECT_EQ(got, "new");
  db_->ReleaseSnapshot(snapshot);
  ASSERT_NO_FATAL_FAILURE(ExpectScans());
}

// Readers scan while the writer appends a round of keys per write: each
// scan is in order and sees whole rounds (every id has as many keys).
TEST_P(HintedSkipListTest, ReadersBesideTheWriterSeeWholeWrites) {
  constexpr int kIds = 64;
  constexpr int kRounds = 300;
  std::atomic<bool> done{false};
  std::atomic<int> scans{0};
  auto reader = [&] {
    while (!done.load()) {
      std::unique_ptr<rocksdb::Iterator> it(
          db_->NewIterator(rocksdb::ReadOptions()));
      std::map<std::string, int> per_id;
      std::string last;
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        const std::string key = it->key().ToString();
        ASSERT_LT(last, key);
        ++per_id[key.substr(0, key.size() - 8)];
        last = key;
      }
      if (!per_id.empty()) {
        ASSERT_EQ(per_id.size(), size_t{kIds});
        for (const auto& [id, n] : per_id) {
          ASSERT_EQ(n, per_id.begin()->second) << id;
        }
      }
      ++scans;
    }
  };
  std::thread r1(reader), r2(reader);
  for (int round = 0; round < kRounds; ++round) {
    rocksdb::WriteBatch wb;
    for (int j = kIds - 1; j >= 0; --j) {
      wb.Put(Key("id" + std::to_string(j), round), "x");
    }
    ASSERT_TRUE(db_->Write(rocksdb::WriteOptions(), &wb).ok());
  }
  done = true;
  r1.join();
  r2.join();
  EXPECT_GT(scans.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutHints, HintedSkipListTest,
                         ::testing::Bool(), [](const auto& info) {
                           return info.param ? "Hinted" : "Plain";
                         });

}  // namespace
}  // namespace goodput::storage
