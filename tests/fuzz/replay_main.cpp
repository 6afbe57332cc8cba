// Runs LLVMFuzzerTestOneInput over files and folders of inputs (the seed
// corpus and the saved crashes), for compilers without libFuzzer: the
// fuzz_datatype_replay ctest. Exits non-zero when an argument cannot be read
// or no input was run; a failing input aborts inside the target.
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool run_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "fuzz replay: cannot read %s\n", path.c_str());
    return false;
  }
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int ran = 0;
  bool ok = true;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg)) {
        const std::string name = entry.path().filename().string();
        if (!entry.is_regular_file() || name.front() == '.' || entry.path().extension() == ".md") continue;
        ok = run_file(entry.path()) && ok;
        ++ran;
      }
    } else {
      ok = run_file(arg) && ok;
      ++ran;
    }
  }
  std::printf("fuzz replay: %d inputs\n", ran);
  MPI_Finalize();
  return ok && ran > 0 ? 0 : 1;
}
