#pragma once
// A batch script as sbatch takes one: an interpreter line (`#!`) first, then `#SBATCH OPTION...`
// lines, read up to the first line that is neither blank nor a comment; every later `#SBATCH` is a
// comment, as in sbatch. `##SBATCH` and `# SBATCH` are comments too (how users switch one off).
#include <string>
#include <string_view>
#include <vector>

namespace trainyard::cli {

// Whether `text` is a batch script (it begins with `#!`) rather than a JSON job spec.
bool is_batch_script(std::string_view text);

struct Directive {
  int line = 0;                    // 1-based, for errors: "train.sbatch:3"
  std::vector<std::string> words;  // split as a shell would: quotes kept together, `#` after a blank ends it
};

// The script's #SBATCH directives in order. Throws InvalidInput("PATH:LINE", ...) for an
// unterminated quote.
std::vector<Directive> sbatch_directives(std::string_view path, std::string_view text);

}  // namespace trainyard::cli
