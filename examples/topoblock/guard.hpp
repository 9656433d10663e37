#pragma once

// The program's top: no exception leaves main() unreported.

#include <cstdio>
#include <exception>
#include <new>
#include <string_view>

namespace topoblock::cli {

// Runs `command` and returns its exit status. An exception that escapes it
// (std::bad_alloc, any std::exception, anything else) becomes one line on
// `err`, "topoblock: error: ...", and exit status 1, rather than
// std::terminate's abort. Writing the line allocates nothing, so it works
// when memory ran out.
template <class Command>
int run_guarded(Command&& command, std::FILE* err) noexcept {
    const auto say = [err](std::string_view what) noexcept {
        std::fputs("topoblock: error: ", err);
        // One line, whatever the message holds.
        for (const char c : what) std::fputc(c == '\n' || c == '\r' ? ' ' : c, err);
        std::fputc('\n', err);
        std::fflush(err);
    };
    try {
        return command();
    } catch (const std::bad_alloc&) {
        say("out of memory (std::bad_alloc)");
    } catch (const std::exception& e) {
        say(e.what());
    } catch (...) {
        say("an exception that is no std::exception");
    }
    return 1;
}

}  // namespace topoblock::cli
