#include "daemon/base/prometheus.h"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

namespace trainyard::daemon::prom {

const char* const kContentType = "text/plain; version=0.0.4; charset=utf-8";

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed UTF-8 sequence at `s[i]` (as Go's utf8.ValidString judges it: no
// overlong forms, no surrogates, nothing above U+10FFFF), or 0 if there is none.
std::size_t utf8_sequence(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  if (byte(i + 1) < lo || byte(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (byte(i + k) < 0x80 || byte(i + k) > 0xBF) return 0;
  }
  return len;
}

void check_names(const std::string& name, const LabelNames& label_names) {
  if (!valid_metric_name(name)) throw std::invalid_argument("invalid metric name: " + name);
  for (const auto& label : label_names) {
    if (!valid_label_name(label) || label == "le") {
      throw std::invalid_argument("invalid label name " + label + " of " + name);
    }
  }
}

template <typename Series>
const Series* find_series(const std::map<LabelValues, Series>& series, const LabelValues& labels) {
  auto it = series.find(labels);
  return it == series.end() ? nullptr : &it->second;
}

}  // namespace

std::string escape_label_value(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  for (std::size_t i = 0; i < value.size();) {
    const std::size_t len = utf8_sequence(value, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    const char c = value[i];
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.append(value, i, len);
    }
    i += len;
  }
  return out;
}

std::string escape_help(std::string_view help) {
  std::string out;
  out.reserve(help.size());
  for (const char c : help) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string format_value(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::trunc(value) && std::fabs(value) < 1e15) return fmt::format("{}", static_cast<std::int64_t>(value));
  return fmt::format("{}", value);
}

bool valid_metric_name(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

bool valid_label_name(std::string_view name) {
  return valid_metric_name(name) && name.find(':') == std::string_view::npos && !name.starts_with("__");
}

// ---- TextWriter ------------------------------------------------------------------------------

void TextWriter::family(std::string_view name, std::string_view help, Type type) {
  static constexpr const char* kTypeNames[] = {"counter", "gauge", "histogram"};
  fmt::format_to(std::back_inserter(out_), "# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                 kTypeNames[static_cast<int>(type)]);
}

void TextWriter::sample(std::string_view name, const LabelNames& names, const LabelValues& values, double value,
                        std::string_view extra_name, std::string_view extra_value) {
  out_ += name;
  if (!names.empty() || !extra_name.empty()) {
    out_ += '{';
    const char* separator = "";
    for (std::size_t i = 0; i < names.size(); ++i) {
      fmt::format_to(std::back_inserter(out_), "{}{}=\"{}\"", separator, names[i], escape_label_value(values[i]));
      separator = ",";
    }
    if (!extra_name.empty()) fmt::format_to(std::back_inserter(out_), "{}{}=\"{}\"", separator, extra_name, extra_value);
    out_ += '}';
  }
  out_ += ' ';
  out_ += format_value(value);
  out_ += '\n';
}

void TextWriter::gauge(std::string_view name, std::string_view help, const LabelNames& names,
                       const std::map<LabelValues, double>& values) {
  family(name, help, Type::gauge);
  for (const auto& [labels, value] : values) sample(name, names, labels, value);
}

// ---- families --------------------------------------------------------------------------------

Family::Family(std::string name, std::string help, LabelNames label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {
  check_names(name_, label_names_);
}

void Family::check_arity(const LabelValues& values) const {
  if (values.size() != label_names_.size()) {
    throw std::invalid_argument(name_ + " takes " + std::to_string(label_names_.size()) + " label values, got " +
                                std::to_string(values.size()));
  }
}

void Counter::inc(const LabelValues& labels, double by) {
  check_arity(labels);
  if (!(by >= 0)) throw std::invalid_argument(name_ + " is a counter: it cannot go down");
  std::lock_guard lock(mutex_);
  values_[labels] += by;
}

void Gauge::set(double value, const LabelValues& labels) {
  check_arity(labels);
  std::lock_guard lock(mutex_);
  values_[labels] = value;
}

ScalarFamily::ScalarFamily(Type type, std::string name, std::string help, LabelNames label_names)
    : Family(std::move(name), std::move(help), std::move(label_names)), type_(type) {}

double ScalarFamily::value(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  const double* v = find_series(values_, labels);
  return v ? *v : 0;
}

std::map<LabelValues, double> ScalarFamily::values() const {
  std::lock_guard lock(mutex_);
  return values_;
}

void ScalarFamily::write(TextWriter& out) const {
  out.family(name_, help_, type_);
  std::lock_guard lock(mutex_);
  if (label_names_.empty() && values_.empty()) out.sample(name_, {}, {}, 0);  // a series from the start
  for (const auto& [labels, value] : values_) out.sample(name_, label_names_, labels, value);
}

Histogram::Histogram(std::string name, std::string help, std::vector<double> bounds, LabelNames label_names)
    : Family(std::move(name), std::move(help), std::move(label_names)), bounds_(std::move(bounds)) {
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    if (!std::isfinite(bounds_[i]) || (i > 0 && bounds_[i] <= bounds_[i - 1])) {
      throw std::invalid_argument(name_ + ": bucket bounds must be finite and increasing");
    }
    bound_texts_.push_back(format_value(bounds_[i]));
  }
  bound_texts_.push_back("+Inf");
}

void Histogram::observe(double value, const LabelValues& labels) {
  check_arity(labels);
  std::size_t bucket = 0;
  while (bucket < bounds_.size() && value > bounds_[bucket]) ++bucket;  // "le": the first bound >= value
  std::lock_guard lock(mutex_);
  Series& s = series_[labels];
  if (s.buckets.empty()) s.buckets.assign(bounds_.size() + 1, 0);
  ++s.buckets[bucket];
  s.sum += value;
  ++s.count;
}

std::uint64_t Histogram::count(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  const Series* s = find_series(series_, labels);
  return s ? s->count : 0;
}

double Histogram::sum(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  const Series* s = find_series(series_, labels);
  return s ? s->sum : 0;
}

void Histogram::write(TextWriter& out) const {
  out.family(name_, help_, Type::histogram);
  const std::string bucket_name = name_ + "_bucket";
  const std::string sum_name = name_ + "_sum";
  const std::string count_name = name_ + "_count";
  std::lock_guard lock(mutex_);
  // An unlabelled histogram has its one series from the start, so rate() and alerts see zeros.
  const Series empty{std::vector<std::uint64_t>(bounds_.size() + 1, 0), 0, 0};
  auto write_series = [&](const LabelValues& labels, const Series& s) {
    std::uint64_t cumulative = 0;
    for (std::size_t i = 0; i < s.buckets.size(); ++i) {
      cumulative += s.buckets[i];
      out.sample(bucket_name, label_names_, labels, static_cast<double>(cumulative), "le", bound_texts_[i]);
    }
    out.sample(sum_name, label_names_, labels, s.sum);
    out.sample(count_name, label_names_, labels, static_cast<double>(s.count));
  };
  if (label_names_.empty() && series_.empty()) write_series({}, empty);
  for (const auto& [labels, s] : series_) write_series(labels, s);
}

// ---- Registry --------------------------------------------------------------------------------

template <typename F, typename... Args>
F& Registry::add(Args&&... args) {
  auto family = std::make_unique<F>(std::forward<Args>(args)...);
  for (const auto& existing : families_) {
    if (existing->name() == family->name()) throw std::invalid_argument("metric registered twice: " + family->name());
  }
  F& ref = *family;
  families_.push_back(std::move(family));
  return ref;
}

Counter& Registry::counter(std::string name, std::string help, LabelNames label_names) {
  return add<Counter>(std::move(name), std::move(help), std::move(label_names));
}

Gauge& Registry::gauge(std::string name, std::string help, LabelNames label_names) {
  return add<Gauge>(std::move(name), std::move(help), std::move(label_names));
}

Histogram& Registry::histogram(std::string name, std::string help, std::vector<double> bounds, LabelNames label_names) {
  return add<Histogram>(std::move(name), std::move(help), std::move(bounds), std::move(label_names));
}

void Registry::add_collector(Collector collect) { collectors_.push_back(std::move(collect)); }

std::string Registry::render() const {
  TextWriter out;
  for (const auto& family : families_) family->write(out);
  for (const auto& collect : collectors_) collect(out);
  return out.take();
}

}  // namespace trainyard::daemon::prom
