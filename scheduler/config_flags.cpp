#include "scheduler/config_flags.h"

#include <string_view>

namespace trainyard::scheduler {

void add_config_flags(FlagParser& flags, Config& config) {
  flags.add_duration<std::chrono::seconds>("usage-half-life-s", "fair-share usage half-life", &config.usage_half_life,
                                           1, 365LL * 24 * 3600);
  flags.add_percent("compute-reservation-pct", "percent of cores kept free for shares with no running work",
                    &config.compute_reservation, 0, 90);
  flags.add_string("placement-label", "node label whose value multi-node jobs prefer to share",
                   &config.placement_label);
}

void add_preemption_flags(FlagParser& flags, PreemptionConfig& config) {
  flags.add_bool("preempt",
                 "checkpoint-aware preemption: a job of a share below its fair share may stop running work "
                 "of a share far above it (which checkpoints and queues again)",
                 &config.enabled);
  flags.add_percent("preempt-below-fair-share-pct",
                    "a share may preempt only while its usage over its fair share is "
                    "below this percent",
                    &config.below_fair_share, 1, 100);
  flags.add_percent("preempt-above-fair-share-pct",
                    "only work of shares whose usage over their fair share is above "
                    "this percent is preempted",
                    &config.above_fair_share, 101, 100'000);
  flags.add_duration<std::chrono::seconds>("preempt-min-run-s",
                                           "a job's attempt runs at least this long before it may be preempted",
                                           &config.min_run_time, 0, 30LL * 24 * 3600);
  flags.add_string(
      "preempt-exempt-shares", "comma-separated shares whose jobs are never preempted",
      [&config] {
        std::string text;
        for (const std::string& share : config.exempt_shares) {
          if (!text.empty()) text += ',';
          text += share;
        }
        return text;
      },
      [&config](const std::string& text) {
        config.exempt_shares.clear();
        std::string_view rest = text;
        while (!rest.empty()) {
          const auto comma = rest.find(',');
          const std::string_view share = rest.substr(0, comma);
          if (!share.empty()) config.exempt_shares.emplace(share);
          rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
        }
      });
}

}  // namespace trainyard::scheduler
