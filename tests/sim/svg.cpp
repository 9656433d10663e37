#include <topoblock/sim/svg.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace test_sim_svg {

using namespace topoblock::sim;

namespace {

std::size_t count(std::string_view text, std::string_view what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string_view::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

std::string formatted(double value) {
    std::string out;
    topoblock::sim::detail::append_svg_number(out, value);
    return out;
}

}  // namespace

TEST_CASE("a tiny document, byte for byte") {
    svg_document doc(200, 100.5);
    doc.rect(0, 0, 200, 100.5, {rgb{255, 255, 255}, std::nullopt});
    doc.begin_group("rack 1: 64/72 GPUs");
    doc.rect(10.25, 20, 30, 40, {sequential(0.5), rgb{0, 0, 0}, 0.5, 0.8});
    doc.end_group();
    // 25.125 is exact in binary: the tie rounds to even, 25.12.
    const std::vector<point> curve{{0, 100}, {50, 25.125}, {100, 0}};
    doc.polyline(curve, {std::nullopt, categorical(1), 2});
    doc.line({0, 99}, {200, 99}, {std::nullopt, rgb{0, 0, 0}});
    doc.text({100, 12}, "utilisation", {10, rgb{}, text_anchor::middle});
    CHECK(doc.str() ==
          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"200\" height=\"100.5\" viewBox=\"0 0 200 100.5\" "
          "font-family=\"sans-serif\">\n"
          "  <rect x=\"0\" y=\"0\" width=\"200\" height=\"100.5\" fill=\"#ffffff\"/>\n"
          "  <g><title>rack 1: 64/72 GPUs</title>\n"
          "    <rect x=\"10.25\" y=\"20\" width=\"30\" height=\"40\" fill=\"#21908d\" stroke=\"#000000\" "
          "stroke-width=\"0.5\" opacity=\"0.8\"/>\n"
          "  </g>\n"
          "  <polyline points=\"0,100 50,25.12 100,0\" fill=\"none\" stroke=\"#56b4e9\" stroke-width=\"2\"/>\n"
          "  <line x1=\"0\" y1=\"99\" x2=\"200\" y2=\"99\" fill=\"none\" stroke=\"#000000\" stroke-width=\"1\"/>\n"
          "  <text x=\"100\" y=\"12\" font-size=\"10\" fill=\"#000000\" text-anchor=\"middle\">utilisation</text>\n"
          "</svg>\n");
}

TEST_CASE("the same calls give the same bytes") {
    const auto draw = [] {
        svg_document doc(640, 480, {-10, -10}, {660, 500});
        for (int i = 0; i < 100; ++i) doc.rect(i * 6.4, std::sin(i) * 100, 6.4, 1.0 / 3.0, {sequential(i / 99.0)});
        return doc.str();
    };
    const auto first = draw();
    CHECK(first == draw());
    CHECK(first.find("viewBox=\"-10 -10 660 500\"") != std::string::npos);
    CHECK(first.find("height=\"0.33\"") != std::string::npos);
}

TEST_CASE("numbers are compact and never -0, nan or inf") {
    CHECK(formatted(2.0) == "2");
    CHECK(formatted(1.25) == "1.25");
    CHECK(formatted(0.1 + 0.2) == "0.3");
    CHECK(formatted(1e6) == "1000000");
    CHECK(formatted(-3.5) == "-3.5");
    CHECK(formatted(-0.001) == "0");
    CHECK(formatted(-0.0) == "0");
    CHECK(formatted(std::nan("")) == "0");
    CHECK(formatted(std::numeric_limits<double>::infinity()) == "0");
    // Beyond 64 characters (a trace's 1e308-second job): every digit, no
    // stray bytes.
    const std::string huge = formatted(1e80);
    CHECK(huge.size() == 81);
    CHECK(huge.starts_with("1000000000000000"));
    CHECK(huge.find_first_not_of("0123456789") == std::string::npos);
    const std::string largest = topoblock::sim::detail::fixed_notation(-std::numeric_limits<double>::max(), 16);
    CHECK(largest.size() == 1 + 309 + 1 + 16);
    CHECK(largest.starts_with("-17976931348623157"));
}

TEST_CASE("text and titles are escaped") {
    svg_document doc(10, 10);
    doc.begin_group("job \"a\" & <b>");
    doc.text({0, 0}, "x < y && y > \"z\" 'q'\x01");
    doc.end_group();
    const auto out = doc.str();
    CHECK(out.find("<title>job &quot;a&quot; &amp; &lt;b&gt;</title>") != std::string::npos);
    CHECK(out.find(">x &lt; y &amp;&amp; y &gt; &quot;z&quot; &#39;q&#39;</text>") != std::string::npos);
    CHECK(out.find('\x01') == std::string::npos);
    // Every '<' that is not markup was escaped: tags are exactly the elements.
    CHECK(count(out, "<") == count(out, ">"));
}

TEST_CASE("tags balance, even when groups are left open") {
    svg_document doc(10, 10);
    doc.begin_group("outer").begin_group().rect(0, 0, 1, 1, {}).end_group();
    doc.begin_group("left open");
    doc.end_group().end_group().end_group();  // one too many: ignored
    doc.begin_group();
    const auto out = doc.str();
    CHECK(count(out, "<g>") == 4);
    CHECK(count(out, "</g>") == 4);
    CHECK(count(out, "<svg ") == 1);
    CHECK(out.ends_with("</svg>\n"));
    CHECK(count(out, "<title>") == count(out, "</title>"));
}

TEST_CASE("colours") {
    CHECK(rgb{0xe6, 0x9f, 0x00}.hex() == "#e69f00");
    CHECK(categorical(0) == categorical(8));
    CHECK(categorical(0) != categorical(1));
    CHECK(sequential(0.0).hex() == "#440154");
    CHECK(sequential(1.0).hex() == "#fde725");
    CHECK(sequential(0.5).hex() == "#21908d");
    CHECK(sequential(-1.0) == sequential(0.0));
    CHECK(sequential(7.0) == sequential(1.0));
    CHECK(sequential(std::nan("")) == sequential(0.0));
    // Between two stops, each channel lies between theirs.
    const rgb mid = sequential(0.0625);
    CHECK(mid.r >= 0x44);
    CHECK(mid.r <= 0x47);
    CHECK(mid.g > 0x01);
    CHECK(mid.g < 0x2c);
}

}  // namespace test_sim_svg
