#include "checkpoint/checkpoint.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <stdexcept>
#include <system_error>

#include "proto/json_reader.h"
#include "proto/sha256.h"

namespace trainyard::checkpoint {
namespace fs = std::filesystem;
namespace {

constexpr int kFormat = 1;
constexpr std::string_view kStepPrefix = "step-";
constexpr const char* kManifest = "manifest.json";
constexpr const char* kState = "state.json";
constexpr const char* kParams = "params.bin";
constexpr const char* kAdamM = "adam_m.bin";
constexpr const char* kAdamV = "adam_v.bin";

struct FileDigest {
  std::uint64_t bytes = 0;
  std::string sha256;
};

// A checkpoint file opened for reading. A job writes the checkpoint directory, so anything in it
// may be hostile: a symlink is not followed, a FIFO or device does not block the open
// (O_NONBLOCK) and is refused, only a regular file is read.
class RegularFile {
 public:
  explicit RegularFile(const fs::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)) {
    struct stat st {};
    if (fd_ >= 0 && (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))) close_fd();
    if (fd_ >= 0) size_ = static_cast<std::uint64_t>(st.st_size);
  }
  ~RegularFile() { close_fd(); }
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  std::uint64_t size() const { return size_; }
  // Reads up to `buffer.size()` bytes; 0 at the end, -1 on an error.
  ssize_t read_some(std::span<char> buffer) {
    for (;;) {
      const ssize_t n = ::read(fd_, buffer.data(), buffer.size());
      if (n < 0 && errno == EINTR) continue;
      return n;
    }
  }

 private:
  void close_fd() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  int fd_;
  std::uint64_t size_ = 0;
};

// Streams the file in bounded chunks, so verifying a large checkpoint does not hold it in memory.
std::optional<FileDigest> digest_file(const fs::path& path) {
  RegularFile file(path);
  if (!file.ok()) return std::nullopt;
  Sha256 sha;
  FileDigest digest;
  std::vector<char> buffer(1 << 20);
  for (;;) {
    const ssize_t got = file.read_some(buffer);
    if (got < 0) return std::nullopt;
    if (got == 0) break;
    sha.update(std::as_bytes(std::span(buffer.data(), static_cast<std::size_t>(got))));
    digest.bytes += static_cast<std::uint64_t>(got);
  }
  digest.sha256 = sha.hex();
  return digest;
}

[[noreturn]] void throw_errno(const std::string& what, const fs::path& path) {
  throw std::system_error(errno, std::generic_category(), what + " " + path.string());
}

void fsync_path(const fs::path& path, int flags) {
  const int fd = ::open(path.c_str(), flags | O_CLOEXEC);
  if (fd < 0) throw_errno("open", path);
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw_errno("fsync", path);
}

// Creates `path`, which must not exist: a name planted in its place (a symlink, a FIFO) is refused
// rather than written through or blocked on.
void write_durably(const fs::path& path, std::span<const std::byte> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno("open", path);
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw_errno("write", path);
    }
    written += static_cast<std::size_t>(n);
  }
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) throw_errno("fsync", path);
}

// The whole of a regular file of at most `limit` bytes; empty when it is not one.
std::optional<std::vector<std::byte>> read_file(const fs::path& path, std::uint64_t limit) {
  RegularFile file(path);
  if (!file.ok() || file.size() > limit) return std::nullopt;
  std::vector<std::byte> bytes;
  std::vector<char> buffer(std::min<std::uint64_t>(limit, 1 << 20) + 1);
  for (;;) {
    const ssize_t got = file.read_some(buffer);
    if (got < 0) return std::nullopt;
    if (got == 0) return bytes;
    const auto* begin = reinterpret_cast<const std::byte*>(buffer.data());
    bytes.insert(bytes.end(), begin, begin + got);
    if (bytes.size() > limit) return std::nullopt;  // it grew since fstat
  }
}

std::span<const std::byte> as_bytes(const std::string& text) { return std::as_bytes(std::span(text)); }

nlohmann::json state_json(const TrainingState& s) {
  return {{"format", kFormat},
          {"step", s.step},
          {"data_position", s.data_position},
          {"rounding_rng", s.rounding_rng},
          {"dims", s.dims},
          {"world_size", s.world_size}};
}

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// manifest.json and state.json are a few hundred bytes; anything far larger is not ours.
constexpr std::uint64_t kMaxJsonFileBytes = 1 << 20;
// params.bin and the moments: bounded so a hostile file cannot make the loader exhaust memory.
constexpr std::uint64_t kMaxArrayFileBytes = std::uint64_t{1} << 32;

std::optional<nlohmann::json> parse_json_bytes(const std::vector<std::byte>& bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  try {
    return parse_json_text(text);
  } catch (const InvalidInput&) {
    return std::nullopt;
  }
}

std::optional<nlohmann::json> read_json(const fs::path& path) {
  const auto bytes = read_file(path, kMaxJsonFileBytes);
  if (!bytes) return std::nullopt;
  return parse_json_bytes(*bytes);
}

// Parses a verified state.json and the three arrays; empty on any inconsistency.
// A checkpoint that does not verify or parse: its files come from a job, so they are input.
Error bad(std::string why) { return Error::invalid_input("", std::move(why)); }

Result<TrainingState> parse_state(const fs::path& dir) {
  const auto j = read_json(dir / kState);
  try {
    if (!j || j->value("format", 0) != kFormat) {
      return bad("state.json: unreadable or unknown format");
    }
    TrainingState s;
    s.step = j->at("step").get<std::int64_t>();
    s.data_position = j->at("data_position").get<std::uint64_t>();
    s.rounding_rng = j->at("rounding_rng").get<std::array<std::uint64_t, 4>>();
    s.dims = j->at("dims").get<std::vector<int>>();
    s.world_size = j->at("world_size").get<int>();
    // value() throws if a verified file vanished since: reported like any unreadable state.
    s.params = floats_of(read_file(dir / kParams, kMaxArrayFileBytes).value());
    s.adam_m = floats_of(read_file(dir / kAdamM, kMaxArrayFileBytes).value());
    s.adam_v = floats_of(read_file(dir / kAdamV, kMaxArrayFileBytes).value());
    if (s.adam_m.size() != s.params.size() || s.adam_v.size() != s.params.size()) {
      return bad("optimizer moments and parameters differ in size");
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("state.json: ") + e.what());
  } catch (const std::bad_optional_access&) {
    return bad("a checkpoint file disappeared while loading");
  }
}

}  // namespace

fs::path job_checkpoint_dir(const fs::path& root, std::int64_t job) { return root / ("job-" + std::to_string(job)); }

std::string step_dir_name(std::int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%010lld", static_cast<long long>(step));
  return name;
}

std::optional<std::int64_t> step_of(const fs::path& dir) {
  const std::string name = dir.filename().string();
  if (!name.starts_with(kStepPrefix) || name.size() == kStepPrefix.size()) return std::nullopt;
  const std::string digits = name.substr(kStepPrefix.size());
  if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  if (digits.size() > 18) return std::nullopt;
  return std::stoll(digits);
}

fs::path write_checkpoint(const fs::path& root, const TrainingState& state) {
  create_checkpoint_dir(root);
  const std::string name = step_dir_name(state.step);
  const fs::path temp = root / (".tmp-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(temp);
  fs::create_directory(temp);

  const std::string state_text = state_json(state).dump(2);
  const std::vector<std::pair<const char*, std::span<const std::byte>>> files{
      {kState, as_bytes(state_text)},
      {kParams, std::as_bytes(std::span(state.params))},
      {kAdamM, std::as_bytes(std::span(state.adam_m))},
      {kAdamV, std::as_bytes(std::span(state.adam_v))},
  };
  nlohmann::json listed = nlohmann::json::array();
  for (const auto& [file, bytes] : files) {
    write_durably(temp / file, bytes);
    listed.push_back({{"name", file}, {"bytes", bytes.size()}, {"sha256", sha256_hex(bytes)}});
  }
  const nlohmann::json manifest{{"format", kFormat}, {"step", state.step}, {"files", listed}};
  write_durably(temp / kManifest, as_bytes(manifest.dump(2)));
  fsync_path(temp, O_RDONLY | O_DIRECTORY);

  // A rerun after a resume may reach a step that an earlier attempt already wrote: move the old
  // one aside first, because rename cannot replace a non-empty directory.
  const fs::path final_dir = root / name;
  const fs::path superseded = root / (".old-" + name + "-" + std::to_string(::getpid()));
  const bool replacing = fs::exists(final_dir);
  if (replacing) fs::rename(final_dir, superseded);
  fs::rename(temp, final_dir);
  fsync_path(root, O_RDONLY | O_DIRECTORY);
  if (replacing) fs::remove_all(superseded);
  return final_dir;
}

std::optional<uid_t> owner_uid(const fs::path& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return st.st_uid;
}

std::vector<CheckpointInfo> list_checkpoints(const fs::path& root) {
  std::vector<CheckpointInfo> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root, ec)) {
    // A symlink is not followed: it could lead the reader anywhere the daemon can read.
    if (!fs::is_directory(entry.symlink_status(ec))) continue;
    if (auto step = step_of(entry.path())) found.push_back({entry.path(), *step});
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.step < b.step; });
  return found;
}

Result<void> verify_checkpoint(const fs::path& dir) {
  const auto manifest = read_json(dir / kManifest);
  if (!manifest || !manifest->contains("files") || !(*manifest)["files"].is_array()) {
    return bad("manifest.json: missing or malformed");
  }
  std::vector<std::string> seen;
  try {
    for (const auto& entry : (*manifest)["files"]) {
      const auto file = entry.at("name").get<std::string>();
      if (file.find('/') != std::string::npos || file.starts_with("."))
        return bad("manifest.json: bad file name " + file);
      const auto digest = digest_file(dir / file);
      if (!digest) return bad(file + ": missing or unreadable");
      if (digest->bytes != entry.at("bytes").get<std::uint64_t>()) return bad(file + ": size differs from manifest");
      if (digest->sha256 != entry.at("sha256").get<std::string>()) return bad(file + ": SHA-256 mismatch");
      seen.push_back(file);
    }
  } catch (const nlohmann::json::exception& e) {
    return bad(std::string("manifest.json: ") + e.what());
  }
  for (const char* required : {kState, kParams, kAdamM, kAdamV}) {
    if (std::find(seen.begin(), seen.end(), required) == seen.end())
      return bad(std::string(required) + ": not in manifest");
  }
  return {};
}

Result<TrainingState> load_checkpoint(const fs::path& dir) {
  if (auto verified = verify_checkpoint(dir); !verified) return verified.error();
  return parse_state(dir);
}

std::optional<CheckpointInfo> newest_verified_checkpoint(const fs::path& root) {
  const auto all = list_checkpoints(root);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const auto verified = verify_checkpoint(it->path);
    if (verified) return *it;
    spdlog::warn("event=checkpoint_skipped path={} step={} problem=\"{}\"", it->path.string(), it->step,
                 verified.error().message);
  }
  return std::nullopt;
}

void prune_checkpoints(const fs::path& root, int keep) {
  const auto all = list_checkpoints(root);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < all.size(); ++i) fs::remove_all(all[i].path);
}

CheckpointWriter::CheckpointWriter(fs::path root, int keep, Done on_done, std::int64_t owner)
    : root_(std::move(root)), keep_(keep), on_done_(std::move(on_done)), owner_(owner), thread_([this] { loop(); }) {}

CheckpointWriter::~CheckpointWriter() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

void CheckpointWriter::submit(TrainingState snapshot) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !pending_; });
  pending_ = std::move(snapshot);
  changed_.notify_all();
}

void CheckpointWriter::wait_idle() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !pending_ && !writing_; });
}

namespace {
constexpr const char* kOwnerFile = "OWNER";
}  // namespace

void create_checkpoint_dir(const fs::path& dir, std::optional<DirOwner> owner) {
  if (dir.has_parent_path()) fs::create_directories(dir.parent_path());
  struct stat st {};
  // Anything else holding the name (a symlink to another job's directory, a file) was planted: it
  // goes, rather than leaving the job without checkpoints (remove does not follow a symlink).
  if (::lstat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode)) fs::remove(dir);
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) throw_errno("mkdir", dir);
  if (::lstat(dir.c_str(), &st) != 0) throw_errno("lstat", dir);
  if (!S_ISDIR(st.st_mode)) throw std::runtime_error(dir.string() + ": replaced by a non-directory while being created");
  // A directory another account made is not the job's, whatever it holds: taking it over would
  // hand the job what that account planted in it, and removing it could destroy someone's data.
  if (owner && st.st_uid != owner->uid && st.st_uid != ::geteuid()) {
    throw std::runtime_error(dir.string() + " already exists and belongs to uid " + std::to_string(st.st_uid) +
                             ", not to the job's account (uid " + std::to_string(owner->uid) +
                             "): refusing to use it (remove it, or give it to that uid, to let the job run)");
  }
  if ((st.st_mode & 07777) != 0700 && ::chmod(dir.c_str(), 0700) != 0) throw_errno("chmod", dir);
  const bool owned = !owner || (st.st_uid == owner->uid && st.st_gid == owner->gid);
  if (!owned && ::lchown(dir.c_str(), owner->uid, owner->gid) != 0) throw_errno("chown", dir);
}

bool has_manifest(const fs::path& dir) {
  std::error_code ec;
  return fs::symlink_status(dir / kManifest, ec).type() != fs::file_type::not_found;
}

std::optional<std::string> manifest_sha256(const fs::path& dir) {
  const auto bytes = read_file(dir / kManifest, kMaxJsonFileBytes);
  if (!bytes) return std::nullopt;
  return sha256_hex(*bytes);
}

void claim_checkpoints(const fs::path& root, std::int64_t attempt_id) {
  create_checkpoint_dir(root);
  const std::string text = std::to_string(attempt_id) + "\n";
  const fs::path temp = root / (std::string(".") + kOwnerFile + ".tmp");
  fs::remove(temp);  // a leftover, or whatever was planted there (remove does not follow links)
  write_durably(temp, std::as_bytes(std::span(text.data(), text.size())));
  fs::rename(temp, root / kOwnerFile);
  fsync_path(root, O_RDONLY | O_DIRECTORY);
}

void remove_stale_claim(const fs::path& root) {
  std::error_code ec;
  fs::remove(root / kOwnerFile, ec);  // remove does not follow links
  if (ec && ec != std::errc::no_such_file_or_directory && ec != std::errc::not_a_directory) {
    throw fs::filesystem_error("removing a stale claim", root / kOwnerFile, ec);
  }
}

std::optional<std::int64_t> checkpoint_owner(const fs::path& root) {
  const auto bytes = read_file(root / kOwnerFile, 64);
  if (!bytes) return std::nullopt;
  const std::string text(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  std::int64_t id = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (error != std::errc() || end == text.data()) return std::nullopt;
  return id;
}

void CheckpointWriter::loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return pending_ || closing_; });
    if (!pending_) return;
    TrainingState state = std::move(*pending_);
    pending_.reset();
    writing_ = true;
    changed_.notify_all();
    lock.unlock();

    CheckpointWriteResult result{state.step, WrittenCheckpoint{}};
    try {
      if (const auto claimed = owner_ ? checkpoint_owner(root_) : std::nullopt; claimed && *claimed != owner_) {
        throw std::runtime_error("fenced: attempt " + std::to_string(*claimed) + " owns " + root_.string() +
                                 " now, not attempt " + std::to_string(owner_));
      }
      WrittenCheckpoint written{write_checkpoint(root_, state), ""};
      const std::optional<std::string> digest = manifest_sha256(written.path);
      if (!digest) throw std::runtime_error("the manifest of " + written.path.string() + " could not be read back");
      written.manifest_sha256 = *digest;
      prune_checkpoints(root_, keep_);
      spdlog::info("event=checkpoint_written step={} path={}", state.step, written.path.string());
      result.written = std::move(written);
    } catch (const std::exception& e) {
      result.written = Error::unavailable(e.what());
      spdlog::error("event=checkpoint_failed step={} root={} error=\"{}\"", state.step, root_.string(), e.what());
    }
    if (on_done_) on_done_(result);

    lock.lock();
    writing_ = false;
    changed_.notify_all();
  }
}

}  // namespace trainyard::checkpoint
