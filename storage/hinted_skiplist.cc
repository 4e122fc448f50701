#include "storage/hinted_skiplist.h"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <new>
#include <unordered_set>
#include <vector>

#include "rocksdb/slice.h"

namespace goodput::storage {
namespace {

using rocksdb::MemTableRep;
using rocksdb::Slice;
using KeyComparator = MemTableRep::KeyComparator;

constexpr int kMaxHeight = 12;
constexpr uint32_t kBranching = 4;
// A finger walks at most this many nodes on one level; past that the
// insert searches from the top (a finger left far behind on a high level).
constexpr int kMaxWalk = 32;

// A node is addressed by its height byte. Its next pointers sit just below
// it (level 0 nearest), its memtable key (RocksDB's encoding: length,
// internal key, value) just above.
class Node {
 public:
  static size_t Bytes(int height, size_t key_len) {
    return sizeof(std::atomic<Node*>) * height + 1 + key_len;
  }
  // `mem`: pointer-aligned, Bytes(height, key length) long.
  static Node* Make(char* mem, int height) {
    auto* node =
        reinterpret_cast<Node*>(mem + sizeof(std::atomic<Node*>) * height);
    for (int i = 0; i < height; ++i) {
      new (node->Slot(i)) std::atomic<Node*>(nullptr);
    }
    *reinterpret_cast<uint8_t*>(node) = static_cast<uint8_t>(height);
    return node;
  }
  static Node* OfKey(const char* key) {
    return reinterpret_cast<Node*>(const_cast<char*>(key) - 1);
  }

  int height() const { return *reinterpret_cast<const uint8_t*>(this); }
  const char* key() const { return reinterpret_cast<const char*>(this) + 1; }
  // Readers: acquire, pairs with Publish.
  Node* Next(int level) const {
    return Slot(level)->load(std::memory_order_acquire);
  }
  void Publish(int level, Node* x) {
    Slot(level)->store(x, std::memory_order_release);
  }
  // The writer: nothing it reads was written by another thread.
  Node* NextRelaxed(int level) const {
    return Slot(level)->load(std::memory_order_relaxed);
  }
  void SetRelaxed(int level, Node* x) {
    Slot(level)->store(x, std::memory_order_relaxed);
  }

 private:
  std::atomic<Node*>* Slot(int level) const {
    return reinterpret_cast<std::atomic<Node*>*>(const_cast<Node*>(this)) -
           (level + 1);
  }
};

// Where a prefix's previous key went in: its predecessor on each level
// (prev[i + 1] is never after prev[i]). Kept in the arena, owned by the
// memtable's hint map.
struct Finger {
  int height = 0;  // levels filled; 0 = not used yet
  Node* prev[kMaxHeight];
};

class HintedSkipList;
class Iter;

// The iterators of MemTableRep's own Get (which a table cannot replace:
// its key type is internal to RocksDB): Get never deletes the iterator it
// asks for, so they are adopted here and deleted with the table, unless a
// caller that does delete its iterator did.
class Adopted {
 public:
  Adopted() = default;
  Adopted(const Adopted&) = delete;
  Adopted& operator=(const Adopted&) = delete;
  ~Adopted();

  void Add(Iter* iter);
  void Forget(Iter* iter);

 private:
  std::mutex mu_;
  std::unordered_set<Iter*> iters_;
  bool closing_ = false;
};

// Memory for the iterators RocksDB places in its own arena: it destroys
// them but never frees them. A slot goes back to a list of the thread that
// destroyed its iterator, and only that thread takes it again, when that
// destruction has long finished (another thread could take it while the
// destructor still ran). Each thread keeps at most kMaxFree slots; the
// lists are freed when their threads end.
class Slots {
 public:
  static void* Take();
  static void Give(void* slot);

 private:
  static constexpr size_t kMaxFree = 64;
  struct FreeList {
    std::vector<void*> slots;
    ~FreeList() {
      for (void* slot : slots) ::operator delete(slot);
    }
  };
  static FreeList& Mine() {
    thread_local FreeList list;
    return list;
  }
};

class Iter : public MemTableRep::Iterator {
 public:
  enum class Kind { kDeleted, kSlot, kAdopted };  // how it ends
  Iter(const HintedSkipList* list, Adopted* adopted, Kind kind)
      : list_(list), adopted_(adopted), kind_(kind) {}
  ~Iter() override {
    if (kind_ == Kind::kSlot) Slots::Give(this);
    if (kind_ == Kind::kAdopted) adopted_->Forget(this);
  }

  bool Valid() const override { return node_ != nullptr; }
  const char* key() const override { return node_->key(); }
  void Next() override { node_ = node_->Next(0); }
  void Prev() override;
  void Seek(const Slice& internal_key, const char* memtable_key) override;
  void SeekForPrev(const Slice& internal_key,
                   const char* memtable_key) override;
  void SeekToFirst() override;
  void SeekToLast() override;

 private:
  const HintedSkipList* list_;
  Adopted* adopted_;
  Kind kind_;
  Node* node_ = nullptr;
};

Adopted::~Adopted() {
  std::unordered_set<Iter*> left;
  {
    std::lock_guard<std::mutex> lock(mu_);
    closing_ = true;
    left.swap(iters_);
  }
  for (Iter* iter : left) delete iter;
}

void Adopted::Add(Iter* iter) {
  std::lock_guard<std::mutex> lock(mu_);
  iters_.insert(iter);
}

void Adopted::Forget(Iter* iter) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!closing_) iters_.erase(iter);
}

void* Slots::Take() {
  FreeList& mine = Mine();
  if (mine.slots.empty()) return ::operator new(sizeof(Iter));
  void* slot = mine.slots.back();
  mine.slots.pop_back();
  return slot;
}

void Slots::Give(void* slot) {
  FreeList& mine = Mine();
  if (mine.slots.size() >= kMaxFree) {  // those in the list are done
    ::operator delete(mine.slots.back());
    mine.slots.pop_back();
  }
  mine.slots.push_back(slot);
}

class HintedSkipList : public MemTableRep {
 public:
  HintedSkipList(const KeyComparator& compare, rocksdb::Allocator* allocator)
      : MemTableRep(allocator), compare_(compare) {
    head_ = Node::Make(Aligned(Node::Bytes(kMaxHeight, 0)), kMaxHeight);
  }

  rocksdb::KeyHandle Allocate(const size_t len, char** buf) override {
    const int height = RandomHeight();
    Node* node = Node::Make(Aligned(Node::Bytes(height, len)), height);
    *buf = const_cast<char*>(node->key());
    return *buf;
  }

  void Insert(rocksdb::KeyHandle handle) override {
    Node* x = Node::OfKey(static_cast<const char*>(handle));
    Node* prev[kMaxHeight];
    Search(x->key(), prev);
    Link(x, prev);
  }

  void InsertWithHint(rocksdb::KeyHandle handle, void** hint) override;

  bool Contains(const char* key) const override {
    const Node* n = SeekNode(key);
    return n != nullptr && compare_(n->key(), key) == 0;
  }

  // Nodes, keys and fingers are in the arena, which RocksDB counts;
  // iterators are not (RocksDB wants this figure fixed once the table is
  // full, and they come and go).
  size_t ApproximateMemoryUsage() override { return 0; }

  Iterator* GetIterator(rocksdb::Arena* arena) override {
    if (arena == nullptr) {
      return new Iter(this, &adopted_, Iter::Kind::kDeleted);
    }
    return new (Slots::Take()) Iter(this, &adopted_, Iter::Kind::kSlot);
  }
  // MemTableRep::Get's (never deleted), or a caller's that deletes it.
  Iterator* GetDynamicPrefixIterator(rocksdb::Arena* arena) override {
    if (arena != nullptr) return GetIterator(arena);
    auto* iter = new Iter(this, &adopted_, Iter::Kind::kAdopted);
    adopted_.Add(iter);
    return iter;
  }

  // Readers. The first node at or after `target` (a memtable key, or an
  // internal key as a Slice), or null.
  template <typename Target>
  Node* SeekNode(const Target& target) const {
    Node* p = head_;
    for (int level = max_height() - 1;; --level) {
      Node* n = p->Next(level);
      while (n != nullptr && compare_(n->key(), target) < 0) {
        p = n;
        n = p->Next(level);
      }
      if (level == 0) return n;
    }
  }
  // The last node before `key`, or null.
  Node* Before(const char* key) const {
    Node* p = head_;
    for (int level = max_height() - 1; level >= 0; --level) {
      for (Node* n = p->Next(level);
           n != nullptr && compare_(n->key(), key) < 0; n = p->Next(level)) {
        p = n;
      }
    }
    return p == head_ ? nullptr : p;
  }
  Node* First() const { return head_->Next(0); }
  Node* Last() const {
    Node* p = head_;
    for (int level = max_height() - 1; level >= 0; --level) {
      for (Node* n = p->Next(level); n != nullptr; n = p->Next(level)) p = n;
    }
    return p == head_ ? nullptr : p;
  }
  template <typename Target>
  int Compare(const Node* n, const Target& target) const {
    return compare_(n->key(), target);
  }

 private:
  int max_height() const { return max_height_.load(std::memory_order_relaxed); }

  // Arena memory aligned for the next pointers.
  char* Aligned(size_t bytes) {
    constexpr uintptr_t kAlign = alignof(std::atomic<Node*>);
    char* buf = nullptr;
    MemTableRep::Allocate(bytes + kAlign - 1, &buf);
    const uintptr_t at = reinterpret_cast<uintptr_t>(buf);
    return reinterpret_cast<char*>((at + kAlign - 1) & ~(kAlign - 1));
  }

  int RandomHeight() {
    int height = 1;
    while (height < kMaxHeight && NextRandom() % kBranching == 0) ++height;
    return height;
  }
  uint32_t NextRandom() {  // xorshift32
    random_ ^= random_ << 13;
    random_ ^= random_ >> 17;
    random_ ^= random_ << 5;
    return random_;
  }

  // The writer: `key`'s predecessor on every level, from the top.
  void Search(const char* key, Node** prev) const {
    Node* p = head_;
    for (int level = max_height() - 1; level >= 0; --level) {
      for (Node* n = p->NextRelaxed(level);
           n != nullptr && compare_(n->key(), key) < 0;
           n = p->NextRelaxed(level)) {
        p = n;
      }
      prev[level] = p;
    }
  }

  bool FollowFinger(const Finger& finger, const Node* x, Node** prev) const;

  // Links `x` after prev[0..height): its own pointers first, then each
  // level's predecessor publishes it (bottom up, as readers descend).
  void Link(Node* x, Node** prev) {
    const int height = x->height();
    const int max = max_height();
    for (int i = max; i < height; ++i) prev[i] = head_;
    if (height > max) max_height_.store(height, std::memory_order_relaxed);
    for (int i = 0; i < height; ++i) {
      x->SetRelaxed(i, prev[i]->NextRelaxed(i));
      prev[i]->Publish(i, x);
    }
  }

  const KeyComparator& compare_;
  Node* head_;
  std::atomic<int> max_height_{1};
  uint32_t random_ = 0xdeadbeef;
  Adopted adopted_;
};

// Fills prev[0..x's height) by walking forward from the finger; false if
// the finger cannot be used (not filled that high, past `x`, or a walk
// longer than kMaxWalk).
bool HintedSkipList::FollowFinger(const Finger& finger, const Node* x,
                                  Node** prev) const {
  const int height = x->height();
  if (finger.height < height) return false;
  const char* key = x->key();
  if (finger.prev[0] != head_ && compare_(finger.prev[0]->key(), key) >= 0) {
    return false;  // every prev[i] is at or before prev[0]: all before x
  }
  for (int level = 0; level < height; ++level) {
    Node* p = finger.prev[level];
    for (int steps = 0;; ++steps) {
      Node* n = p->NextRelaxed(level);
      if (n == nullptr || compare_(n->key(), key) >= 0) break;
      if (steps == kMaxWalk) return false;
      p = n;
    }
    prev[level] = p;
  }
  return true;
}

void HintedSkipList::InsertWithHint(rocksdb::KeyHandle handle, void** hint) {
  Node* x = Node::OfKey(static_cast<const char*>(handle));
  auto*& finger = reinterpret_cast<Finger*&>(*hint);
  if (finger == nullptr) finger = new (Aligned(sizeof(Finger))) Finger;
  Node* prev[kMaxHeight];
  if (!FollowFinger(*finger, x, prev)) {
    Search(x->key(), prev);
    finger->height = max_height();
    std::copy(prev, prev + finger->height, finger->prev);
  }
  Link(x, prev);
  const int height = x->height();
  std::fill(finger->prev, finger->prev + height, x);
  finger->height = std::max(finger->height, height);
}

void Iter::Prev() { node_ = list_->Before(node_->key()); }

void Iter::Seek(const Slice& internal_key, const char* memtable_key) {
  node_ = memtable_key != nullptr ? list_->SeekNode(memtable_key)
                                  : list_->SeekNode(internal_key);
}

// The last entry at or before the target.
void Iter::SeekForPrev(const Slice& internal_key, const char* memtable_key) {
  Seek(internal_key, memtable_key);
  if (node_ == nullptr) {
    node_ = list_->Last();
    return;
  }
  const int c = memtable_key != nullptr ? list_->Compare(node_, memtable_key)
                                        : list_->Compare(node_, internal_key);
  if (c > 0) Prev();
}

void Iter::SeekToFirst() { node_ = list_->First(); }

void Iter::SeekToLast() { node_ = list_->Last(); }

}  // namespace

rocksdb::MemTableRep* HintedSkipListFactory::CreateMemTableRep(
    const rocksdb::MemTableRep::KeyComparator& compare,
    rocksdb::Allocator* allocator, const rocksdb::SliceTransform* /*transform*/,
    rocksdb::Logger* /*logger*/) {
  return new HintedSkipList(compare, allocator);
}

}  // namespace goodput::storage
