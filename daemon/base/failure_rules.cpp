#include "daemon/base/failure_rules.h"

#include <fnmatch.h>

#include <algorithm>
#include <array>

#include "daemon/base/quoted_output.h"

namespace trainyard::daemon {
namespace {

constexpr std::string_view kDefaultRules = R"json({"rules": [
  {"class": "cancelled", "when": ["cancelled"],
   "suggestion": "Cancelled on request; resubmit if it was not intended."},
  {"class": "health_failed", "infrastructure": true, "when": ["health_failed"],
   "suggestion": "A node of the allocation failed its pre-flight health check; the job runs without it."},
  {"class": "node_lost", "infrastructure": true, "when": ["node_lost"],
   "suggestion": "A node stopped answering; the job is retried elsewhere and the node is checked."},
  {"class": "node_lost", "infrastructure": true, "reason": ["*fenced: *"],
   "suggestion": "The node was cut off from the daemon and stopped the attempt itself, so that it never ran beside its replacement; the job is retried."},
  {"class": "node_files", "infrastructure": true, "reason": ["*node files: *"],
   "suggestion": "The node holds files in the attempt's way ({line}): another job's directory or log, or a uid another cluster's job holds; the job is retried without using an attempt, and the node needs an admin to look."},
  {"class": "node_network", "infrastructure": true, "reason": ["*node network: *"],
   "suggestion": "The node could not give the attempt a network of its own ({line}); the job is retried elsewhere without using an attempt, and the node needs an admin to look (its agent's log says which ip command failed)."},
  {"class": "file_not_found", "retry": false, "reason": ["*launch failed: command not found: *", "*launch failed: no such file: *",
                                                       "*launch failed: interpreter not found: *"],
   "suggestion": "The program could not be started ({line}); install it on the nodes, give its full path, or set PATH in the job's env."},
  {"class": "user_error", "retry": false, "reason": ["*launch failed: *"],
   "suggestion": "The program could not be started ({line}); retrying would meet the same error."},
  {"class": "timeout", "when": ["timed_out"],
   "suggestion": "The attempt ran past timeout_s; raise it or checkpoint more often."},
  {"class": "disk_full", "when": ["quota_exceeded"],
   "suggestion": "The job stayed over its storage quota (checkpoints, logs and work directory together) past the grace and was stopped; delete what it no longer needs or raise storage_limit_mb."},
  {"class": "disk_full", "reason": ["*job disk floor: *"],
   "suggestion": "The job wrote a filesystem of its node (its work or checkpoint directory's) down to the agent's --job-disk-floor-mb and was stopped before the filesystem filled; write less there (logs, files in its directory, checkpoints: set storage_limit_mb), or large outputs to a filesystem of their own."},
  {"class": "stuck", "infrastructure": true, "when": ["stuck", "node_failed_check"],
   "suggestion": "Training stopped on a node that then failed its health check; the node is out of service and the job retries elsewhere without using an attempt."},
  {"class": "stuck", "when": ["stuck"],
   "suggestion": "A rank made no progress for longer than its allowance; see the diagnosis for the rank that stopped and what the others were doing."},
  {"class": "disk_full", "when": ["failed", "over_storage_quota"],
   "text": ["*no space left on device*", "*ENOSPC*"],
   "suggestion": "The job filled its storage quota; keep fewer checkpoints (older ones are pruned) or raise storage_limit_mb."},
  {"class": "disk_full", "infrastructure": true, "when": ["failed"],
   "text": ["*no space left on device*", "*ENOSPC*"],
   "suggestion": "The node's disk is full; the job retries on another node, and this node takes no work until space is freed."},
  {"class": "oom", "when": ["failed"], "reason": ["*OOM killer killed*at the job's memory_mb of*"],
   "suggestion": "The job's processes on a node went past its memory_mb ({line}); raise memory_mb (submit --mem 16G, or #SBATCH --mem 16G) if its nodes have the memory, or lower the batch size."},
  {"class": "oom", "when": ["failed"],
   "text": ["*CUDA out of memory*", "*CUDA error: out of memory*", "*torch.OutOfMemoryError*",
            "*torch.cuda.OutOfMemoryError*", "*RESOURCE_EXHAUSTED: Out of memory*", "*HIP out of memory*"],
   "suggestion": "The accelerator ran out of memory ({line}); lower the per-device batch size, use activation checkpointing, or shard the model over more devices."},
  {"class": "oom", "when": ["failed"],
   "text": ["*out of memory*", "*bad_alloc*", "*oom-kill*", "*oom_kill*", "*oom killer*", "*cannot allocate memory*"],
   "suggestion": "The process ran out of memory; lower the batch size or use more nodes."},
  {"class": "user_error", "when": ["failed"],
   "text": ["*ModuleNotFoundError: No module named*", "*ImportError: No module named*", "*ImportError: cannot import name*"],
   "suggestion": "Python could not import a module ({line}); install it in the environment the job runs in, or fix PYTHONPATH."},
  {"class": "nan_loss", "reason": ["nan_loss*", "*loss is nan*", "*loss is inf*", "*loss is -inf*", "*non-finite loss*",
                                   "*gradient norm is not finite*"],
   "suggestion": "The loss became NaN/Inf; lower the learning rate or check the data."},
  {"class": "collective_timeout", "infrastructure": true,
   "reason": ["collective_timeout*", "*collective*timeout*", "*did not answer within*"],
   "suggestion": "A collective timed out; the peer named in the reason may be unhealthy."},
  {"class": "collective_timeout", "infrastructure": true, "when": ["failed"],
   "log_tail": ["*Watchdog caught collective operation timeout*", "*NCCL*Timeout(ms)*", "*ProcessGroupNCCL*timed out*",
                "*Gloo*Timed out waiting*", "*gloo*timed out*"],
   "suggestion": "A collective timed out ({line}); one rank stopped answering: see which rank's log stops first, and its node's health check."},
  {"class": "collective_error", "infrastructure": true, "when": ["failed"],
   "log_tail": ["*ncclRemoteError*", "*ncclSystemError*", "*NCCL*remote process exited*", "*Gloo*Connection closed by peer*",
                "*gloo*Connection reset by peer*", "*NCCL*Connection closed by*"],
   "suggestion": "A peer of the collective went away ({line}); the job is retried, and the node whose rank died first is checked."},
  {"class": "collective_error", "when": ["failed"],
   "log_tail": ["*NCCL error*", "*ncclInternalError*", "*ncclInvalidUsage*", "*ncclUnhandledCudaError*",
                "*ProcessGroupGloo*error*"],
   "suggestion": "The collective library failed ({line}); rerun with NCCL_DEBUG=INFO to see why, and check that every rank calls the same collectives."},
  {"class": "file_not_found", "when": ["failed"],
   "log_tail": ["*FileNotFoundError:*", "*No such file or directory*", "*sh: *: not found*", "*: command not found*"],
   "suggestion": "A file the job needs is missing ({line}); check the paths in its command, environment and checkpoint directory on every node it runs on."},
  {"class": "crashed", "when": ["signal"], "signal": "11",
   "suggestion": "A rank crashed with a segmentation fault (signal 11) in native code; check its log for the last call, and the versions of its native libraries."},
  {"class": "crashed", "when": ["signal"], "signal": "7",
   "suggestion": "A rank died of SIGBUS (signal 7), usually shared memory (/dev/shm) too small for data loader workers or NCCL; give it more or use fewer workers."},
  {"class": "crashed", "when": ["signal"], "signal": "6",
   "suggestion": "A rank aborted (signal 6): an assertion or an uncaught C++ exception; its log's last lines say which."},
  {"class": "user_error", "when": ["signal"], "signal": "9",
   "suggestion": "A rank was killed by SIGKILL (signal 9) from outside the job (another process, or the kernel without an OOM record); check the node's kernel log."},
  {"class": "user_error", "when": ["signal"],
   "suggestion": "The process was killed by signal {signal}; check its logs."},
  {"class": "user_error", "when": ["nonzero_exit"], "log_tail": ["*Traceback (most recent call last):*"],
   "quote": ["[A-Za-z_]*Error*", "[A-Za-z_]*Exception*", "[A-Za-z_]*Interrupt*", "[[]rank*]: [A-Za-z_]*Error*",
             "[[]rank*]: [A-Za-z_]*Exception*"],
   "suggestion": "The program raised {line}; the traceback before that line in its log says where."},
  {"class": "user_error", "when": ["nonzero_exit"],
   "suggestion": "The program exited with code {exit_code}; check its logs."},
  {"class": "unknown",
   "suggestion": "The attempt failed for an unknown reason; check the logs and the node."}
]})json";

constexpr std::array kFacts = {"cancelled", "health_failed", "node_lost", "stuck", "node_failed_check", "timed_out", "signal",
                               "nonzero_exit", "failed", "over_storage_quota", "quota_exceeded"};

bool holds(const std::string& fact, const AttemptFacts& f) {
  const bool nonzero_exit = f.exit_code && *f.exit_code != 0;
  if (fact == "cancelled") return f.cancelled;
  if (fact == "health_failed") return f.health_failed;
  if (fact == "node_lost") return f.node_lost;
  if (fact == "stuck") return f.stuck;
  if (fact == "node_failed_check") return f.node_failed_check;
  if (fact == "timed_out") return f.timed_out;
  if (fact == "over_storage_quota") return f.over_storage_quota;
  if (fact == "quota_exceeded") return f.quota_exceeded;
  if (fact == "signal") return f.signal.has_value();
  if (fact == "nonzero_exit") return nonzero_exit;
  return f.signal.has_value() || nonzero_exit;  // "failed"
}

bool glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), FNM_CASEFOLD) == 0;
}

bool any_glob(const std::vector<std::string>& patterns, const std::string& text) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob(p, text); });
}

bool matches(const FailureRule& rule, const AttemptFacts& f) {
  if (!std::all_of(rule.when.begin(), rule.when.end(), [&](const std::string& fact) { return holds(fact, f); })) return false;
  if (rule.exit_code && !(f.exit_code && glob(*rule.exit_code, std::to_string(*f.exit_code)))) return false;
  if (rule.signal && !(f.signal && glob(*rule.signal, std::to_string(*f.signal)))) return false;
  if (!rule.reason.empty() && !any_glob(rule.reason, f.reason)) return false;
  if (!rule.log_tail.empty() && !any_glob(rule.log_tail, f.log_tail)) return false;
  if (!rule.text.empty() && !any_glob(rule.text, f.reason) && !any_glob(rule.text, f.log_tail)) return false;
  return true;
}

std::string fill(std::string text, const std::string& key, const std::string& value) {
  for (auto at = text.find(key); at != std::string::npos; at = text.find(key, at + value.size())) text.replace(at, key.size(), value);
  return text;
}

// A line of the log tail that a rule's patterns match alone, for "{line}": the suggestion is shown
// to everyone who may see the job, not only to those who may read its logs (daemon/base/quoted_output.h).
std::string quoted_line(const FailureRule& rule, const AttemptFacts& f) {
  if (!rule.quote.empty()) {
    std::string last;
    for (std::size_t at = 0; at < f.log_tail.size();) {
      const std::size_t end = std::min(f.log_tail.find('\n', at), f.log_tail.size());
      if (std::string line = f.log_tail.substr(at, end - at); any_glob(rule.quote, line)) last = std::move(line);
      at = end + 1;
    }
    if (!last.empty()) return masked_line(last);
  }
  std::vector<std::string> patterns = rule.text;
  patterns.insert(patterns.end(), rule.log_tail.begin(), rule.log_tail.end());
  patterns.insert(patterns.end(), rule.reason.begin(), rule.reason.end());
  for (const std::string* text : {&f.log_tail, &f.reason}) {
    std::size_t at = 0;
    while (at <= text->size()) {
      const std::size_t end = std::min(text->find('\n', at), text->size());
      const std::string line = text->substr(at, end - at);
      if (any_glob(patterns, line)) {
        const auto first = line.find_first_not_of(" \t\r");
        return masked_line(first == std::string::npos ? line : line.substr(first));
      }
      at = end + 1;
    }
  }
  return "see the log";
}

FailureRule parse_rule(const Json& j, const std::string& path) {
  ObjectReader r(j, path);
  FailureRule rule;
  rule.class_name = r.string("class", 1, 64);
  check_name(r.field_path("class"), rule.class_name);
  rule.infrastructure = r.opt_boolean("infrastructure").value_or(false);
  rule.log_is_evidence = r.opt_boolean("log_is_evidence").value_or(false);
  rule.retry = r.opt_boolean("retry").value_or(true);
  rule.suggestion = r.string("suggestion", 1, 512);
  if (r.has("when")) rule.when = r.string_list("when", 8, 32);
  for (std::size_t i = 0; i < rule.when.size(); ++i) {
    if (std::find(kFacts.begin(), kFacts.end(), rule.when[i]) == kFacts.end()) {
      throw InvalidInput(r.field_path("when") + "[" + std::to_string(i) + "]",
                         "must be one of cancelled, health_failed, node_lost, stuck, node_failed_check, timed_out, signal, "
                         "nonzero_exit, failed, over_storage_quota, quota_exceeded");
    }
  }
  rule.exit_code = r.opt_string("exit_code", 1, 64);
  rule.signal = r.opt_string("signal", 1, 64);
  if (r.has("reason")) rule.reason = r.string_list("reason", 64, 512);
  if (r.has("log_tail")) rule.log_tail = r.string_list("log_tail", 64, 512);
  if (r.has("text")) rule.text = r.string_list("text", 64, 512);
  if (r.has("quote")) rule.quote = r.string_list("quote", 64, 512);
  r.finish();
  return rule;
}

// Whether an infrastructure rule's match stands on more than the job's own log (see the header).
bool infrastructure_seen(const FailureRule& rule, const AttemptFacts& facts) {
  if (rule.log_is_evidence) return true;
  if (facts.node_lost || facts.health_failed || facts.node_failed_check || facts.node_disk_low) return true;
  AttemptFacts without_log = facts;
  without_log.log_tail.clear();
  return matches(rule, without_log);
}

}  // namespace

const FailureRules& FailureRules::defaults() {
  static const FailureRules rules = parse(parse_json_text(kDefaultRules));
  return rules;
}

FailureRules FailureRules::parse(const Json& document, const std::string& path) {
  if (!document.is_object()) throw InvalidInput(path, "must be an object with \"rules\"");
  ObjectReader r(document, path);
  const Json* list = r.child("rules");
  if (!list || !list->is_array()) throw InvalidInput(r.field_path("rules"), "must be an array");
  FailureRules rules;
  for (std::size_t i = 0; i < list->size(); ++i) {
    rules.rules_.push_back(parse_rule((*list)[i], r.field_path("rules") + "[" + std::to_string(i) + "]"));
  }
  r.finish();
  return rules;
}

FailureRules FailureRules::followed_by(const FailureRules& fallback) const {
  FailureRules both = *this;
  both.rules_.insert(both.rules_.end(), fallback.rules_.begin(), fallback.rules_.end());
  return both;
}

FailureClass FailureRules::classify(const AttemptFacts& facts) const {
  for (const FailureRule& rule : rules_) {
    if (!matches(rule, facts)) continue;
    std::string suggestion = fill(rule.suggestion, "{exit_code}", facts.exit_code ? std::to_string(*facts.exit_code) : "-");
    suggestion = fill(suggestion, "{signal}", facts.signal ? std::to_string(*facts.signal) : "-");
    if (suggestion.find("{line}") != std::string::npos) suggestion = fill(suggestion, "{line}", quoted_line(rule, facts));
    return {rule.class_name, suggestion, rule.infrastructure && infrastructure_seen(rule, facts), rule.retry};
  }
  return {"unknown", "The attempt failed for an unknown reason; check the logs and the node.", false};
}

}  // namespace trainyard::daemon
