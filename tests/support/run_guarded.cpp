// A program's top (support/run_guarded.hpp): whatever escapes a
// command becomes one line on stderr and a non-zero status.

#include <topoblock/support/run_guarded.hpp>

#include <doctest/doctest.h>

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

namespace test_support_run_guarded {

namespace {

struct guarded_run {
    int status;
    std::string err;
};

template <class Command>
guarded_run guarded(Command command) {
    std::FILE* err = std::tmpfile();
    REQUIRE(err != nullptr);
    const int status = topoblock::run_guarded(command, err, "topoblock");
    std::rewind(err);
    std::string text;
    for (int c; (c = std::fgetc(err)) != EOF;) text += static_cast<char>(c);
    std::fclose(err);
    return {status, text};
}

}  // namespace

TEST_CASE("the program's top: a command's status passes, every exception becomes one line and status 1") {
    const auto ok = guarded([] { return 2; });
    CHECK(ok.status == 2);
    CHECK(ok.err.empty());
    const auto memory = guarded([]() -> int { throw std::bad_alloc(); });
    CHECK(memory.status == 1);
    CHECK(memory.err == "topoblock: error: out of memory (std::bad_alloc)\n");
    const auto standard = guarded([]() -> int { throw std::invalid_argument("engine_options::failures: bad\nsecond line"); });
    CHECK(standard.status == 1);
    CHECK(standard.err == "topoblock: error: engine_options::failures: bad second line\n");
    const auto other = guarded([]() -> int { throw 42; });
    CHECK(other.status == 1);
    CHECK(other.err == "topoblock: error: an exception that is no std::exception\n");
}

}  // namespace test_support_run_guarded
