//===- onnx-opt.cpp - The onnx-opt command -------------------------------===//
#include "onnxopt/Tool/OnnxOptMain.h"
#include "llvm/Support/raw_ostream.h"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#if defined(__linux__) && defined(__GLIBC__)
#include <sys/stat.h>
#include <unistd.h>
#endif

#ifdef __has_feature
#define ONNXOPT_HAS_FEATURE(X) __has_feature(X)
#else
#define ONNXOPT_HAS_FEATURE(X) 0
#endif

/// The tunable that makes glibc's malloc (2.35 and later) ask for
/// transparent huge pages (madvise) on the heap it grows; older versions
/// ignore it.
static constexpr const char *kHugePageTunable = "glibc.malloc.hugetlb=1";

/// Whether the kernel gives huge pages to memory that asks for them
/// (`madvise` mode). In `always` mode the heap has them already; in `never`
/// mode, or without the file, asking does nothing.
static bool hugePagesOnRequest() {
  std::ifstream In("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string Line;
  return std::getline(In, Line) && Line.find("[madvise]") != std::string::npos;
}

/// The size of the largest regular file an argument names (the input, most
/// likely), or 0.
static uint64_t largestFileArgument(int Argc, char **Argv) {
  uint64_t Largest = 0;
#if defined(__linux__) && defined(__GLIBC__)
  for (int I = 1; I < Argc; ++I) {
    struct stat St;
    if (Argv[I][0] != '-' && ::stat(Argv[I], &St) == 0 && S_ISREG(St.st_mode))
      Largest = std::max(Largest, static_cast<uint64_t>(St.st_size));
  }
#else
  (void)Argc;
  (void)Argv;
#endif
  return Largest;
}

/// Bytes the kernel holds free in blocks of a huge page or more
/// (/proc/buddyinfo: free blocks per zone and order), which a huge-page
/// fault takes at once; 0 when unknown. Without them each fault compacts
/// memory first (the THP defrag mode `madvise`), which is slower than the
/// small pages it saves: a page cache filled by large models is such a
/// case (bench/RESULTS.md).
static uint64_t freeHugePageBytes() {
  uint64_t HugePage = 2 << 20;
  {
    std::ifstream In("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    In >> HugePage;
  }
  long Page = ::sysconf(_SC_PAGESIZE);
  if (Page <= 0 || HugePage < uint64_t(Page))
    return 0;
  unsigned HugeOrder = 0;
  while ((uint64_t(Page) << HugeOrder) < HugePage)
    ++HugeOrder;
  std::ifstream In("/proc/buddyinfo");
  std::string Line;
  uint64_t Free = 0;
  // "Node 0, zone   Normal  48 838 ...": counts of free blocks of order 0, 1,
  // ...
  while (std::getline(In, Line)) {
    size_t Pos = Line.find("zone");
    if (Pos == std::string::npos)
      continue;
    std::istringstream Fields(Line.substr(Pos + 4));
    std::string Zone;
    Fields >> Zone;
    uint64_t Count;
    for (unsigned Order = 0; Fields >> Count; ++Order)
      if (Order >= HugeOrder)
        Free += (Count * uint64_t(Page)) << Order;
  }
  return Free;
}

/// Below this input size the second exec (about 14 ms of CPU here, for the
/// libraries' loading) costs more than huge pages save.
static constexpr uint64_t kMinHugePageInput = 4 << 20;
/// The heap a binary model's IR and analyses take, per byte of the file, at
/// most (a 115 MB torch-style graph of 1M nodes: 0.9 GB), with a margin.
static constexpr uint64_t kHeapPerInputByte = 12;

/// Runs the command again, once, with the heap on transparent huge pages
/// when the kernel gives them only on request. The IR is millions of small
/// blocks touched in no particular order: with 4 KiB pages a 100k-node
/// round trip took 27k page faults and as many TLB misses in the analyses'
/// tables (at 1M nodes, 270k faults); with 2 MiB pages 6k, and a third less
/// CPU time. Only for a large input, and only when the kernel has free huge
/// pages for the heap it will need (freeHugePageBytes). glibc reads the
/// tunable only at startup, hence the exec; the environment variable also
/// stops a second one. ONNX_OPT_NO_HUGE_PAGES=1
/// (or any GLIBC_TUNABLES naming the tunable) keeps the process as it is.
static void reexecWithHugePages(int Argc, char **Argv) {
#if defined(__linux__) && defined(__GLIBC__) &&                                \
    !defined(__SANITIZE_ADDRESS__) && !ONNXOPT_HAS_FEATURE(address_sanitizer)
  const char *Old = std::getenv("GLIBC_TUNABLES");
  if ((Old && std::strstr(Old, "glibc.malloc.hugetlb")) ||
      std::getenv("ONNX_OPT_NO_HUGE_PAGES") || !hugePagesOnRequest())
    return;
  uint64_t Input = largestFileArgument(Argc, Argv);
  if (Input < kMinHugePageInput ||
      freeHugePageBytes() / kHeapPerInputByte < Input)
    return;
  std::string Tunables = Old && *Old ? std::string(Old) + ":" : std::string();
  Tunables += kHugePageTunable;
  if (::setenv("GLIBC_TUNABLES", Tunables.c_str(), 1) != 0)
    return;
  // The binary's own path, not /proc/self/exe: the process keeps its name
  // (ps, top and perf show onnx-opt, not exe).
  char Self[4096];
  ssize_t Len = ::readlink("/proc/self/exe", Self, sizeof(Self) - 1);
  if (Len > 0) {
    Self[Len] = '\0';
    ::execv(Self, Argv);
  }
  // No exec (no /proc): go on as we are, with the environment as it was.
  if (Old)
    ::setenv("GLIBC_TUNABLES", Old, 1);
  else
    ::unsetenv("GLIBC_TUNABLES");
#else
  (void)Argc;
  (void)Argv;
#endif
}

int main(int Argc, char **Argv) {
  reexecWithHugePages(Argc, Argv);
  int RC = onnxopt::onnxOptMain(Argc, Argv);
#if !defined(__SANITIZE_ADDRESS__) && !ONNXOPT_HAS_FEATURE(address_sanitizer)
  // What is left only frees memory: ONNX's schema registry and the other
  // statics take 5-10 ms to tear down, for nothing, at the end of every run.
  // The output streams are flushed first; one that failed takes the normal
  // exit, whose destructors report the failure. Sanitizer builds keep the
  // normal exit for their leak check.
  llvm::outs().flush();
  llvm::errs().flush();
  if (std::fflush(nullptr) == 0 && !llvm::outs().has_error() &&
      !llvm::errs().has_error())
    std::_Exit(RC);
#endif
  return RC;
}
