#pragma once
// A small Prometheus metrics registry and the text exposition format 0.0.4 (the daemon's own
// operational metrics at GET /metrics; not jobs' training metrics, which are proto/metrics.h and
// daemon/telemetry/metric_series.h).
//
// Two kinds of metric: families recorded where events happen (Counter, Gauge, Histogram, each
// with fixed label names), and collectors that write families computed from live state at scrape
// time (TextWriter), so a gauge never drifts from what it counts.
//
// Threading contract: recording into a family is safe from any thread (each family has its own
// lock; the store worker records from its thread). Registration, collectors and render() belong to
// one thread (the daemon's I/O thread).
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::daemon::prom {

enum class Type { counter, gauge, histogram };

using LabelNames = std::vector<std::string>;
using LabelValues = std::vector<std::string>;

// "text/plain; version=0.0.4; charset=utf-8"
extern const char* const kContentType;

// A label value as the exposition format quotes it: backslash, double quote and newline escaped,
// and bytes that are not UTF-8 replaced by U+FFFD (Prometheus refuses a scrape holding them).
std::string escape_label_value(std::string_view value);
// HELP text: backslash and newline escaped.
std::string escape_help(std::string_view help);
// A sample value: integers without a fraction, "+Inf", "-Inf", "NaN".
std::string format_value(double value);

// Writes families in the text exposition format. A family is its HELP and TYPE lines and then its
// samples; the caller writes each family once.
class TextWriter {
 public:
  void family(std::string_view name, std::string_view help, Type type);
  // One sample line; `extra_name`/`extra_value` is one more label after the others (a bucket's "le").
  void sample(std::string_view name, const LabelNames& names, const LabelValues& values, double value,
              std::string_view extra_name = {}, std::string_view extra_value = {});
  // A whole gauge family from values by label values.
  void gauge(std::string_view name, std::string_view help, const LabelNames& names,
             const std::map<LabelValues, double>& values);
  const std::string& text() const { return out_; }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

// What every recorded family shares: name, help, label names, and the lock over its series.
class Family {
 public:
  Family(std::string name, std::string help, LabelNames label_names);
  virtual ~Family() = default;
  Family(const Family&) = delete;
  Family& operator=(const Family&) = delete;
  virtual void write(TextWriter& out) const = 0;
  const std::string& name() const { return name_; }

 protected:
  // Throws std::invalid_argument when `values` does not give one value per label name.
  void check_arity(const LabelValues& values) const;

  std::string name_;
  std::string help_;
  LabelNames label_names_;
  mutable std::mutex mutex_;
};

// One number per label set: what counters and gauges share.
class ScalarFamily : public Family {
 public:
  ScalarFamily(Type type, std::string name, std::string help, LabelNames label_names);
  double value(const LabelValues& labels = {}) const;
  std::map<LabelValues, double> values() const;  // every series, by its labels
  void write(TextWriter& out) const override;

 protected:
  Type type_;
  std::map<LabelValues, double> values_;
};

// Only goes up. Its name ends in "_total".
class Counter final : public ScalarFamily {
 public:
  Counter(std::string name, std::string help, LabelNames label_names)
      : ScalarFamily(Type::counter, std::move(name), std::move(help), std::move(label_names)) {}
  void inc(const LabelValues& labels = {}, double by = 1);
};

class Gauge final : public ScalarFamily {
 public:
  Gauge(std::string name, std::string help, LabelNames label_names)
      : ScalarFamily(Type::gauge, std::move(name), std::move(help), std::move(label_names)) {}
  void set(double value, const LabelValues& labels = {});
};

// Observations counted into buckets with upper bounds `bounds` (increasing; +Inf is implied), with
// their sum and count, exposed as <name>_bucket{le=...} (cumulative), <name>_sum and <name>_count.
class Histogram final : public Family {
 public:
  Histogram(std::string name, std::string help, std::vector<double> bounds, LabelNames label_names);
  void observe(double value, const LabelValues& labels = {});
  std::uint64_t count(const LabelValues& labels = {}) const;
  double sum(const LabelValues& labels = {}) const;
  void write(TextWriter& out) const override;

 private:
  struct Series {
    std::vector<std::uint64_t> buckets;  // per bound, not cumulative; the last is +Inf
    double sum = 0;
    std::uint64_t count = 0;
  };
  std::vector<double> bounds_;
  std::vector<std::string> bound_texts_;
  std::map<LabelValues, Series> series_;
};

// The daemon's families and collectors. Names and label names are checked when registered
// (std::invalid_argument): they are the program's, not input.
class Registry {
 public:
  using Collector = std::function<void(TextWriter&)>;

  Counter& counter(std::string name, std::string help, LabelNames label_names = {});
  Gauge& gauge(std::string name, std::string help, LabelNames label_names = {});
  Histogram& histogram(std::string name, std::string help, std::vector<double> bounds, LabelNames label_names = {});
  void add_collector(Collector collect);
  // Every family, recorded ones first in registration order, then the collectors' output.
  std::string render() const;

 private:
  template <typename F, typename... Args>
  F& add(Args&&... args);

  std::vector<std::unique_ptr<Family>> families_;
  std::vector<Collector> collectors_;
};

// Whether `name` is a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) / label name ([a-zA-Z_][a-zA-Z0-9_]*,
// not starting with "__").
bool valid_metric_name(std::string_view name);
bool valid_label_name(std::string_view name);

}  // namespace trainyard::daemon::prom
