// process_carries_gpu_code: the loaded objects (dl_iterate_phdr), by name
// and by their ELF section headers.
#include "portability/gpu/gpu_code.hpp"

#include "base/config.hpp"
#include "portability/gpu/gpu_api.hpp"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace strata::gpu {
namespace {

enum class GpuProgram : uint8_t { automatic, on, off };
config::ChoiceParam<GpuProgram> g_gpu_program{
    "STRATA_GPU_PROGRAM",
    GpuProgram::automatic,
    {{"auto", GpuProgram::automatic}, {"on", GpuProgram::on}, {"off", GpuProgram::off}},
    "Is the program a GPU program? auto (the default) = where it shows GPU use at MPI_Init: GPUs bound by the "
    "launcher (CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES), a GPU context made, or GPU code "
    "loaded (a CUDA/HIP runtime library, or device code in one of its objects); on = yes (a program that loads its "
    "GPU code only after MPI_Init); off = no. A rank that is not counts no GPUs in the job's facts: its job's host "
    "collectives go to the MPI library from the exported function, its device buffers (if any) are staged"};

const char* base_name(const char* path) {
  const char* base = std::strrchr(path, '/');
  return base != nullptr ? base + 1 : path;
}

bool starts_with(const char* s, const char* prefix) { return std::strncmp(s, prefix, std::strlen(prefix)) == 0; }

// What Strata loads itself, whatever the program is: NCCL/RCCL (opened by
// collectives/nccl, and holding device code), the GPU driver, and in a HIP
// build the HIP runtime it links. Seen on 2 x H100: without this, every
// host program under the preload counted as a GPU program through libnccl.
bool loaded_by_strata(const char* base) {
  if (starts_with(base, "libnccl.so") || starts_with(base, "librccl.so") || starts_with(base, "libcuda.so") ||
      starts_with(base, "libnvidia-") || starts_with(base, "libamd_comgr") || starts_with(base, "libhsa-runtime")) {
    return true;
  }
#if defined(STRATA_HAVE_HIP)
  if (starts_with(base, "libamdhip64.so")) return true;
#endif
  return false;
}

bool runtime_library(const char* base) {
  return starts_with(base, "libcudart.so") || starts_with(base, "libamdhip64.so");
}

bool read_at(int fd, void* out, size_t bytes, off_t at) {
  return pread(fd, out, bytes, at) == static_cast<ssize_t>(bytes);
}

// Has the ELF file a section of device code? False where it cannot tell.
bool has_device_code(const char* path) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool found = false;
  Elf64_Ehdr eh{};
  if (read_at(fd, &eh, sizeof eh, 0) && std::memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
      eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_shentsize == sizeof(Elf64_Shdr) && eh.e_shnum > 0 &&
      eh.e_shnum < 65280 && eh.e_shstrndx < eh.e_shnum) {
    std::vector<Elf64_Shdr> sections(eh.e_shnum);
    const Elf64_Shdr* names = nullptr;
    if (read_at(fd, sections.data(), sections.size() * sizeof(Elf64_Shdr), static_cast<off_t>(eh.e_shoff))) {
      names = &sections[eh.e_shstrndx];
    }
    std::vector<char> text;
    if (names != nullptr && names->sh_size > 0 && names->sh_size < (size_t{1} << 24)) {
      text.resize(names->sh_size + 1, '\0');
      if (!read_at(fd, text.data(), names->sh_size, static_cast<off_t>(names->sh_offset))) text.clear();
    }
    for (const Elf64_Shdr& s : sections) {
      if (text.empty() || s.sh_name >= text.size() - 1) continue;
      const char* name = text.data() + s.sh_name;
      if (std::strcmp(name, ".nv_fatbin") == 0 || std::strcmp(name, ".hip_fatbin") == 0) {
        found = true;
        break;
      }
    }
  }
  close(fd);
  return found;
}

struct Search {
  uintptr_t own = 0;  // an address in Strata's own object (the preload library, or a program linked with Strata)
  std::string found;
};

bool holds(const struct dl_phdr_info* info, uintptr_t address) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& p = info->dlpi_phdr[i];
    const uintptr_t start = info->dlpi_addr + p.p_vaddr;
    if (p.p_type == PT_LOAD && address >= start && address < start + p.p_memsz) return true;
  }
  return false;
}

int visit(struct dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* search = static_cast<Search*>(data);
  if (holds(info, search->own)) return 0;
  std::string path = info->dlpi_name != nullptr ? info->dlpi_name : "";
  if (path.rfind("linux-vdso", 0) == 0) return 0;
  if (path.empty()) path = "/proc/self/exe";  // the program itself
  const char* base = base_name(path.c_str());
  if (loaded_by_strata(base)) return 0;
  if (runtime_library(base) || has_device_code(path.c_str())) {
    search->found = path;
    return 1;  // stop
  }
  return 0;
}

}  // namespace

bool process_carries_gpu_code(std::string* what) noexcept {
  try {
    Search search;
    search.own = reinterpret_cast<uintptr_t>(&process_carries_gpu_code);
    dl_iterate_phdr(visit, &search);
    if (what != nullptr) *what = search.found;
    return !search.found.empty();
  } catch (...) {
    return false;
  }
}

namespace {

bool uses_gpus_or_throw(std::string* why) {
  auto say = [why](const char* text) {
    if (why != nullptr) *why = text;
  };
  switch (g_gpu_program.get()) {
    case GpuProgram::on: say("STRATA_GPU_PROGRAM=on"); return true;
    case GpuProgram::off: say("STRATA_GPU_PROGRAM=off"); return false;
    case GpuProgram::automatic: break;
  }
  for (const char* name : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') {
      say("GPUs bound by the launcher");
      return true;
    }
  }
  if (context_active()) {
    say("a GPU context made before MPI_Init");
    return true;
  }
  std::string object;
  if (process_carries_gpu_code(&object)) {
    if (why != nullptr) *why = "GPU code loaded (" + object + ")";
    return true;
  }
  say("no GPU use shown at MPI_Init");
  return false;
}

}  // namespace

bool uses_gpus(std::string* why) noexcept {
  try {
    return uses_gpus_or_throw(why);
  } catch (...) {
    return false;
  }
}

}  // namespace strata::gpu
