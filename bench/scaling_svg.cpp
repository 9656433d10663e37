// Draws docs/performance-scaling.svg from Google Benchmark JSON files:
// nanoseconds per operation against racks, log-log, one line per benchmark
// family and policy, each labelled with its log-log slope. Given several
// files (or repetitions), each point is the fastest of them.
//   topoblock_bench --benchmark_filter='^(alloc_release|slurm_bitmap)/'
//       --benchmark_out=scaling-1.json --benchmark_out_format=json   (one line; run it several times)
//   scaling_svg scaling-*.json > docs/performance-scaling.svg

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

// The string value of a `"key": "value",` line of Google Benchmark's JSON
// (one key per line), or the raw number text for a numeric value.
std::string json_value(const std::string& line) {
    const auto colon = line.find("\": ");
    if (colon == std::string::npos) return {};
    std::string v = line.substr(colon + 3);
    while (!v.empty() && (v.back() == ',' || v.back() == ' ' || v.back() == '\r')) v.pop_back();
    if (v.size() >= 2 && v.front() == '"') v = v.substr(1, v.size() - 2);
    return v;
}
bool has_key(const std::string& line, const char* key) {
    return line.find(std::string("\"") + key + "\":") != std::string::npos;
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
    if (argc < 2) {
        std::fputs("usage: scaling_svg BENCHMARK.json... > scaling.svg\n", stderr);
        return 2;
    }
    // series name -> racks -> the fastest ns per op of every file and
    // repetition: on a machine whose processes run fast or slow at random,
    // several runs' fastest is the figure (docs/performance.md)
    std::map<std::string, std::map<double, double>> fastest;
    for (int f = 1; f < argc; ++f) {
        std::ifstream in(argv[f]);
        if (!in) {
            std::fprintf(stderr, "scaling_svg: cannot read %s\n", argv[f]);
            return 1;
        }
        std::string line, name, run_type;
        double cpu = 0.0;
        while (std::getline(in, line)) {
            if (has_key(line, "name")) {
                name = json_value(line);
                run_type.clear();
            } else if (has_key(line, "run_type")) {
                run_type = json_value(line);
            } else if (has_key(line, "cpu_time")) {
                cpu = std::atof(json_value(line).c_str());
            } else if (has_key(line, "time_unit")) {
                if (run_type == "aggregate") continue;  // a mean, median or spread of repetitions
                const std::string unit = json_value(line);
                const double ns = cpu * (unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 1.0);
                const auto slash = name.rfind('/');
                if (slash == std::string::npos) continue;
                const double racks = std::atof(name.c_str() + slash + 1);
                if (racks <= 0 || ns <= 0) continue;
                auto [at, added] = fastest[name.substr(0, slash)].emplace(racks, ns);
                if (!added && ns < at->second) at->second = ns;
            }
        }
    }
    // series name -> (racks, ns per op), racks ascending
    std::map<std::string, std::vector<std::pair<double, double>>> series;
    for (const auto& [name, by_racks] : fastest) series[name].assign(by_racks.begin(), by_racks.end());
    if (series.empty()) {
        std::fputs("scaling_svg: no benchmarks named family/policy/racks\n", stderr);
        return 1;
    }
    double lo = 1e300, hi = 0, rmin = 1e300, rmax = 0;
    for (const auto& [name, xy] : series)
        for (const auto& [x, y] : xy) {
            lo = std::min(lo, y), hi = std::max(hi, y);
            rmin = std::min(rmin, x), rmax = std::max(rmax, x);
        }
    const double ylo = std::pow(10.0, std::floor(std::log10(lo))), yhi = std::pow(10.0, std::ceil(std::log10(hi)));
    const double width = 900, height = 440, left = 70, right = 330, top = 40, bottom = 50;
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
