#pragma once
// The jobs' Python directory: the source tree's python/ (sitecustomize.py: Python stacks on the
// agent's signal, agent/rank_activity.h), built into the agent (agent/CMakeLists.txt generates the
// table) and written at its start to <work dir>/python, the agent's and read-only, where every job
// account can read it. Command jobs get it first on their PYTHONPATH (agent/command_run.h).
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::agent {

struct JobPythonFile {
  std::string_view path;  // relative to the directory
  std::string_view content;
};
// Generated from python/ at configure time.
const std::vector<JobPythonFile>& job_python_files();

// Writes the files to `dir` (made, with its folders, mode 0755; files 0644, each replaced whole);
// throws std::runtime_error saying what failed.
void install_job_python(const std::string& dir);

}  // namespace trainyard::agent
