#include "agent/agent_flags.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "net/server_list.h"
#include "net/url.h"
#include "proto/contained_path.h"
#include "proto/errors.h"
#include "proto/json_reader.h"

namespace trainyard::agent {
namespace {

std::string read_token(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidInput("--join-token-file", "cannot read " + path);
  std::string token;
  std::getline(in, token);
  while (!token.empty() && (token.back() == '\r' || token.back() == ' ')) token.pop_back();
  if (token.empty()) throw InvalidInput("--join-token-file", path + " is empty");
  return token;
}

// The daemons of --server URL1,URL2,...: each a URL, all over TLS or none, without a trailing '/'.
std::vector<std::string> server_list(const std::string& text) {
  std::vector<std::string> servers = net::split_server_list(text, "--server");
  const std::string scheme = net::parse_url(servers.front(), "--server").scheme;
  for (auto& server : servers) {
    if (net::parse_url(server, "--server").scheme != scheme) {
      throw InvalidInput("--server", "mixes http:// and https:// URLs (" + servers.front() + ", " + server +
                                         "): the daemons of one cluster are all reached the same way");
    }
    while (!server.empty() && server.back() == '/') server.pop_back();
  }
  return servers;
}

std::map<std::string, std::string> parse_labels(const std::vector<std::string>& items) {
  std::map<std::string, std::string> labels;
  for (const auto& label : items) {
    const auto eq = label.find('=');
    if (eq == std::string::npos || eq == 0) throw InvalidInput("--label", "must be KEY=VALUE, got \"" + label + "\"");
    labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  check_labels("--label", labels);
  return labels;
}

}  // namespace

void add_agent_flags(FlagParser& flags, AgentSettings& settings) {
  flags.add_string("server",
                   "daemon URL, e.g. http://127.0.0.1:8080; https:// connects over TLS (wss); several, comma-separated "
                   "(active / standby daemons), are tried in turn",
                   &settings.server, true);
  flags.add_string("ca-file", "PEM CA file that verifies an https:// daemon (default: the system's trust store)",
                   &settings.tls.ca_file);
  flags.add_string("tls-cert", "PEM client certificate to present to the daemon (mutual TLS; it names this node)",
                   &settings.tls.cert_file);
  flags.add_string("tls-key", "PEM private key of --tls-cert", &settings.tls.key_file);
  flags.add_string("join-token-file", "file holding the daemon's join token", &settings.join_token_file, true);
  flags.add_string("name", "node name", &settings.name, true);
  flags.add_int("memory-mb",
                "MiB of memory this node offers jobs (default: the host's physical memory); jobs asking more are "
                "refused, and a job's memory_mb is its cgroup's limit",
                &settings.memory_mb, 0, 1LL << 40);
  flags.add_string("work-dir",
                   "directory for attempt logs and files, and the node's own credential (keep it); a relative one "
                   "is taken from the directory the agent starts in",
                   &settings.work_dir, true);
  flags.add_string("checkpoint-root",
                   "absolute directory launches may name checkpoints under (the daemon's --checkpoint-root as this "
                   "node sees it); without it, any absolute path without '..'",
                   &settings.checkpoint_root);
  flags.add_list("label", "KEY=VALUE node label, e.g. rack=r1", &settings.labels);
  flags.add_int("job-pids-max", "processes and threads each attempt may have at once (its cgroup's pids.max)",
                &settings.job_pids_max, 1, 4'194'304);
  flags.add_int("job-disk-floor-mb",
                "free MiB of the work filesystem, and of each job's checkpoint directory's, that jobs may not write "
                "below: under it the attempt that wrote the most there since the last heartbeat is stopped and fails "
                "as disk_full, its own fault (keeps room for what shares the filesystem, such as the daemon's "
                "database beside its default checkpoint root); 0 turns it off",
                &settings.job_disk_floor_mb, 0, 1LL << 40);
  add_job_account_flags(flags, settings.accounts);
  neuron::add_simulated_node_flags(flags, settings.node);
}

AgentConfig agent_config(const AgentSettings& settings, bool agent_is_root) {
  AgentConfig config;
  config.servers = server_list(settings.server);
  if (config.servers.front().starts_with("https://")) {
    config.tls = net::make_client_tls_context(settings.tls);
  } else if (!settings.tls.ca_file.empty() || !settings.tls.cert_file.empty() || !settings.tls.key_file.empty()) {
    throw InvalidInput(
        settings.tls.ca_file.empty() ? (settings.tls.cert_file.empty() ? "--tls-key" : "--tls-cert") : "--ca-file",
        "is for TLS: give an https:// --server");
  }
  config.join_token = read_token(settings.join_token_file);
  check_name("--name", settings.name);
  config.name = settings.name;
  config.cores = settings.node.cores;
  config.memory_mb = settings.memory_mb;
  // Absolute, so that a job's HOME and the paths it is told are the same from its own directory.
  config.work_dir = std::filesystem::absolute(settings.work_dir).lexically_normal().string();
  while (config.work_dir.size() > 1 && config.work_dir.back() == '/') config.work_dir.pop_back();
  std::string checkpoint_root = settings.checkpoint_root;
  while (checkpoint_root.size() > 1 && checkpoint_root.back() == '/') checkpoint_root.pop_back();
  if (!checkpoint_root.empty()) config.checkpoint_root = plain_absolute_path(checkpoint_root, "--checkpoint-root");
  config.labels = parse_labels(settings.labels);
  config.collective_timeout = settings.node.collective_timeout;
  config.job_disk_floor_mb = settings.job_disk_floor_mb;
  config.job_accounts = job_accounts(settings.accounts, agent_is_root);
  return config;
}

std::int64_t host_memory_mb() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page_size = ::sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<std::int64_t>(pages) * page_size / (1024 * 1024);
}

}  // namespace trainyard::agent
