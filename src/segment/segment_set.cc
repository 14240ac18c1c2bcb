#include "segment/segment_set.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "common/file_reader.h"
#include "segment/file_util.h"
#include "segment/tombstones.h"

namespace flowrag {

// An open segment or tombstone file of a view: the mapping, and a shared
// flock on the file that garbage collection respects (segment_set.h).
struct SegmentSet::Lease {
  std::string file;
  int fd = -1;
  std::shared_ptr<const SegmentReader> reader;
  uint64_t fingerprint = 0;  // the header's header_checksum
  ~Lease() {
    if (fd >= 0) ::close(fd);  // releases the flock
  }

  // The reader of `lease`, sharing its ownership: holding the reader holds
  // the lease.
  static std::shared_ptr<const SegmentReader> ReaderOf(const std::shared_ptr<const Lease>& lease) {
    return std::shared_ptr<const SegmentReader>(lease, lease->reader.get());
  }
  // Checks that the file is the one a manifest recorded (or an edit names).
  Status CheckIs(std::string_view kind, uint64_t id, uint64_t file_bytes,
                 uint64_t recorded_fingerprint) const;
};

namespace {

namespace fs = std::filesystem;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Result<std::string> ReadWholeFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return OsError(path, "cannot open", errno);
  std::string out;
  char buf[64 * 1024];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return OsError(path, "cannot read", err);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return out;
}

// Writes `bytes` to `path` (created or truncated) and fsyncs it.
Status WriteAndSync(const std::string& path, std::string_view bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return OsError(path, "cannot create", errno);
  for (size_t done = 0; done < bytes.size();) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return OsError(path, "cannot write", err);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    const int err = errno;
    ::close(fd);
    return OsError(path, "cannot fsync", err);
  }
  if (::close(fd) != 0) return OsError(path, "cannot close", errno);
  return Status::Ok();
}

Status RenameFile(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return OsError(to, "cannot rename " + from + " to it", errno);
  }
  return Status::Ok();
}

// The names of the regular files in `dir`.
Result<std::vector<std::string>> ListFiles(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) return OsError(dir, "cannot list directory", ec.value());
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;
    std::error_code type_ec;
    if (it->is_regular_file(type_ec)) names.push_back(it->path().filename().string());
  }
  if (ec) return OsError(dir, "cannot list directory", ec.value());
  return names;
}

// The stored header checksum of the segment open at `fd` (its reader has
// verified it).
Result<uint64_t> HeaderFingerprint(int fd, const std::string& path) {
  SegmentHeader h;
  const ssize_t n = ::pread(fd, &h, sizeof(h), 0);
  if (n != static_cast<ssize_t>(sizeof(h))) return OsError(path, "cannot read the header", errno);
  return h.header_checksum;
}

// A recoverable verdict on a candidate state: the file is missing or damaged
// (fall back); any other error of the OS is not.
bool FallsBack(const Status& st) {
  return st.code() == StatusCode::kNotFound || st.code() == StatusCode::kCorruption;
}

}  // namespace

Result<std::string> SegmentDirectoryFor(const std::string& store_path) {
  if (store_path.empty() || store_path == ":memory:" ||
      store_path.find("://") != std::string::npos || store_path.rfind("file:", 0) == 0) {
    return Status::InvalidArgument("'" + store_path.substr(0, 80) +
                                   "' is no store file: name the segment directory");
  }
  return store_path + ".segments";
}

bool LiveSegment::IsDeleted(uint64_t row) const {
  return std::binary_search(deleted.begin(), deleted.end(), row);
}

const LiveSegment* SegmentView::Find(uint64_t id) const {
  auto it = std::lower_bound(segments_.begin(), segments_.end(), id,
                             [](const LiveSegment& s, uint64_t v) { return s.record.id < v; });
  return it != segments_.end() && it->record.id == id ? &*it : nullptr;
}

const char* PublishStepName(PublishStep step) {
  switch (step) {
    case PublishStep::kManifestTmpWritten:
      return "manifest tmp written";
    case PublishStep::kManifestRenamed:
      return "manifest renamed";
    case PublishStep::kCurrentTmpWritten:
      return "CURRENT tmp written";
    case PublishStep::kCurrentRenamed:
      return "CURRENT renamed";
    case PublishStep::kGcFileDeleted:
      return "garbage file deleted";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// Opening and loading

SegmentSet::SegmentSet(std::string dir, SegmentSetOptions options)
    : dir_(std::move(dir)), options_(std::move(options)) {}

SegmentSet::~SegmentSet() {
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

Status SegmentSet::TakeLock() {
  const std::string path = PathOf(std::string(kLockFileName));
  lock_fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock_fd_ < 0) return OsError(path, "cannot create the segment set's lock", errno);
  const int how = LOCK_EX | (options_.wait_for_lock ? 0 : LOCK_NB);
  while (::flock(lock_fd_, how) != 0) {
    if (errno == EINTR) continue;
    if (errno == EWOULDBLOCK) {
      return Status::FailedPrecondition(path +
                                        ": another process has the segment set open for writing");
    }
    return OsError(path, "cannot lock", errno);
  }
  return Status::Ok();
}

Result<std::unique_ptr<SegmentSet>> SegmentSet::Open(const std::string& dir,
                                                     SegmentSetOptions options) {
  if (dir.empty()) return Status::InvalidArgument("segment set: empty directory name");
  std::unique_ptr<SegmentSet> set(new SegmentSet(dir, std::move(options)));
  std::error_code ec;
  if (set->writable()) {
    fs::create_directories(dir, ec);
    if (ec) return OsError(dir, "cannot create the segment directory", ec.value());
    FLOWRAG_RETURN_IF_ERROR(set->TakeLock());
  } else if (!fs::exists(dir, ec)) {
    set->current_.reset(new SegmentView(Manifest{}, {}));
    return set;
  }
  std::lock_guard<std::mutex> lock(set->publish_mu_);
  bool fell_back = false;
  FLOWRAG_RETURN_IF_ERROR(set->LoadNewest(&fell_back));
  if (!set->writable()) return set;
  if (fell_back) {
    // CURRENT is valid again, naming the state Open chose.
    Manifest repaired = set->Current()->manifest();
    repaired.number = set->next_manifest_number_++;
    {
      std::lock_guard<std::mutex> files(set->files_mu_);
      repaired.next_file_number = set->next_file_number_;
    }
    bool committed = false;
    FLOWRAG_RETURN_IF_ERROR(set->WriteManifestAndCurrent(repaired, &committed));
    std::shared_ptr<const SegmentView> old = set->Current();
    std::lock_guard<std::mutex> view(set->view_mu_);
    set->current_.reset(new SegmentView(repaired, old->segments()));
    set->kept_ = {std::make_shared<const Manifest>(repaired)};
  }
  Result<GcStats> gc = set->CollectGarbageLocked(/*remove_tmp=*/true);
  if (!gc.ok()) return gc.status();
  return set;
}

Result<std::shared_ptr<const SegmentSet::Lease>> SegmentSet::OpenLease(const std::string& file) {
  const std::string path = PathOf(file);
  auto lease = std::make_shared<Lease>();
  lease->file = file;
  lease->fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (lease->fd < 0) return OsError(path, "cannot open segment", errno);
  while (::flock(lease->fd, LOCK_SH) != 0) {
    if (errno != EINTR) return OsError(path, "cannot lease", errno);
  }
  // The file may have been deleted between the open and the lease.
  struct stat held, named;
  if (::fstat(lease->fd, &held) != 0) return OsError(path, "cannot stat", errno);
  if (::stat(path.c_str(), &named) != 0) return OsError(path, "cannot stat", errno);
  if (held.st_ino != named.st_ino || held.st_dev != named.st_dev) {
    return Status::NotFound(path + ": deleted while being opened");
  }
  FLOWRAG_ASSIGN_OR_RETURN(lease->reader, SegmentReader::Open(path));
  FLOWRAG_ASSIGN_OR_RETURN(lease->fingerprint, HeaderFingerprint(lease->fd, path));
  std::shared_ptr<const Lease> shared = std::move(lease);
  std::lock_guard<std::mutex> lock(files_mu_);
  leased_[file] = shared;
  return shared;
}

Status SegmentSet::Lease::CheckIs(std::string_view kind, uint64_t id, uint64_t file_bytes,
                                  uint64_t recorded_fingerprint) const {
  const SegmentInfo& info = reader->info();
  if (info.kind != kind || info.segment_id != id) {
    return Status::Corruption(reader->path() + ": a segment of kind '" + info.kind + "' and id " +
                              std::to_string(info.segment_id) + ", the manifest says '" +
                              std::string(kind) + "' and " + std::to_string(id));
  }
  if (info.file_bytes != file_bytes || fingerprint != recorded_fingerprint) {
    return Status::Corruption(reader->path() + ": " + std::to_string(info.file_bytes) +
                              " bytes with header checksum " + Hex(fingerprint) +
                              ", the manifest says " + std::to_string(file_bytes) + " and " +
                              Hex(recorded_fingerprint) + ": replaced or altered");
  }
  return Status::Ok();
}

Result<LiveSegment> SegmentSet::OpenLive(const SegmentRecord& record, const LiveSegment* reusable) {
  LiveSegment live;
  live.record = record;
  if (reusable != nullptr && reusable->record.file_bytes == record.file_bytes &&
      reusable->record.fingerprint == record.fingerprint && reusable->record.kind == record.kind) {
    live.reader = reusable->reader;
  } else {
    FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const Lease> lease, OpenLease(record.file_name()));
    FLOWRAG_RETURN_IF_ERROR(
        lease->CheckIs(record.kind, record.id, record.file_bytes, record.fingerprint));
    live.reader = Lease::ReaderOf(lease);
  }
  const TombstoneRecord& t = record.tombstones;
  if (t.number == 0) return live;
  if (reusable != nullptr && reusable->record.tombstones == t && reusable->tombstones) {
    live.tombstones = reusable->tombstones;
    live.deleted = reusable->deleted;
    return live;
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const Lease> lease,
                           OpenLease(SegmentFileName(t.number, kTombstoneKind)));
  FLOWRAG_RETURN_IF_ERROR(lease->CheckIs(kTombstoneKind, record.id, t.file_bytes, t.fingerprint));
  FLOWRAG_ASSIGN_OR_RETURN(live.deleted, ReadTombstoneRows(*lease->reader, record));
  live.tombstones = Lease::ReaderOf(lease);
  return live;
}

Result<std::shared_ptr<const SegmentView>> SegmentSet::BuildView(
    Manifest manifest, const std::shared_ptr<const SegmentView>& reuse) {
  std::vector<LiveSegment> live;
  live.reserve(manifest.segments.size());
  for (const SegmentRecord& r : manifest.segments) {
    const LiveSegment* reusable = reuse ? reuse->Find(r.id) : nullptr;
    FLOWRAG_ASSIGN_OR_RETURN(LiveSegment s, OpenLive(r, reusable));
    live.push_back(std::move(s));
  }
  return std::shared_ptr<const SegmentView>(new SegmentView(std::move(manifest), std::move(live)));
}

Result<std::shared_ptr<const SegmentView>> SegmentSet::LoadManifest(
    uint64_t number, const std::shared_ptr<const SegmentView>& reuse) {
  const std::string path = PathOf(ManifestFileName(number));
  FLOWRAG_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  FLOWRAG_ASSIGN_OR_RETURN(Manifest manifest, ParseManifest(bytes, path));
  if (manifest.number != number) {
    return Status::Corruption(path + ": holds manifest number " + std::to_string(manifest.number));
  }
  return BuildView(std::move(manifest), reuse);
}

Result<uint64_t> SegmentSet::ReadCurrentFile() const {
  const std::string path = PathOf(std::string(kCurrentFileName));
  FLOWRAG_ASSIGN_OR_RETURN(std::string bytes, ReadWholeFile(path));
  return ParseCurrent(bytes, path);
}

Status SegmentSet::LoadNewest(bool* fell_back) {
  // 1. What CURRENT names, read again when its files vanish meanwhile.
  std::optional<Status> current_problem;
  std::optional<uint64_t> tried;
  std::shared_ptr<const SegmentView> view;
  for (int attempt = 0; !view; ++attempt) {
    Result<uint64_t> named = ReadCurrentFile();
    if (!named.ok()) {
      if (!FallsBack(named.status())) return named.status();
      current_problem = named.status();
      break;
    }
    tried = *named;
    Result<std::shared_ptr<const SegmentView>> loaded = LoadManifest(*named, nullptr);
    if (loaded.ok()) {
      view = *loaded;
      break;
    }
    if (!FallsBack(loaded.status())) return loaded.status();
    if (loaded.status().code() == StatusCode::kNotFound && attempt < options_.open_retries) {
      Result<uint64_t> again = ReadCurrentFile();
      if (again.ok() && *again != *named) continue;  // another process published meanwhile
    }
    open_notes_.push_back(loaded.status());
    break;
  }
  // 2. The numbers in use, and the manifests to fall back to.
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> names, ListFiles(dir_));
  std::vector<uint64_t> manifests;
  uint64_t next_file = 1;
  for (const std::string& name : names) {
    std::string_view base = name;
    if (EndsWith(base, kTmpSuffix)) base.remove_suffix(kTmpSuffix.size());
    if (std::optional<uint64_t> n = ParseManifestFileName(base)) {
      if (base.size() == name.size()) manifests.push_back(*n);
      next_manifest_number_ = std::max(next_manifest_number_, *n + 1);
    } else if (std::optional<SegmentFileId> f = ParseSegmentFileName(base)) {
      next_file = std::max(next_file, f->number + 1);
    }
  }
  if (tried) next_manifest_number_ = std::max(next_manifest_number_, *tried + 1);
  // 3. Otherwise the highest valid manifest, or nothing. A missing CURRENT
  // beside no manifest is a new set, not a fallback.
  if (!view) {
    if (current_problem &&
        !(current_problem->code() == StatusCode::kNotFound && manifests.empty())) {
      open_notes_.push_back(*current_problem);
    }
    std::sort(manifests.rbegin(), manifests.rend());
    for (uint64_t n : manifests) {
      if (tried && n == *tried) continue;
      Result<std::shared_ptr<const SegmentView>> loaded = LoadManifest(n, nullptr);
      if (loaded.ok()) {
        view = *loaded;
        break;
      }
      if (!FallsBack(loaded.status())) return loaded.status();
      open_notes_.push_back(loaded.status());
    }
  }
  *fell_back = !open_notes_.empty();
  if (!view) {
    Manifest empty;
    empty.next_file_number = next_file;
    view.reset(new SegmentView(std::move(empty), {}));
  }
  next_manifest_number_ = std::max(next_manifest_number_, view->number() + 1);
  {
    std::lock_guard<std::mutex> lock(files_mu_);
    next_file_number_ = std::max({next_file_number_, next_file, view->manifest().next_file_number});
  }
  kept_ = {std::make_shared<const Manifest>(view->manifest())};
  std::lock_guard<std::mutex> lock(view_mu_);
  current_ = std::move(view);
  return Status::Ok();
}

std::shared_ptr<const SegmentView> SegmentSet::Current() const {
  std::lock_guard<std::mutex> lock(view_mu_);
  return current_;
}

Result<std::shared_ptr<const SegmentView>> SegmentSet::Refresh() {
  if (writable()) return Current();
  std::lock_guard<std::mutex> lock(publish_mu_);
  for (int attempt = 0;; ++attempt) {
    Result<uint64_t> named = ReadCurrentFile();
    if (!named.ok()) {
      // No CURRENT yet: nothing was published.
      if (named.status().code() == StatusCode::kNotFound && Current()->number() == 0) {
        return Current();
      }
      return named.status();
    }
    const std::shared_ptr<const SegmentView> old = Current();
    if (*named == old->number()) return old;
    Result<std::shared_ptr<const SegmentView>> loaded = LoadManifest(*named, old);
    if (!loaded.ok()) {
      Result<uint64_t> again = ReadCurrentFile();
      const bool raced = loaded.status().code() == StatusCode::kNotFound && again.ok() &&
                         *again != *named && attempt < options_.open_retries;
      if (raced) continue;
      return loaded.status();
    }
    {
      std::lock_guard<std::mutex> files(files_mu_);
      PruneLeasesLocked();
    }
    std::lock_guard<std::mutex> view(view_mu_);
    current_ = *loaded;
    return current_;
  }
}

// ---------------------------------------------------------------------------
// File names

Status SegmentSet::CheckWritable(std::string_view what) const {
  if (writable()) return Status::Ok();
  return Status::FailedPrecondition(dir_ + ": " + std::string(what) +
                                    " needs a writable segment set");
}

uint64_t SegmentSet::AllocateNumber(std::string_view kind) {
  std::lock_guard<std::mutex> lock(files_mu_);
  const uint64_t n = next_file_number_++;
  pending_.insert(SegmentFileName(n, kind));
  return n;
}

Result<NewSegmentFile> SegmentSet::NewSegmentPath(std::string_view kind) {
  FLOWRAG_RETURN_IF_ERROR(CheckWritable("NewSegmentPath"));
  if (!IsSegmentKind(kind) || kind == kTombstoneKind) {
    return Status::InvalidArgument(dir_ + ": segment kind '" + std::string(kind.substr(0, 40)) +
                                   "' is not 1-23 bytes of [a-z0-9_.-] other than tombstones");
  }
  const uint64_t id = AllocateNumber(kind);
  const std::string file = SegmentFileName(id, kind);
  return NewSegmentFile{id, file, PathOf(file)};
}

Result<TombstoneFile> SegmentSet::WriteTombstoneFor(uint64_t segment_id, int64_t generation,
                                                    std::span<const uint64_t> rows) {
  const uint64_t number = AllocateNumber(kTombstoneKind);
  const std::string file = SegmentFileName(number, kTombstoneKind);
  Status st = WriteTombstoneFile(PathOf(file), segment_id, generation, rows);
  if (!st.ok()) {
    AbandonFile(file);
    return st;
  }
  return TombstoneFile{segment_id, number, file, rows.size()};
}

Result<TombstoneFile> SegmentSet::WriteTombstones(uint64_t segment_id,
                                                  std::span<const uint64_t> rows) {
  FLOWRAG_RETURN_IF_ERROR(CheckWritable("WriteTombstones"));
  const std::shared_ptr<const SegmentView> view = Current();
  const LiveSegment* s = view->Find(segment_id);
  if (s == nullptr) {
    return Status::InvalidArgument(dir_ + ": no live segment " + std::to_string(segment_id) +
                                   " in manifest " + std::to_string(view->number()));
  }
  if (!rows.empty() && rows.back() >= s->record.rows) {
    return Status::InvalidArgument(dir_ + ": row " + std::to_string(rows.back()) + " of segment " +
                                   std::to_string(segment_id) + " of " +
                                   std::to_string(s->record.rows) + " rows");
  }
  return WriteTombstoneFor(segment_id, view->generation(), rows);
}

void SegmentSet::AbandonFile(const std::string& file) {
  std::lock_guard<std::mutex> lock(files_mu_);
  pending_.erase(file);
}

// ---------------------------------------------------------------------------
// Publishing

void SegmentSet::Hook(PublishStep step) const {
  if (options_.crash_hook) options_.crash_hook(step);
}

Status SegmentSet::WriteManifestAndCurrent(const Manifest& manifest, bool* committed) {
  *committed = false;
  const std::string name = ManifestFileName(manifest.number);
  const std::string path = PathOf(name);
  const std::string tmp = path + std::string(kTmpSuffix);
  FLOWRAG_RETURN_IF_ERROR(WriteAndSync(tmp, EncodeManifest(manifest)));
  Hook(PublishStep::kManifestTmpWritten);
  FLOWRAG_RETURN_IF_ERROR(RenameFile(tmp, path));
  Hook(PublishStep::kManifestRenamed);
  FLOWRAG_RETURN_IF_ERROR(SyncDirectory(dir_));
  const std::string current = PathOf(std::string(kCurrentFileName));
  const std::string current_tmp = current + std::string(kTmpSuffix);
  FLOWRAG_RETURN_IF_ERROR(WriteAndSync(current_tmp, EncodeCurrent(manifest.number)));
  Hook(PublishStep::kCurrentTmpWritten);
  FLOWRAG_RETURN_IF_ERROR(RenameFile(current_tmp, current));
  *committed = true;
  Hook(PublishStep::kCurrentRenamed);
  Status synced = SyncDirectory(dir_);
  if (!synced.ok()) {
    return Status(synced.code(),
                  "manifest " + std::to_string(manifest.number) +
                      " is published but may not survive a power loss: " + synced.message());
  }
  return Status::Ok();
}

// Checks an edit against the newest manifest and builds the view it makes,
// writing the tombstone files it needs (deletes, and deletes carried over a
// merge). Nothing is published: Publish writes the manifest.
class SegmentSet::EditBuilder {
 public:
  EditBuilder(SegmentSet* set, const SegmentEdit& edit)
      : set_(set), edit_(edit), cur_(set->Current()) {}

  Result<std::shared_ptr<const SegmentView>> Build() {
    for (const LiveSegment& s : cur_->segments()) next_.emplace(s.record.id, s);
    bool needs_base = !edit_.tombstones.empty();
    for (const SegmentEdit::AddedSegment& a : edit_.add) needs_base |= !a.merged_from.empty();
    if (needs_base && !edit_.base) {
      return Invalid("a merge (merged_from) or a tombstone replacement needs edit.base");
    }
    if (edit_.base && edit_.base->number() > cur_->number()) {
      return Invalid("base manifest " + std::to_string(edit_.base->number()) +
                     " is newer than the newest, " + std::to_string(cur_->number()));
    }
    for (uint64_t id : edit_.remove) FLOWRAG_RETURN_IF_ERROR(Remove(id));
    for (const SegmentEdit::AddedSegment& a : edit_.add) {
      for (uint64_t id : a.merged_from) FLOWRAG_RETURN_IF_ERROR(Remove(id));
    }
    for (const SegmentEdit::AddedSegment& a : edit_.add) FLOWRAG_RETURN_IF_ERROR(Add(a));
    for (const SegmentEdit::RowDeletes& d : edit_.deletes) FLOWRAG_RETURN_IF_ERROR(Delete(d));
    for (const TombstoneFile& t : edit_.tombstones) FLOWRAG_RETURN_IF_ERROR(Replace(t));
    Manifest manifest;
    manifest.number = set_->next_manifest_number_;
    manifest.generation = generation();
    {
      std::lock_guard<std::mutex> lock(set_->files_mu_);
      manifest.next_file_number = set_->next_file_number_;
    }
    std::vector<LiveSegment> live;
    for (auto& [id, s] : next_) {
      manifest.segments.push_back(s.record);
      live.push_back(std::move(s));
    }
    return std::shared_ptr<const SegmentView>(
        new SegmentView(std::move(manifest), std::move(live)));
  }

  // Deletes the tombstone files Build wrote: the edit is not published.
  void Discard() {
    for (const std::string& f : written_) {
      ::unlink(set_->PathOf(f).c_str());
      set_->AbandonFile(f);
    }
  }

  // The pending files the edit publishes.
  const std::vector<std::string>& published_files() const { return published_; }

 private:
  Status Invalid(const std::string& what) const {
    return Status::InvalidArgument(set_->dir_ + ": edit of manifest " +
                                   std::to_string(cur_->number()) + ": " + what);
  }
  Status Stale(const std::string& what) const {
    return Status::FailedPrecondition(set_->dir_ + ": edit based on manifest " +
                                      std::to_string(edit_.base->number()) + ", newest " +
                                      std::to_string(cur_->number()) + ": " + what);
  }
  int64_t generation() const { return edit_.generation.value_or(cur_->generation()); }
  static std::string Segment(uint64_t id) { return "segment " + std::to_string(id); }

  Status Remove(uint64_t id) {
    if (removed_.count(id)) return Invalid(Segment(id) + " removed twice");
    if (!cur_->Find(id)) {
      if (edit_.base && edit_.base->Find(id)) return Stale(Segment(id) + " was removed since");
      return Invalid("no live " + Segment(id));
    }
    next_.erase(id);
    removed_.insert(id);
    return Status::Ok();
  }

  Status CheckPending(const std::string& file) const {
    std::lock_guard<std::mutex> lock(set_->files_mu_);
    if (set_->pending_.count(file)) return Status::Ok();
    return Invalid("'" + file.substr(0, 80) +
                   "' was not handed out by this set, or is published already");
  }

  Status Add(const SegmentEdit::AddedSegment& a) {
    const std::optional<SegmentFileId> name = ParseSegmentFileName(a.file);
    if (!name || name->kind == kTombstoneKind) {
      return Invalid("'" + a.file.substr(0, 80) + "' is no segment file name");
    }
    FLOWRAG_RETURN_IF_ERROR(CheckPending(a.file));
    if (next_.count(name->number) || removed_.count(name->number)) {
      return Invalid("'" + a.file + "' added twice");
    }
    FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const Lease> lease, set_->OpenLease(a.file));
    const SegmentInfo& info = lease->reader->info();
    if (info.kind != name->kind || info.segment_id != name->number) {
      return Invalid(lease->reader->path() + " holds a segment of kind '" + info.kind +
                     "' and id " + std::to_string(info.segment_id) + ", not as named");
    }
    LiveSegment live;
    live.record = SegmentRecord{name->number,
                                name->kind,
                                info.file_bytes,
                                lease->fingerprint,
                                a.rows,
                                SizeTier(info.file_bytes, set_->options_.merge),
                                {}};
    live.reader = Lease::ReaderOf(lease);
    if (!a.merged_from.empty()) FLOWRAG_RETURN_IF_ERROR(CarryDeletes(a, &live));
    published_.push_back(a.file);
    next_.emplace(name->number, std::move(live));
    return Status::Ok();
  }

  // The rows of a merge's segments deleted since base, as the merged
  // segment's tombstones (segment_set.h: Merges and tombstones).
  Status CarryDeletes(const SegmentEdit::AddedSegment& a, LiveSegment* merged) {
    FLOWRAG_ASSIGN_OR_RETURN(MergeRowMap map, MergeRowMap::Build(*edit_.base, a.merged_from));
    if (map.merged_rows() != a.rows) {
      return Invalid("'" + a.file + "' holds " + std::to_string(a.rows) +
                     " rows, the segments it merges " + std::to_string(map.merged_rows()) +
                     " live rows in manifest " + std::to_string(edit_.base->number()));
    }
    std::vector<uint64_t> carried;
    for (uint64_t id : a.merged_from) {
      FLOWRAG_ASSIGN_OR_RETURN(std::vector<uint64_t> since,
                               TombstonesSince(*edit_.base, *cur_, id));
      FLOWRAG_ASSIGN_OR_RETURN(std::vector<uint64_t> mapped, map.MapRows(id, since));
      carried.insert(carried.end(), mapped.begin(), mapped.end());
    }
    if (carried.empty()) return Status::Ok();
    return WriteAndSet(merged, carried);
  }

  // The live segment of this edit whose tombstones change: one that was
  // live and is not removed, changed once.
  Result<LiveSegment*> Target(uint64_t id) {
    if (removed_.count(id)) return Invalid(Segment(id) + " is removed by the same edit");
    auto it = next_.find(id);
    if (it == next_.end() || !cur_->Find(id)) {
      if (edit_.base && edit_.base->Find(id)) return Stale(Segment(id) + " was removed since");
      return Invalid("no live " + Segment(id));
    }
    if (!touched_.insert(id).second) {
      return Invalid("the tombstones of " + Segment(id) + " change twice in one edit");
    }
    return &it->second;
  }

  Status Delete(const SegmentEdit::RowDeletes& d) {
    FLOWRAG_ASSIGN_OR_RETURN(LiveSegment * target, Target(d.segment_id));
    for (size_t i = 0; i < d.rows.size(); ++i) {
      if ((i > 0 && d.rows[i] <= d.rows[i - 1]) || d.rows[i] >= target->record.rows) {
        return Invalid("rows to delete of " + Segment(d.segment_id) + " (" +
                       std::to_string(target->record.rows) +
                       " rows) do not ascend strictly below its row count at " + std::to_string(i));
      }
    }
    std::vector<uint64_t> rows = UnionRows(target->deleted, d.rows);
    if (rows.size() == target->deleted.size()) return Status::Ok();  // deleted already
    return WriteAndSet(target, rows);
  }

  Status Replace(const TombstoneFile& t) {
    FLOWRAG_ASSIGN_OR_RETURN(LiveSegment * target, Target(t.segment_id));
    FLOWRAG_RETURN_IF_ERROR(CheckPending(t.file));
    const LiveSegment* before = edit_.base->Find(t.segment_id);
    if (before == nullptr) return Stale(Segment(t.segment_id) + " was added since");
    if (before->record.tombstones != target->record.tombstones) {
      return Stale("the tombstones of " + Segment(t.segment_id) +
                   " changed since: read them again and write the union");
    }
    FLOWRAG_RETURN_IF_ERROR(SetTombstones(target, t));
    published_.push_back(t.file);
    return Status::Ok();
  }

  Status WriteAndSet(LiveSegment* target, std::span<const uint64_t> rows) {
    FLOWRAG_ASSIGN_OR_RETURN(TombstoneFile t,
                             set_->WriteTombstoneFor(target->record.id, generation(), rows));
    written_.push_back(t.file);
    published_.push_back(t.file);
    return SetTombstones(target, t);
  }

  // Opens tombstone file `t` and makes it `target`'s.
  Status SetTombstones(LiveSegment* target, const TombstoneFile& t) {
    const std::optional<SegmentFileId> name = ParseSegmentFileName(t.file);
    if (!name || name->kind != kTombstoneKind || name->number != t.number) {
      return Invalid("'" + t.file.substr(0, 80) + "' is no tombstone file name");
    }
    FLOWRAG_ASSIGN_OR_RETURN(std::shared_ptr<const Lease> lease, set_->OpenLease(t.file));
    SegmentRecord record = target->record;
    record.tombstones =
        TombstoneRecord{t.number, lease->reader->info().file_bytes, lease->fingerprint, t.deleted};
    FLOWRAG_ASSIGN_OR_RETURN(target->deleted, ReadTombstoneRows(*lease->reader, record));
    target->record = record;
    target->tombstones = Lease::ReaderOf(lease);
    return Status::Ok();
  }

  SegmentSet* const set_;
  const SegmentEdit& edit_;
  const std::shared_ptr<const SegmentView> cur_;
  std::map<uint64_t, LiveSegment> next_;  // the new view's segments by id
  std::set<uint64_t> removed_;
  std::set<uint64_t> touched_;        // segments whose tombstones change
  std::vector<std::string> written_;  // tombstone files Build wrote
  std::vector<std::string> published_;
};

Result<std::shared_ptr<const SegmentView>> SegmentSet::Publish(const SegmentEdit& edit) {
  FLOWRAG_RETURN_IF_ERROR(CheckWritable("Publish"));
  std::lock_guard<std::mutex> lock(publish_mu_);
  EditBuilder builder(this, edit);
  Result<std::shared_ptr<const SegmentView>> view = builder.Build();
  if (!view.ok()) {
    builder.Discard();
    return view;
  }
  bool committed = false;
  Status written = WriteManifestAndCurrent((*view)->manifest(), &committed);
  ++next_manifest_number_;  // used even by a failed write: numbers only grow
  if (!committed) {
    builder.Discard();
    return written;
  }
  {
    std::lock_guard<std::mutex> files(files_mu_);
    for (const std::string& f : builder.published_files()) pending_.erase(f);
  }
  kept_.push_back(std::make_shared<const Manifest>((*view)->manifest()));
  const size_t keep = std::max<size_t>(options_.keep_manifests, 1);
  if (kept_.size() > keep) kept_.erase(kept_.begin(), kept_.end() - keep);
  {
    std::lock_guard<std::mutex> current(view_mu_);
    current_ = *view;
  }
  // A publish does not fail for its garbage: last_gc() has the outcome.
  Result<GcStats> gc = CollectGarbageLocked(/*remove_tmp=*/false);
  if (!gc.ok()) {
    std::lock_guard<std::mutex> files(files_mu_);
    last_gc_ = GcStats{};
    last_gc_.status = gc.status();
  }
  if (!written.ok()) return written;
  return view;
}

// ---------------------------------------------------------------------------
// Garbage collection

void SegmentSet::PruneLeasesLocked() {
  for (auto it = leased_.begin(); it != leased_.end();) {
    it = it->second.expired() ? leased_.erase(it) : std::next(it);
  }
}

GcStats SegmentSet::last_gc() const {
  std::lock_guard<std::mutex> lock(files_mu_);
  return last_gc_;
}

Result<GcStats> SegmentSet::CollectGarbage() {
  FLOWRAG_RETURN_IF_ERROR(CheckWritable("CollectGarbage"));
  std::lock_guard<std::mutex> lock(publish_mu_);
  return CollectGarbageLocked(/*remove_tmp=*/false);
}

Result<GcStats> SegmentSet::CollectGarbageLocked(bool remove_tmp) {
  std::set<std::string> keep = {std::string(kCurrentFileName), std::string(kLockFileName)};
  for (const std::shared_ptr<const Manifest>& m : kept_) {
    if (m->number != 0) keep.insert(ManifestFileName(m->number));
    for (const SegmentRecord& r : m->segments) {
      keep.insert(r.file_name());
      if (r.tombstones.number != 0) {
        keep.insert(SegmentFileName(r.tombstones.number, kTombstoneKind));
      }
    }
  }
  FLOWRAG_ASSIGN_OR_RETURN(std::vector<std::string> names, ListFiles(dir_));
  std::vector<std::string> tmps, manifests, data;
  size_t held = 0;
  {
    std::lock_guard<std::mutex> lock(files_mu_);
    PruneLeasesLocked();
    for (const std::string& name : names) {
      if (keep.count(name)) continue;
      std::string_view base = name;
      const bool tmp = EndsWith(base, kTmpSuffix);
      if (tmp) base.remove_suffix(kTmpSuffix.size());
      const bool ours =
          base == kCurrentFileName || ParseManifestFileName(base) || ParseSegmentFileName(base);
      if (!ours) continue;  // a file the set does not know: left alone
      if (tmp) {
        if (remove_tmp) tmps.push_back(name);
      } else if (ParseManifestFileName(base)) {
        manifests.push_back(name);
      } else if (leased_.count(name)) {
        ++held;  // a view of this process holds it
      } else if (!pending_.count(name)) {
        data.push_back(name);
      }
    }
  }
  GcStats stats;
  stats.files_leased = held;
  auto remove = [&](const std::string& name, bool leasable) {
    const std::string path = PathOf(name);
    int fd = -1;
    if (leasable) {
      fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        if (errno != ENOENT && stats.status.ok())
          stats.status = OsError(path, "cannot open", errno);
        return;
      }
      if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(fd);
        ++stats.files_leased;
        return;
      }
    }
    struct stat st;
    const uint64_t bytes = ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    const int rc = ::unlink(path.c_str());
    const int err = errno;
    if (fd >= 0) ::close(fd);
    if (rc != 0) {
      if (err != ENOENT && stats.status.ok()) stats.status = OsError(path, "cannot delete", err);
      return;
    }
    ++stats.files_deleted;
    stats.bytes_deleted += bytes;
    Hook(PublishStep::kGcFileDeleted);
  };
  // Manifests before the files they name (segment_set.h).
  for (const std::string& name : tmps) remove(name, false);
  for (const std::string& name : manifests) remove(name, false);
  for (const std::string& name : data) remove(name, true);
  std::lock_guard<std::mutex> lock(files_mu_);
  last_gc_ = stats;
  return stats;
}

}  // namespace flowrag
