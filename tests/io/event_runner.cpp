// The event runner's `save`: by default a file is replaced; with a writer of
// the caller's, the snapshot's text goes to it and no file is touched.

#include <topoblock/io/event_runner.hpp>
#include <topoblock/io/snapshot.hpp>
#include <topoblock/policy/best_fit.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace test_io_event_runner {

using namespace topoblock;

TEST_CASE("event runner: save hands the snapshot to the caller's writer, which may refuse it") {
    const topology topo = gb200_nvl72(2);
    std::ostringstream out, err;
    io::event_runner runner(*allocator<best_fit>::create(topo), out, err, false);
    std::vector<std::pair<std::string, std::string>> saved;
    runner.set_file_writer([&](const std::string& path, const std::string& text, std::string& why) {
        if (path == "full") {
            why = "no room left";
            return false;
        }
        saved.emplace_back(path, text);
        return true;
    });
    std::istringstream in("alloc j1 gpus=8\nsave /no/such/dir/state\nsave full\n");
    CHECK_FALSE(runner.run(in));
    REQUIRE(saved.size() == 1);
    CHECK(saved[0].first == "/no/such/dir/state");
    // The text is the allocator's snapshot, the running job labelled by its ID.
    const auto back = io::read_snapshot<best_fit>(saved[0].second, topo);
    REQUIRE(back);
    CHECK(back->allocator.state().allocation_count() == 1);
    REQUIRE(back->labels.size() == 1);
    CHECK(back->labels[0].second == "j1");
    // The writer's refusal is the line's error.
    CHECK(err.str().find("line 3") != std::string::npos);
    CHECK(err.str().find("no room left") != std::string::npos);
}

TEST_CASE("event runner: without a writer, save replaces the file and names one it cannot write") {
    const topology topo = gb200_nvl72(1);
    std::ostringstream out, err;
    io::event_runner runner(*allocator<best_fit>::create(topo), out, err, false);
    std::istringstream in("save /no/such/dir/state\n");
    CHECK_FALSE(runner.run(in));
    CHECK(err.str().find("line 1") != std::string::npos);
}

}  // namespace test_io_event_runner
