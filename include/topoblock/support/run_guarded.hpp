#pragma once

// The top of a program built on the library: no exception leaves main()
// unreported.

#include <cstdio>
#include <exception>
#include <new>
#include <string_view>

namespace topoblock {

// Runs `command` and returns its exit status. An exception that escapes it
// (std::bad_alloc, any std::exception, anything else) becomes one line on
// `err`, "PROGRAM: error: ...", and exit status 1, rather than
// std::terminate's abort. Writing the line allocates nothing, so it works
// when memory ran out.
template <class Command>
int run_guarded(Command&& command, std::FILE* err, std::string_view program) noexcept {
    const auto say = [err, program](std::string_view what) noexcept {
        std::fwrite(program.data(), 1, program.size(), err);
        std::fputs(": error: ", err);
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

}  // namespace topoblock
