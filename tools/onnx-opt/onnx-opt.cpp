//===- onnx-opt.cpp - The onnx-opt command -------------------------------===//
#include "onnxopt/Tool/OnnxOptMain.h"
#include "llvm/Support/raw_ostream.h"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
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

/// Whether an argument names a file of at least 4 MiB (the input, most
/// likely): below that the second exec (about 14 ms of CPU here, for the
/// libraries' loading) costs more than huge pages save.
static bool namesLargeFile(int Argc, char **Argv) {
#if defined(__linux__) && defined(__GLIBC__)
  for (int I = 1; I < Argc; ++I) {
    struct stat St;
    if (Argv[I][0] != '-' && ::stat(Argv[I], &St) == 0 && S_ISREG(St.st_mode) &&
        St.st_size >= (4 << 20))
      return true;
  }
#else
  (void)Argc;
  (void)Argv;
#endif
  return false;
}

/// Runs the command again, once, with the heap on transparent huge pages
/// when the kernel gives them only on request. The IR is millions of small
/// blocks touched in no particular order: with 4 KiB pages a 100k-node
/// round trip took 27k page faults and as many TLB misses in the analyses'
/// tables (at 1M nodes, 270k faults); with 2 MiB pages 6k, and a third less
/// CPU time. glibc reads the tunable only at startup, hence the exec; the
/// environment variable also stops a second one. ONNX_OPT_NO_HUGE_PAGES=1
/// (or any GLIBC_TUNABLES naming the tunable) keeps the process as it is.
static void reexecWithHugePages(int Argc, char **Argv) {
#if defined(__linux__) && defined(__GLIBC__) &&                                \
    !defined(__SANITIZE_ADDRESS__) && !ONNXOPT_HAS_FEATURE(address_sanitizer)
  const char *Old = std::getenv("GLIBC_TUNABLES");
  if ((Old && std::strstr(Old, "glibc.malloc.hugetlb")) ||
      std::getenv("ONNX_OPT_NO_HUGE_PAGES") || !namesLargeFile(Argc, Argv) ||
      !hugePagesOnRequest())
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
