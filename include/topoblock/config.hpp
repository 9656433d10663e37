#pragma once

// Configuration macros; each can be defined before including topoblock.
// docs/config.md lists them.

#include <cstdio>
#include <cstdlib>

namespace topoblock {

// Called when a TOPOBLOCK_ASSERT check fails: the condition's text and where
// it is. The default prints them to stderr and aborts. A handler may throw
// (a test's, say), which reaches the caller from the functions not marked
// noexcept (topology::node, domain; the state's mutations); from a noexcept
// one the throw ends the program as an abort would.
using assertion_handler = void (*)(const char* condition, const char* file, int line);

namespace detail {
inline void abort_on_assertion(const char* condition, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: topoblock precondition failed: %s\n", file, line, condition);
    std::abort();
}
inline assertion_handler current_assertion_handler = abort_on_assertion;
[[noreturn]] inline void assertion_failed(const char* condition, const char* file, int line) {
    current_assertion_handler(condition, file, line);
    std::abort();  // a handler that returns
}
}  // namespace detail

// Installs `handler` for TOPOBLOCK_ASSERT's default definition (nullptr: the
// default) and returns the one it replaces. Not thread safe.
inline assertion_handler set_assertion_handler(assertion_handler handler) noexcept {
    const assertion_handler before = detail::current_assertion_handler;
    detail::current_assertion_handler = handler != nullptr ? handler : detail::abort_on_assertion;
    return before;
}

}  // namespace topoblock

// Checks of preconditions the caller must keep (node and domain ids in range,
// pieces naming GPUs their node has), never of user input, which is always
// validated and answered with an error value. Active unless NDEBUG is
// defined; a failed check calls the assertion handler above.
#ifndef TOPOBLOCK_ASSERT
#ifdef NDEBUG
#define TOPOBLOCK_ASSERT(condition) static_cast<void>(0)
#else
#define TOPOBLOCK_ASSERT(condition) \
    ((condition) ? static_cast<void>(0) : ::topoblock::detail::assertion_failed(#condition, __FILE__, __LINE__))
#endif
#endif

// The most nodes one NVLink domain may hold in the default capacity. It fixes
// the width of each domain's node masks (one 64-bit word for 64).
#ifndef TOPOBLOCK_DEFAULT_MAX_NODES_PER_DOMAIN
#define TOPOBLOCK_DEFAULT_MAX_NODES_PER_DOMAIN 64
#endif
