#pragma once
// Reads the facts a command job wrote to $TRAINYARD_PROVENANCE_FILE (proto/provenance.h) when its
// process has ended. The file is the job's: the agent treats it as hostile. It is opened without
// following a link and without blocking, read only when it is a regular file with one link and no
// larger than the limit, and a bad file becomes an error note on the attempt, never a failure of
// the agent or of the attempt.
#include <string>

#include "proto/json_reader.h"

namespace trainyard::agent {

struct UserFacts {
  Json facts;         // the object the job wrote; null when it wrote none or it was refused
  std::string error;  // why it was refused; empty when accepted or absent
};

UserFacts read_user_facts(const std::string& path);

}  // namespace trainyard::agent
