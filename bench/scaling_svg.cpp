// Draws docs/performance-scaling.svg from a Google Benchmark CSV file:
// nanoseconds per operation against racks, log-log, one line per benchmark
// family and policy, each labelled with its log-log slope.
//   topoblock_bench --benchmark_filter='(alloc_release|slurm_bitmap)'
//       --benchmark_out=scaling.csv --benchmark_out_format=csv   (one line)
//   scaling_svg scaling.csv > docs/performance-scaling.svg

#include <topoblock/sim/svg.hpp>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using topoblock::sim::point;
using topoblock::sim::style;
using topoblock::sim::svg_document;
using topoblock::sim::text_anchor;
using topoblock::sim::text_style;

// Splits one CSV line; quoted fields may hold commas.
std::vector<std::string> fields(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) out.emplace_back();
        else out.back() += c;
    }
    return out;
}

double least_squares_slope(const std::vector<std::pair<double, double>>& xy) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    const double n = static_cast<double>(xy.size());
    for (const auto& [x, y] : xy) {
        sx += std::log(x);
        sy += std::log(y);
        sxx += std::log(x) * std::log(x);
        sxy += std::log(x) * std::log(y);
    }
    const double d = n * sxx - sx * sx;
    return d == 0 ? 0.0 : (n * sxy - sx * sy) / d;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fputs("usage: scaling_svg BENCHMARK.csv > scaling.svg\n", stderr);
        return 2;
    }
    std::ifstream in(argv[1]);
    if (!in) {
        std::fprintf(stderr, "scaling_svg: cannot read %s\n", argv[1]);
        return 1;
    }
    // series name -> (racks, ns per op) in file order
    std::map<std::string, std::vector<std::pair<double, double>>> series;
    std::string line;
    int name_col = -1, cpu_col = -1, unit_col = -1;
    while (std::getline(in, line)) {
        const auto f = fields(line);
        if (name_col < 0) {
            for (int i = 0; i < static_cast<int>(f.size()); ++i) {
                if (f[static_cast<std::size_t>(i)] == "name") name_col = i;
                if (f[static_cast<std::size_t>(i)] == "cpu_time") cpu_col = i;
                if (f[static_cast<std::size_t>(i)] == "time_unit") unit_col = i;
            }
            continue;
        }
        if (static_cast<int>(f.size()) <= std::max(cpu_col, unit_col)) continue;
        const std::string& name = f[static_cast<std::size_t>(name_col)];
        const auto slash = name.rfind('/');
        if (slash == std::string::npos) continue;
        const double racks = std::atof(name.c_str() + slash + 1);
        double ns = std::atof(f[static_cast<std::size_t>(cpu_col)].c_str());
        const std::string unit = f[static_cast<std::size_t>(unit_col)];
        if (unit == "us") ns *= 1e3;
        else if (unit == "ms") ns *= 1e6;
        else if (unit == "s") ns *= 1e9;
        if (racks > 0 && ns > 0) series[name.substr(0, slash)].emplace_back(racks, ns);
    }
    if (series.empty()) {
        std::fputs("scaling_svg: no benchmark rows of the form family/policy/racks\n", stderr);
        return 1;
    }
    double lo = 1e300, hi = 0, rmin = 1e300, rmax = 0;
    for (const auto& [name, xy] : series)
        for (const auto& [x, y] : xy) {
            lo = std::min(lo, y), hi = std::max(hi, y);
            rmin = std::min(rmin, x), rmax = std::max(rmax, x);
        }
    const double ylo = std::pow(10.0, std::floor(std::log10(lo))), yhi = std::pow(10.0, std::ceil(std::log10(hi)));
    const double width = 760, height = 440, left = 70, right = 250, top = 40, bottom = 50;
    const auto px = [&](double racks) {
        return left + (std::log(racks) - std::log(rmin)) / (std::log(rmax) - std::log(rmin)) * (width - left - right);
    };
    const auto py = [&](double ns) {
        return top + (std::log(yhi) - std::log(ns)) / (std::log(yhi) - std::log(ylo)) * (height - top - bottom);
    };
    svg_document doc(width, height);
    doc.rect(0, 0, width, height, style{topoblock::sim::rgb{255, 255, 255}, std::nullopt});
    doc.text({left, 24}, "Time per decision against cluster size (log-log; slope 0 = flat)", text_style{15});
    const style grid{std::nullopt, topoblock::sim::rgb{220, 220, 220}};
    for (double y = ylo; y <= yhi * 1.001; y *= 10) {
        doc.line({left, py(y)}, {width - right, py(y)}, grid);
        const std::string label = y >= 1e6 ? std::to_string(static_cast<long long>(y / 1e6)) + " ms"
                                  : y >= 1e3 ? std::to_string(static_cast<long long>(y / 1e3)) + " us"
                                             : std::to_string(static_cast<long long>(y)) + " ns";
        doc.text({left - 6, py(y) + 4}, label, text_style{11, {}, text_anchor::end});
    }
    for (const auto& [x, y] : series.begin()->second) {
        (void)y;
        doc.line({px(x), top}, {px(x), height - bottom}, grid);
        doc.text({px(x), height - bottom + 16}, std::to_string(static_cast<long long>(x)), text_style{11, {}, text_anchor::middle});
    }
    doc.text({(left + width - right) / 2, height - 12}, "NVL72 racks (72 GPUs each)", text_style{12, {}, text_anchor::middle});
    std::size_t i = 0;
    for (const auto& [name, xy] : series) {
        const auto colour = topoblock::sim::categorical(i);
        std::vector<point> line;
        for (const auto& [x, y] : xy) line.push_back({px(x), py(y)});
        doc.polyline(line, style{std::nullopt, colour, 2.0});
        for (const auto& p : line) doc.rect(p.x - 2.5, p.y - 2.5, 5, 5, style{colour, std::nullopt});
        char legend[160];
        std::snprintf(legend, sizeof legend, "%s (slope %.2f)", name.c_str(), least_squares_slope(xy));
        const double ly = top + 14 + 18 * static_cast<double>(i);
        doc.line({width - right + 12, ly - 4}, {width - right + 32, ly - 4}, style{std::nullopt, colour, 3.0});
        doc.text({width - right + 38, ly}, legend, text_style{11});
        ++i;
    }
    std::fputs(doc.str().c_str(), stdout);
    return 0;
}
