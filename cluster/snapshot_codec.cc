#include "cluster/snapshot_codec.h"

#include <algorithm>

#include "absl/strings/strip.h"

namespace goodput::cluster {
namespace {

// "GPS1", then the header's fixed-width fields (little-endian), the id's
// length and bytes, the chunk index, then the data to the end.
constexpr absl::string_view kMagic = "GPS1";

template <typename T>
void Put(T v, std::string* out) {
  for (size_t i = 0; i < sizeof(T); ++i) {
    out->push_back(
        static_cast<char>((static_cast<uint64_t>(v) >> (8 * i)) & 0xff));
  }
}

// Reads a T from the front of `*in`; false if it is too short.
template <typename T>
bool Get(absl::string_view* in, T* v) {
  if (in->size() < sizeof(T)) return false;
  uint64_t x = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    x |= static_cast<uint64_t>(static_cast<unsigned char>((*in)[i])) << (8 * i);
  }
  *v = static_cast<T>(x);
  in->remove_prefix(sizeof(T));
  return true;
}

bool GetHeader(absl::string_view* in, SnapshotHeader* h) {
  uint16_t id_size = 0;
  if (!Get(in, &h->partition) || !Get(in, &h->sequence) ||
      !Get(in, &h->body_size) || !Get(in, &h->body_hash) ||
      !Get(in, &h->count) || !Get(in, &id_size) || in->size() < id_size) {
    return false;
  }
  h->id = std::string(in->substr(0, id_size));
  in->remove_prefix(id_size);
  return true;
}

}  // namespace

uint64_t BodyHash(absl::string_view body) {
  uint64_t h = 14695981039346656037ULL;
  for (char c : body) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string EncodeChunk(const SnapshotChunk& chunk) {
  const SnapshotHeader& h = chunk.header;
  std::string out(kMagic);
  Put(h.partition, &out);
  Put(h.sequence, &out);
  Put(h.body_size, &out);
  Put(h.body_hash, &out);
  Put(h.count, &out);
  Put(static_cast<uint16_t>(h.id.size()), &out);
  out += h.id;
  Put(chunk.index, &out);
  out += chunk.data;
  return out;
}

absl::StatusOr<SnapshotChunk> DecodeChunk(absl::string_view message) {
  SnapshotChunk chunk;
  if (!absl::ConsumePrefix(&message, kMagic) ||
      !GetHeader(&message, &chunk.header) || !Get(&message, &chunk.index) ||
      chunk.index >= chunk.header.count) {
    return absl::InvalidArgumentError("not a partition snapshot chunk");
  }
  chunk.data = std::string(message);
  return chunk;
}

std::vector<std::string> EncodeSnapshot(const SnapshotHeader& header,
                                        absl::string_view body,
                                        size_t max_data) {
  max_data = std::max<size_t>(max_data, 1);
  SnapshotChunk chunk;
  chunk.header = header;
  chunk.header.body_size = body.size();
  chunk.header.body_hash = BodyHash(body);
  chunk.header.count = static_cast<uint32_t>(
      std::max<size_t>(1, (body.size() + max_data - 1) / max_data));
  std::vector<std::string> out;
  for (uint32_t i = 0; i < chunk.header.count; ++i) {
    chunk.index = i;
    chunk.data = std::string(body.substr(i * max_data, max_data));
    out.push_back(EncodeChunk(chunk));
  }
  return out;
}

void SnapshotAssembler::Add(absl::string_view message) {
  ++added_;
  absl::StatusOr<SnapshotChunk> chunk = DecodeChunk(message);
  if (!chunk.ok()) {
    ++rejected_;
    return;
  }
  auto [it, fresh] = partials_.try_emplace(chunk->header.id);
  Partial& p = it->second;
  if (fresh) p.header = chunk->header;
  if (!SameSnapshot(p.header, chunk->header) ||
      p.chunks.count(chunk->index) > 0) {
    ++rejected_;
    p.broken = true;
    return;
  }
  if (chunk->index + 1 == p.header.count) p.order = added_;
  p.chunks[chunk->index] = std::move(chunk->data);
}

std::optional<Snapshot> SnapshotAssembler::Newest() const {
  const Partial* best = nullptr;
  for (const auto& [id, p] : partials_) {
    if (!Complete(p)) continue;
    if (best == nullptr || p.header.sequence > best->header.sequence ||
        (p.header.sequence == best->header.sequence && p.order > best->order)) {
      best = &p;
    }
  }
  if (best == nullptr) return std::nullopt;
  return Snapshot{best->header, Join(*best)};
}

int64_t SnapshotAssembler::incomplete() const {
  return std::count_if(partials_.begin(), partials_.end(),
                       [](const auto& p) { return !Complete(p.second); });
}

bool SnapshotAssembler::SameSnapshot(const SnapshotHeader& a,
                                     const SnapshotHeader& b) {
  return a.partition == b.partition && a.sequence == b.sequence &&
         a.body_size == b.body_size && a.body_hash == b.body_hash &&
         a.count == b.count;
}

bool SnapshotAssembler::Complete(const Partial& p) {
  if (p.broken || p.chunks.size() != p.header.count) return false;
  const std::string body = Join(p);
  return body.size() == p.header.body_size &&
         BodyHash(body) == p.header.body_hash;
}

std::string SnapshotAssembler::Join(const Partial& p) {
  std::string body;
  for (const auto& [index, data] : p.chunks) body += data;
  return body;
}

}  // namespace goodput::cluster
