#include <topoblock/config.hpp>
#include <topoblock/topology/presets.hpp>

#include <doctest/doctest.h>

#include <string>

namespace test_config {

using namespace topoblock;

namespace {

struct precondition_failed {
    std::string condition;
    int line = 0;
};

[[noreturn]] void throw_precondition(const char* condition, const char*, int line) {
    throw precondition_failed{condition, line};
}

// Installs the throwing handler for one test and puts the previous one back.
struct throwing_handler {
    assertion_handler before = set_assertion_handler(throw_precondition);
    ~throwing_handler() { set_assertion_handler(before); }
};

}  // namespace

#ifndef NDEBUG
TEST_CASE("TOPOBLOCK_ASSERT calls the installed handler when a precondition fails") {
    const topology topo = gb200_nvl72(2);
    throwing_handler installed;
    CHECK(topo.node(topo.node_count() - 1).domain == 1);  // in range: no call
    try {
        (void)topo.node(topo.node_count());
        FAIL("a node id out of range passed the check");
    } catch (const precondition_failed& failed) {
        CHECK(failed.condition == "n < node_count_");
        CHECK(failed.line > 0);
    }
    CHECK_THROWS_AS((void)topo.domain(topo.domain_count()), precondition_failed);
}
#endif

TEST_CASE("set_assertion_handler returns the handler it replaces, and nullptr restores the default") {
    const assertion_handler original = set_assertion_handler(throw_precondition);
    const bool replaced_throwing = set_assertion_handler(nullptr) == throw_precondition;
    CHECK(replaced_throwing);
    const bool restored_default = set_assertion_handler(original) == original;  // the default is back
    CHECK(restored_default);
}

}  // namespace test_config
