#include "agent/progress_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "proto/phase_names.h"

namespace trainyard::agent {
namespace {

// A metric's value: a finite number, NaN for null (measured, not a number: a loss gone NaN), or
// absent. Anything else makes the line not one of ours.
bool metric_value(const Json& record, const char* key, double& out, bool& present) {
  const auto it = record.find(key);
  if (it == record.end()) return true;
  present = true;
  if (it->is_null()) {
    out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (!it->is_number()) return false;
  out = it->get<double>();
  return true;
}

bool whole_number(const Json& value, std::int64_t& out) {
  if (!value.is_number_integer() || (value.is_number_unsigned() && value.get<std::uint64_t>() > INT64_MAX)) return false;
  out = value.get<std::int64_t>();
  return out >= 0;
}

}  // namespace

bool apply_progress_line(std::string_view line, ProgressUpdate& update) {
  if (line.size() > kMaxLineBytes) return false;
  const Json record = Json::parse(line, nullptr, false);
  if (!record.is_object()) return false;
  std::optional<std::int64_t> step;
  if (const auto it = record.find("step"); it != record.end()) {
    std::int64_t value = 0;
    if (!whole_number(*it, value)) return false;
    step = value;
  }
  if (const auto it = record.find("phase"); it != record.end()) {
    if (!it->is_string() || it->get_ref<const std::string&>().size() > 128) return false;
    update.phase = it->get<std::string>();
  }
  if (const auto it = record.find("phase_ended"); it != record.end()) {
    const auto seconds = record.find("seconds");
    if (!it->is_string() || seconds == record.end() || !seconds->is_number() || !(seconds->get<double>() >= 0) ||
        seconds->get<double>() > 1e9) {
      return false;
    }
    const PhaseKind kind = phase_kind(it->get_ref<const std::string&>());
    if (kind == PhaseKind::checkpoint || kind == PhaseKind::save) {
      update.checkpoint_ms += static_cast<std::int64_t>(std::llround(seconds->get<double>() * 1000));
    }
  }
  if (const auto it = record.find("checkpoint_written"); it != record.end()) {
    if (!it->is_string() || !step || it->get_ref<const std::string&>().size() > 4096) return false;
    update.checkpoints.push_back({it->get<std::string>(), *step});
    return true;  // its step names the checkpoint, not training progress
  }
  if (!step) return true;
  update.step = std::max(update.step.value_or(0), *step);
  StepMetric metric;
  metric.step = *step;
  bool measured = false;
  for (auto [key, field] : {std::pair{"loss", &metric.loss}, {"lr", &metric.lr}, {"grad_norm", &metric.grad_norm},
                            {"param_norm", &metric.param_norm}, {"samples_per_s", &metric.samples_per_s}}) {
    *field = std::numeric_limits<double>::quiet_NaN();
    if (!metric_value(record, key, *field, measured)) return false;
  }
  if (measured) update.metrics.push_back(metric);
  return true;
}

std::optional<ProgressUpdate> parse_step_file(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::int64_t step = 0;
  if (!(in >> step) || step < 0) return std::nullopt;
  ProgressUpdate update;
  update.step = step;
  std::string phase;
  if (in >> phase) update.phase = phase;
  return update;
}

ProgressUpdate ProgressFile::read() {
  ProgressUpdate update;
  const int fd = ::open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return update;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return update;
  }
  if (st.st_size < offset_) offset_ = 0;  // replaced or truncated: read it anew
  std::string text(static_cast<std::size_t>(std::min<std::int64_t>(st.st_size - offset_, kMaxReadBytes)), '\0');
  const ssize_t n = text.empty() ? 0 : ::pread(fd, text.data(), text.size(), offset_);
  ::close(fd);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  if (offset_ == 0 && !text.starts_with('{')) {
    return parse_step_file(std::string_view(text).substr(0, 128)).value_or(ProgressUpdate{});
  }
  std::size_t consumed = 0;
  for (std::size_t end; (end = text.find('\n', consumed)) != std::string::npos; consumed = end + 1) {
    const std::string_view line = std::string_view(text).substr(consumed, end - consumed);
    if (!line.empty() && !apply_progress_line(line, update)) ++update.skipped_lines;
  }
  // A full read without a line end is one line too long: skipped whole.
  if (consumed == 0 && text.size() == kMaxReadBytes) {
    consumed = text.size();
    ++update.skipped_lines;
  }
  offset_ += static_cast<std::int64_t>(consumed);
  return update;
}

}  // namespace trainyard::agent
