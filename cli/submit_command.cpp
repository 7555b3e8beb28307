// `trainyard submit`: a JSON job spec, a batch script with #SBATCH lines (cli/batch_script.h), or
// a command job built from flags (the quick form, like sbatch --wrap).
#include <array>
#include <filesystem>
#include <map>
#include <utility>

#include "cli/batch_script.h"
#include "cli/commands.h"
#include "cli/memory_size.h"
#include "cli/time_limit.h"
#include "proto/messages.h"

namespace trainyard::cli {
namespace {

// A job may run 1..10 attempts in all (proto/job.cpp), i.e. at most 9 retries after the first.
constexpr std::int64_t kMaxRetries = 9;

const std::vector<FlagSpec>& quick_submit_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--name", "N", "job name (default: the program's file name)", false, {"-J", "--job-name"}},
      {"--nodes", "K", "number of nodes, all started together (default 1)", false, {"-N"}},
      {"--share", "S", "fair-share the job is charged to (default \"default\")"},
      {"--priority", "P", "priority within the share, 0..9999 (default 0)"},
      {"--cores-per-node", "C", "cores on each node (default: the whole node)"},
      {"--ntasks-per-node", "P", "processes started on each node, each with its own RANK and LOCAL_RANK (default 1)",
       false, {"--nproc-per-node", "--nproc_per_node"}},
      {"--retries", "R", "retries after a failed first attempt, 0..9 (default 0)"},
      {"--time", "T", "wall-clock limit of an attempt as sbatch takes it: MINUTES, MM:SS, HH:MM:SS, D-HH:MM:SS, 45m",
       false, {"-t"}},
      {"--timeout", "SECONDS", "the same limit counted in seconds (or 90s, 45m, 12h, 2d)"},
      {"--mem", "SIZE", "memory each node's processes may use together (MiB, or 500M, 2G as sbatch takes it); past it they are killed (out of memory)"},
      {"--env", "K=V", "environment variable for the program", true},
      {"--wait-for-capacity", "", "queue the job even if no registered nodes could hold it yet (else refused)"},
      {"--replace-stragglers", "", "a rank much slower than the others gets the job checkpointed and queued again without its node"},
      {"--output", "FILE",
       "also copy stdout (and stderr, unless --error) to FILE, relative to the working directory, with sbatch's "
       "%j %x %u %N %n %A %a; only the first node writes it unless FILE names the node (%N, %n)",
       false, {"-o"}},
      {"--error", "FILE", "also copy stderr to FILE (as --output)", false, {"-e"}},
  };
  return flags;
}

// Flags that apply to a spec file too.
const std::vector<FlagSpec>& array_and_dependency_flags() {
  static const std::vector<FlagSpec> flags = {
      {"--array", "SPEC", "a job array: 0-99, 0-99:4 (step), 1,5,9, with %K to run at most K tasks at once", false, {"-a"}},
      {"--depend", "DEP", "wait for other jobs: afterok:ID[:ID...], afterany, afternotok, aftercorr; ',' joins them",
       false, {"--dependency", "-d"}},
  };
  return flags;
}

Json array_and_dependency_fields(const ParsedArgs& args) {
  Json fields = Json::object();
  if (auto array = args.opt_string("--array")) {
    parse_array_spec(*array, kMaxArrayIndex + 1, "--array");
    fields["array"] = *array;
  }
  if (auto depend = args.opt_string("--depend")) {
    Json deps = Json::array();
    for (const Dependency& d : parse_dependency_flag(*depend)) deps.push_back({{"job", d.job}, {"condition", to_string(d.condition)}});
    fields["depends_on"] = std::move(deps);
  }
  return fields;
}

// Where a quick-form flag ends up in the job spec, so that the spec's own validation
// (parse_job_spec) can report its findings in terms of the flag the user typed.
constexpr std::array<std::pair<std::string_view, std::string_view>, 13> kSpecFieldFlags = {{
    {"name", "--name"},
    {"nodes", "--nodes"},
    {"share", "--share"},
    {"priority", "--priority"},
    {"cores_per_node", "--cores-per-node"},
    {"timeout_s", "--timeout"},
    {"memory_mb", "--mem"},
    {"command.env", "--env"},
    {"command.workdir", "--chdir"},
    {"command.procs_per_node", "--ntasks-per-node"},
    {"command.output", "--output"},
    {"command.error", "--error"},
    {"command.argv", "PROGRAM"},
}};

std::string flag_for_spec_field(const std::string& field, const ParsedArgs& args) {
  if (field.starts_with("timeout_s") && args.has("--time")) return "--time";
  for (const auto& [prefix, flag] : kSpecFieldFlags) {
    if (field.starts_with(prefix)) return std::string(flag);
  }
  return field;
}

std::string current_dir() {
  std::error_code error;
  const std::filesystem::path here = std::filesystem::current_path(error);
  if (error) throw InvalidInput("--chdir", "the current directory cannot be read (" + error.message() + "); give --chdir DIR");
  return here.string();
}

// --chdir as an absolute path: a relative one is taken from the current directory, as sbatch does.
std::optional<std::string> workdir_flag(const ParsedArgs& args) {
  const auto dir = args.opt_string("--chdir");
  if (!dir) return std::nullopt;
  if (dir->empty()) throw InvalidInput("--chdir", "must name a directory");
  const std::filesystem::path path(*dir);
  return (path.is_absolute() ? path : std::filesystem::path(current_dir()) / path).lexically_normal().string();
}

std::pair<std::string, std::string> parse_env_assignment(const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw InvalidInput("--env", "expected K=V, got \"" + text + "\"");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

// `script`: a batch script's text, run in argv[0]'s place.
Json quick_spec(const ParsedArgs& args, const std::vector<std::string>& argv, const std::string* script = nullptr) {
  if (argv.empty()) throw InvalidInput("PROGRAM", "is required after '--'");
  Json env = Json::object();
  for (const std::string& assignment : args.all("--env")) {
    auto [key, value] = parse_env_assignment(assignment);
    env[key] = value;
  }
  Json spec = {{"name", args.opt_string("--name").value_or(std::filesystem::path(argv.front()).filename().string())},
               {"kind", "command"},
               {"command", {{"argv", argv}, {"env", env}, {"workdir", workdir_flag(args).value_or(current_dir())}}}};
  if (auto share = args.opt_string("--share")) spec["share"] = *share;
  if (auto nodes = args.opt_integer("--nodes", kAnyIntMin, kAnyInt)) spec["nodes"] = *nodes;
  if (auto priority = args.opt_integer("--priority", kAnyIntMin, kAnyInt)) spec["priority"] = *priority;
  if (auto cores = args.opt_integer("--cores-per-node", kAnyIntMin, kAnyInt)) spec["cores_per_node"] = *cores;
  if (auto procs = args.opt_integer("--ntasks-per-node", kAnyIntMin, kAnyInt)) spec["command"]["procs_per_node"] = *procs;
  if (auto timeout = time_limit_flags(args); timeout && !timeout->is_null()) spec["timeout_s"] = *timeout;
  if (auto memory = args.opt_string("--mem")) spec["memory_mb"] = parse_memory_mb(*memory, "--mem");
  if (auto retries = args.opt_integer("--retries", 0, kMaxRetries)) spec["retry"] = {{"attempts", *retries + 1}};
  if (args.has("--wait-for-capacity")) spec["wait_for_capacity"] = true;
  if (args.has("--replace-stragglers")) spec["replace_stragglers"] = true;
  if (script) spec["command"]["script"] = *script;
  if (auto output = args.opt_string("--output")) spec["command"]["output"] = *output;
  if (auto error = args.opt_string("--error")) spec["command"]["error"] = *error;
  spec.update(array_and_dependency_fields(args));
  try {
    parse_job_spec(spec);
  } catch (const InvalidInput& e) {
    throw InvalidInput(flag_for_spec_field(e.field(), args), e.message());
  }
  return spec;
}

Json parse_spec_file(const std::string& path, const std::string& text) {
  Json spec;
  try {
    spec = parse_json_text(text);
  } catch (const InvalidInput& e) {
    throw InvalidInput(path, e.message());
  }
  if (!spec.is_object()) throw InvalidInput(path, "must hold a JSON object (a job spec)");
  return spec;
}

}  // namespace

// ---- submit ----

std::vector<FlagSpec> SubmitJob::flags() {
  std::vector<FlagSpec> flags = quick_submit_flags();
  flags.insert(flags.end(), array_and_dependency_flags().begin(), array_and_dependency_flags().end());
  flags.push_back({"--chdir", "DIR", "the directory every rank starts in (the quick form's default: the current one, as sbatch)",
                   false, {"-D"}});
  flags.push_back({"--wait", "", "follow the job to its end; exit with its exit code (see above)"});
  flags.push_back({"--hold", "", "submit held: never scheduled until 'trainyard release ID' (either form)"});
  return flags;
}

SubmitJob SubmitJob::parse(const ParsedArgs& args) {
  SubmitJob submit;
  submit.hold = args.has("--hold");
  submit.wait = args.has("--wait");
  if (args.trailing && args.positionals.empty()) {
    submit.spec = quick_spec(args, *args.trailing);
    return submit;
  }
  if (args.positionals.empty()) {
    throw InvalidInput("FILE", "give a JSON job spec, a batch script (#! and #SBATCH lines) or '-- PROGRAM ARGS...'");
  }
  // Which the file is, and so which flags apply, is known once it is read (requests).
  submit.spec_file = args.positionals.front();
  submit.script_args.assign(args.positionals.begin() + 1, args.positionals.end());
  if (args.trailing) submit.script_args.insert(submit.script_args.end(), args.trailing->begin(), args.trailing->end());
  submit.command_line = args;
  submit.array_and_dependencies = array_and_dependency_fields(args);
  submit.workdir = workdir_flag(args);
  return submit;
}

namespace {

// sbatch's options a batch script may carry and we do not: named, with what to do instead.
constexpr std::array<std::pair<std::string_view, std::string_view>, 1> kUnsupportedDirectives = {{
    {"--wait", "give --wait on the command line"},
}};

// The options of a script's #SBATCH lines, a later line's winning as in sbatch; `line_of` says
// where each came from.
ParsedArgs script_options(const std::string& path, const std::string& text, std::map<std::string, int>& line_of) {
  const std::vector<FlagSpec> flags = SubmitJob::flags();
  ParsedArgs options;
  for (const Directive& directive : sbatch_directives(path, text)) {
    const std::string where = path + ":" + std::to_string(directive.line);
    for (const std::string& word : directive.words) {
      const std::string name = word.substr(0, word.find('='));
      for (const auto& [option, instead] : kUnsupportedDirectives) {
        if (name == option) throw InvalidInput(where, "#SBATCH " + name + " is not supported: " + std::string(instead));
      }
    }
    ParsedArgs line;
    try {
      line = parse_flags(directive.words, flags, "#SBATCH");
    } catch (const InvalidInput& e) {
      throw InvalidInput(where, "#SBATCH " + e.field() + ": " + e.message());
    }
    if (!line.positionals.empty() || line.trailing || line.help) {
      throw InvalidInput(where, "#SBATCH takes options only (--nodes 2, -t 30), not \"" +
                                    (line.positionals.empty() ? std::string("--") : line.positionals.front()) + "\"");
    }
    for (auto& [flag, values] : line.values) {
      line_of[flag] = directive.line;
      options.values[flag] = std::move(values);
    }
  }
  return options;
}

bool repeatable(const std::string& flag) {
  for (const FlagSpec& spec : SubmitJob::flags()) {
    if (spec.name == flag) return spec.repeatable;
  }
  return false;
}

// `trainyard submit train.sbatch ARGS...`: the script as the job's command, with its #SBATCH options
// and the command line's laid over them (the command line wins, as in sbatch).
Json batch_script_spec(const std::string& path, const std::string& text, const std::vector<std::string>& script_args,
                       const ParsedArgs& command_line) {
  std::map<std::string, int> line_of;
  ParsedArgs options = script_options(path, text, line_of);
  for (const auto& [flag, values] : command_line.values) {
    std::vector<std::string>& into = options.values[flag];
    if (!repeatable(flag)) into.clear();
    into.insert(into.end(), values.begin(), values.end());
  }
  std::vector<std::string> argv{path == "-" ? std::string("batch-script") : path};
  argv.insert(argv.end(), script_args.begin(), script_args.end());
  Json spec;
  try {
    spec = quick_spec(options, argv, &text);
  } catch (const InvalidInput& e) {
    const auto line = line_of.find(e.field());
    if (line == line_of.end() || command_line.has(e.field())) throw;
    throw InvalidInput(path + ":" + std::to_string(line->second) + " #SBATCH " + e.field(), e.message());
  }
  if (options.has("--hold")) spec["hold"] = true;
  return spec;
}

Json json_spec(const std::string& path, const std::string& text, const SubmitJob& submit) {
  for (const FlagSpec& flag : quick_submit_flags()) {
    if (submit.command_line.has(flag.name)) {
      throw InvalidInput(flag.name, "applies to a batch script or the quick form 'submit [flags] -- PROGRAM ARGS...', "
                                    "not to a JSON job spec (set the spec's field)");
    }
  }
  if (!submit.script_args.empty()) {
    throw InvalidInput(path, "a JSON job spec takes no arguments (\"" + submit.script_args.front() +
                                 "\"); arguments follow a batch script or '-- PROGRAM'");
  }
  Json body = parse_spec_file(path, text);
  body.update(submit.array_and_dependencies);
  if (submit.workdir && body.contains("command") && body["command"].is_object()) body["command"]["workdir"] = *submit.workdir;
  return body;
}

}  // namespace

std::vector<ApiRequest> SubmitJob::requests(const InputReader& read) const {
  Json body = spec;
  if (!spec_file.empty()) {
    const std::string text = read(spec_file);
    body = is_batch_script(text) ? batch_script_spec(spec_file, text, script_args, command_line)
                                 : json_spec(spec_file, text, *this);
  }
  if (hold) body["hold"] = true;
  return {{"POST", "/v1/jobs", body}};
}

std::string SubmitJob::render(const Replies& replies, const RenderContext&) const {
  const Json& array = field_or_null(replies.at(0), "array");
  if (array.is_object()) {
    return "Submitted array job " + text_of(replies.at(0), "id") + " (" + text_of(array, "task_count") + " tasks)\n";
  }
  return "Submitted job " + text_of(replies.at(0), "id") + "\n";
}

}  // namespace trainyard::cli
