// How the tools end when memory runs out: with a message on stderr and their
// documented exit status, never by a signal (SPEC.md §9's exit codes).
//
//   int main(int argc, char** argv) {
//     sg::tools::exit_on_out_of_memory("graph-run", 3);
//     return sg::tools::guard_out_of_memory("graph-run", 3, [&] { return run(argc, argv); });
//   }
//
// std::bad_alloc raised on the main thread is caught by guard_out_of_memory; one
// raised on any other thread, or escaping a noexcept function, reaches
// std::terminate, whose handler here turns it into the same exit. Each tool's own
// operator new (operator_new.cc) throws rather than aborting as mimalloc's does.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>

namespace sg::tools {
namespace oom_detail {

inline const char*& tool_name() {
  static const char* name = "stagegraph";
  return name;
}
inline int& exit_code() {
  static int code = 1;
  return code;
}

// async-signal-safe: no allocation (there may be none left), write(2) and _exit.
[[noreturn]] inline void report_and_exit() {
  const char* parts[] = {tool_name(), ": error: out of memory (raise the memory or address-space limit, or "
                                      "give the program less to hold)\n"};
  for (const char* p : parts) {
    const ssize_t ignored = ::write(STDERR_FILENO, p, std::strlen(p));
    (void)ignored;
  }
  ::_exit(exit_code());
}

inline void on_terminate() {
  if (std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::bad_alloc&) {
      report_and_exit();
    } catch (...) {
    }
  }
  static const char kOther[] = ": internal error: terminated (an uncaught exception)\n";
  const ssize_t a = ::write(STDERR_FILENO, tool_name(), std::strlen(tool_name()));
  const ssize_t b = ::write(STDERR_FILENO, kOther, sizeof kOther - 1);
  (void)a;
  (void)b;
  std::abort();
}

}  // namespace oom_detail

// Installs the terminate handler and the new_handler for tool `name`, which exits
// with `code` when memory runs out.
inline void exit_on_out_of_memory(const char* name, int code) {
  oom_detail::tool_name() = name;
  oom_detail::exit_code() = code;
  std::set_terminate(oom_detail::on_terminate);
  // When memory is gone, even the std::bad_alloc to throw may not be allocatable:
  // operator new (operator_new.cc) calls this handler instead, which exits at once.
  std::set_new_handler([] { oom_detail::report_and_exit(); });
}

// The exit status from now on (graph-run: 2 while loading, 3 while running).
inline void set_out_of_memory_exit_code(int code) { oom_detail::exit_code() = code; }

// Runs `body`, turning a std::bad_alloc it lets escape into the exit above.
template <typename F>
int guard_out_of_memory(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    oom_detail::report_and_exit();
  }
}

}  // namespace sg::tools
