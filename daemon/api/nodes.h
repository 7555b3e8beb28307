#pragma once
// /v1/nodes: the fleet as each role may see it, and operating it (drain, undrain, faults, health
// history, forgetting a node's credential).
#include "daemon/base/auth.h"
#include "proto/json_reader.h"

namespace trainyard::daemon {

struct ApiCall;
struct NodeView;
class Auditor;
class JobManager;
class StoreWorker;

class NodesApi {
 public:
  NodesApi(JobManager& jobs, StoreWorker& store, TokenRegistry& tokens, Auditor& audit)
      : jobs_(jobs), store_(store), tokens_(tokens), audit_(audit) {}

  void list_nodes(ApiCall call);
  void get_node(ApiCall call);
  void set_node_faults(ApiCall call);
  void clear_node_faults(ApiCall call);
  void drain_node(ApiCall call);
  void undrain_node(ApiCall call);
  void forget_node_credential(ApiCall call);
  void node_health(ApiCall call);

 private:
  void change_node_faults(ApiCall call, bool clear);
  // A node as `who` may see it: admins see all; users neither the data-plane address nor the ids
  // of other users' attempts (only how many there are).
  Json node_json(const NodeView& view, const Principal& who) const;

  JobManager& jobs_;
  StoreWorker& store_;
  TokenRegistry& tokens_;
  Auditor& audit_;
};

}  // namespace trainyard::daemon
