#pragma once

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

// A tiny SVG writer for the simulator's pictures (occupancy maps,
// utilisation over time). No dependencies, and byte-identical output for the
// same calls: numbers are printed with std::to_chars at a fixed precision,
// never through a locale or a stream.

namespace topoblock::sim {

struct rgb {
    std::uint8_t r = 0, g = 0, b = 0;

    friend bool operator==(const rgb&, const rgb&) = default;

    // "#rrggbb"
    std::string hex() const {
        constexpr std::string_view digits = "0123456789abcdef";
        std::string out = "#";
        for (const std::uint8_t channel : {r, g, b}) {
            out += digits[channel >> 4];
            out += digits[channel & 0xf];
        }
        return out;
    }
};

// Okabe and Ito's palette (2008), told apart under the common colour-vision
// deficiencies. Black, its first colour, is moved last so categories start
// with colours.
inline constexpr std::array<rgb, 8> categorical_palette{{
    {0xe6, 0x9f, 0x00},  // orange
    {0x56, 0xb4, 0xe9},  // sky blue
    {0x00, 0x9e, 0x73},  // bluish green
    {0xf0, 0xe4, 0x42},  // yellow
    {0x00, 0x72, 0xb2},  // blue
    {0xd5, 0x5e, 0x00},  // vermillion
    {0xcc, 0x79, 0xa7},  // reddish purple
    {0x00, 0x00, 0x00},  // black
}};

// Colour of category i; repeats after the palette's 8 colours.
constexpr rgb categorical(std::size_t i) noexcept { return categorical_palette[i % categorical_palette.size()]; }

// Viridis (matplotlib's default map) sampled at nine even steps: perceptually
// uniform, readable in grey and under colour-vision deficiencies.
inline constexpr std::array<rgb, 9> viridis_stops{{
    {0x44, 0x01, 0x54}, {0x47, 0x2c, 0x7a}, {0x3b, 0x51, 0x8b}, {0x2c, 0x71, 0x8e}, {0x21, 0x90, 0x8d},
    {0x27, 0xad, 0x81}, {0x5c, 0xc8, 0x63}, {0xaa, 0xdc, 0x32}, {0xfd, 0xe7, 0x25},
}};

// Colour of a value in [0, 1] (clamped; NaN counts as 0), for heat maps such
// as "how full is this rack".
inline rgb sequential(double t) noexcept {
    if (!(t > 0.0)) return viridis_stops.front();
    if (t >= 1.0) return viridis_stops.back();
    const double position = t * static_cast<double>(viridis_stops.size() - 1);
    const auto i = static_cast<std::size_t>(position);
    const double f = position - static_cast<double>(i);
    const auto mix = [f](std::uint8_t a, std::uint8_t b) {
        return static_cast<std::uint8_t>(std::lround(a + (b - a) * f));
    };
    const rgb lo = viridis_stops[i], hi = viridis_stops[i + 1];
    return {mix(lo.r, hi.r), mix(lo.g, hi.g), mix(lo.b, hi.b)};
}

struct point {
    double x = 0.0, y = 0.0;
};

// How a shape is painted. No fill prints fill="none"; no stroke prints no
// stroke attributes at all.
struct style {
    std::optional<rgb> fill = std::nullopt;
    std::optional<rgb> stroke = std::nullopt;
    double stroke_width = 1.0;
    double opacity = 1.0;  // printed only below 1
};

enum class text_anchor { start, middle, end };

struct text_style {
    double size = 12.0;
    rgb fill{};
    text_anchor anchor = text_anchor::start;
};

namespace detail {

// `value` in fixed notation with `decimals` (0 to 16) digits after the
// point, never through a locale; 0 for NaN and infinities. The buffer holds
// any double: the largest has 309 digits before the point.
inline std::string fixed_notation(double value, int decimals) {
    if (!std::isfinite(value)) value = 0.0;
    decimals = std::clamp(decimals, 0, 16);
    std::array<char, 330> buffer;
    const auto [end, ec] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value, std::chars_format::fixed, decimals);
    if (ec != std::errc{}) return "0";
    return std::string(buffer.data(), end);
}

// Up to two decimals, trailing zeros dropped, never "-0" or "nan": SVG
// coordinates need no more, and the output stays short and stable.
inline void append_svg_number(std::string& out, double value) {
    std::string text = fixed_notation(value, 2);
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
    out += text == "-0" ? "0" : text;
}

// Escapes text for XML content and double-quoted attributes. Control
// characters XML 1.0 forbids are dropped rather than written invalid.
inline void append_escaped(std::string& out, std::string_view text) {
    for (const char c : text) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            case '\'': out += "&#39;"; break;
            default:
                if (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r') out += c;
        }
    }
}

}  // namespace detail

// An SVG document built element by element. Coordinates are user units of
// the viewBox; width and height are the displayed size.
class svg_document {
public:
    svg_document(double width, double height) : svg_document(width, height, {0.0, 0.0}, {width, height}) {}

    // view_origin and view_size give the viewBox: what part of the user
    // coordinate space the width x height picture shows.
    svg_document(double width, double height, point view_origin, point view_size) {
        body_ = R"(<svg xmlns="http://www.w3.org/2000/svg" width=")";
        number(width);
        body_ += R"(" height=")";
        number(height);
        body_ += R"(" viewBox=")";
        numbers({view_origin.x, view_origin.y, view_size.x, view_size.y}, ' ');
        body_ += R"(" font-family="sans-serif">)";
        body_ += '\n';
    }

    svg_document& rect(double x, double y, double width, double height, const style& s) {
        open("rect");
        attribute("x", x);
        attribute("y", y);
        attribute("width", width);
        attribute("height", height);
        return close_empty(s);
    }

    svg_document& line(point from, point to, const style& s) {
        open("line");
        attribute("x1", from.x);
        attribute("y1", from.y);
        attribute("x2", to.x);
        attribute("y2", to.y);
        return close_empty(s);
    }

    svg_document& polyline(std::span<const point> points, const style& s) {
        open("polyline");
        body_ += R"( points=")";
        for (std::size_t i = 0; i < points.size(); ++i) {
            if (i != 0) body_ += ' ';
            numbers({points[i].x, points[i].y}, ',');
        }
        body_ += '"';
        return close_empty(s);
    }

    svg_document& text(point at, std::string_view content, const text_style& s = {}) {
        open("text");
        attribute("x", at.x);
        attribute("y", at.y);
        attribute("font-size", s.size);
        body_ += R"( fill=")" + s.fill.hex() + '"';
        if (s.anchor != text_anchor::start)
            body_ += s.anchor == text_anchor::middle ? R"( text-anchor="middle")" : R"( text-anchor="end")";
        body_ += '>';
        detail::append_escaped(body_, content);
        body_ += "</text>\n";
        return *this;
    }

    // Opens a group; a non-empty title becomes its tooltip in browsers.
    // Groups nest; each begin_group needs an end_group.
    svg_document& begin_group(std::string_view title = {}) {
        indent();
        body_ += "<g>";
        if (!title.empty()) {
            body_ += "<title>";
            detail::append_escaped(body_, title);
            body_ += "</title>";
        }
        body_ += '\n';
        ++open_groups_;
        return *this;
    }

    svg_document& end_group() {
        if (open_groups_ == 0) return *this;  // nothing to close: keep the output well formed
        --open_groups_;
        indent();
        body_ += "</g>\n";
        return *this;
    }

    // The finished document; groups still open are closed.
    std::string str() const {
        std::string out = body_;
        for (std::size_t depth = open_groups_; depth > 0; --depth) {
            out.append(2 * depth, ' ');
            out += "</g>\n";
        }
        return out + "</svg>\n";
    }

private:
    void number(double value) { detail::append_svg_number(body_, value); }

    void numbers(std::initializer_list<double> values, char separator) {
        bool first = true;
        for (const double v : values) {
            if (!first) body_ += separator;
            first = false;
            number(v);
        }
    }

    void indent() { body_.append(2 * (open_groups_ + 1), ' '); }

    void open(std::string_view element) {
        indent();
        body_ += '<';
        body_ += element;
    }

    void attribute(std::string_view name, double value) {
        body_ += ' ';
        body_ += name;
        body_ += "=\"";
        number(value);
        body_ += '"';
    }

    svg_document& close_empty(const style& s) {
        body_ += R"( fill=")";
        body_ += s.fill ? s.fill->hex() : "none";
        body_ += '"';
        if (s.stroke) {
            body_ += R"( stroke=")" + s.stroke->hex() + '"';
            attribute("stroke-width", s.stroke_width);
        }
        if (s.opacity < 1.0) attribute("opacity", s.opacity);
        body_ += "/>\n";
        return *this;
    }

    std::string body_;
    std::size_t open_groups_ = 0;
};

}  // namespace topoblock::sim
