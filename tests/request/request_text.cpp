// Requests as text: every word of the language parsed, each mistake named
// with its column, and to_string read back as the same request.

#include <topoblock/request/request_text.hpp>

#include <doctest/doctest.h>

#include <string>
#include <string_view>

namespace test_request_request_text {

using namespace topoblock;

namespace {

// The error of `text`, as a person reads it.
std::string refusal(std::string_view text) {
    const auto r = parse_request(text);
    REQUIRE_FALSE(r.has_value());
    return r.error().to_string();
}

}  // namespace

TEST_CASE("request text: every word") {
    CHECK(*parse_request("nodes=2") == request::nodes(2));
    CHECK(*parse_request("gpus=8") == request::gpus(8));
    CHECK(*parse_request("  gpus=16\tsegment=4 spread-segments ") == request::gpus(16).with_segment(4, true));
    CHECK(*parse_request("locality=prefer nodes=3 exclusive=topo") ==
          request::nodes(3).with_locality(locality::prefer).with_exclusive_domain());
    CHECK(*parse_request("gpus=3 whole-nodes locality=any") == request::gpus(3).with_whole_nodes().with_locality(locality::any));
    CHECK(*parse_request("gpus=4294967295") == request::gpus(4294967295U));
    // Malformed for the allocator, not for the text: the allocator says so.
    CHECK(parse_request("nodes=5 segment=2")->malformed());
}

TEST_CASE("request text: each mistake names its word and column") {
    CHECK(refusal("nodes=two") == "line 1, column 7: expected a positive number, got 'two'");
    CHECK(refusal("nodes=0") == "line 1, column 7: expected a positive number, got '0'");
    CHECK(refusal("gpus=4294967296") == "line 1, column 6: '4294967296' is too large (at most 4294967295)");
    CHECK(refusal("gpus=1 segment=-2") == "line 1, column 16: expected a positive number, got '-2'");
    CHECK(refusal("gpus=1 nodes=1") == "line 1, column 8: give one of nodes= and gpus=, once");
    CHECK(refusal("gpus=1 gpus=1") == "line 1, column 8: give one of nodes= and gpus=, once");
    CHECK(refusal("gpus=2 segment=1 segment=2") == "line 1, column 18: segment= is given twice");
    CHECK(refusal("gpus=2 spread-segments spread-segments") == "line 1, column 24: 'spread-segments' is given twice");
    CHECK(refusal("gpus=2 locality=any locality=any") == "line 1, column 21: locality= is given twice");
    CHECK(refusal("nodes") == "line 1, column 1: 'nodes' needs a value: nodes=...");
    CHECK(refusal("nodes=1 exclusive=yes") == "line 1, column 19: expected exclusive=topo");
    CHECK(refusal("nodes=1 locality=near") == "line 1, column 18: expected locality=require, prefer or any");
    CHECK(refusal("nodes=1 colour=red") ==
          "line 1, column 9: unknown request word 'colour=red' (expected nodes=, gpus=, segment=, spread-segments, "
          "exclusive=topo, whole-nodes, locality=)");
    CHECK(refusal("segment=2") == "line 1, column 10: the request needs nodes=N or gpus=N");
    CHECK(refusal("") == "line 1, column 1: the request needs nodes=N or gpus=N");
    // Echoed words are quoted short and escaped.
    CHECK(refusal("gpus=\x1b[2J") == "line 1, column 6: expected a positive number, got '\\x1b[2J'");
    CHECK(refusal(std::string(100, 'x')).size() < 200);
}

TEST_CASE("request text: to_string leaves defaults out and reads back as the same request") {
    CHECK(to_string(request::gpus(8)) == "gpus=8");
    CHECK(to_string(request::nodes(4).with_segment(2, true).with_exclusive_domain().with_locality(locality::any)) ==
          "nodes=4 segment=2 spread-segments exclusive=topo locality=any");
    for (const unit u : {unit::gpus, unit::nodes})
        for (const locality l : {locality::require, locality::prefer, locality::any})
            for (const std::uint32_t segment : {0U, 1U, 3U, 4294967295U})
                for (int flags = 0; flags < 8; ++flags) {
                    request r{12, u};
                    r.where = l;
                    r.segment = segment;
                    r.spread_segments = (flags & 1) != 0;
                    r.exclusive_domain = (flags & 2) != 0;
                    r.whole_nodes = (flags & 4) != 0;
                    const std::string text = to_string(r);
                    CAPTURE(text);
                    const auto back = parse_request(text);
                    REQUIRE(back.has_value());
                    CHECK(*back == r);
                }
}

TEST_CASE("locality as text") {
    for (const locality l : {locality::require, locality::prefer, locality::any}) CHECK(parse_locality(to_string(l)) == l);
    CHECK_FALSE(parse_locality("Require").has_value());
    CHECK_FALSE(parse_locality("").has_value());
}

}  // namespace test_request_request_text
