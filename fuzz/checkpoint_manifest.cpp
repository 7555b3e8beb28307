// The checkpoint reader on a hostile manifest: one real checkpoint is written per run, and each
// input replaces only its manifest.json before the checkpoint is verified, loaded and digested.
// The reader reports problems as values, so any exception, crash or sanitizer report is a bug.
#include <spdlog/spdlog.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <fstream>

#include "checkpoint/checkpoint.h"
#include "tests/support/temp_dir.h"

using namespace trainyard;
namespace fs = std::filesystem;

namespace {

checkpoint::TrainingState small_state() {
  checkpoint::TrainingState state;
  state.step = 7;
  state.data_position = 448;
  state.dims = {2, 3, 1};
  state.params.assign(13, 0.5f);
  state.adam_m.assign(13, 0.25f);
  state.adam_v.assign(13, 0.125f);
  return state;
}

const fs::path& checkpoint_dir() {
  static const TempDir root;
  static const fs::path dir = [] {
    spdlog::set_level(spdlog::level::off);
    return checkpoint::write_checkpoint(root.path(), small_state());
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path& dir = checkpoint_dir();
  {
    std::ofstream manifest(dir / "manifest.json", std::ios::binary | std::ios::trunc);
    manifest.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
    if (!manifest) std::abort();
  }
  const auto loaded = checkpoint::load_checkpoint(dir);
  if (!loaded && loaded.error().message.empty()) std::abort();
  checkpoint::manifest_sha256(dir);
  return 0;
}
