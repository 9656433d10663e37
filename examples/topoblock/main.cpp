// topoblock: the library in an operator's hands.
//   topoblock place     scripted placement: events on stdin, one line per decision
//   topoblock simulate  trace replay comparing placement policies
//   topoblock topology  check, convert and draw a topology

#include "place_command.hpp"
#include "simulate_command.hpp"
#include "topology_command.hpp"

#include <topoblock/support/quote.hpp>
#include <topoblock/support/run_guarded.hpp>
#include <topoblock/version.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

namespace {

void usage(std::FILE* to) {
    std::fputs(
        "usage: topoblock <command> [options]\n"
        "  place     read allocation events on standard input and print each decision\n"
        "  simulate  replay a workload under several placement policies and compare them\n"
        "  topology  check a topology, convert it (topology.conf, topology.yaml, spec) or draw its racks\n"
        "Run `topoblock <command> --help` for a command's options; `topoblock --version` prints the version.\n",
        to);
}

}  // namespace

int main(int argc, char** argv) {
    return topoblock::run_guarded(
        [&] {
            std::vector<std::string_view> args(argv + 1, argv + argc);
            // The main job: with no command, run the default comparison.
            if (args.empty()) return topoblock::cli::simulate_main(args);
            const std::string_view command = args.front();
            args.erase(args.begin());
            if (command == "place") return topoblock::cli::place_main(args);
            if (command == "simulate") return topoblock::cli::simulate_main(args);
            if (command == "topology") return topoblock::cli::topology_main(args);
            if (command == "--version" || command == "version") {
                std::printf("topoblock %d.%d.%d\n", topoblock::version_major, topoblock::version_minor,
                            topoblock::version_patch);
                return 0;
            }
            if (command == "--help" || command == "-h" || command == "help") {
                usage(stdout);
                return 0;
            }
            std::fprintf(stderr, "topoblock: unknown command %s\n", topoblock::detail::quoted(command).c_str());
            usage(stderr);
            return 2;
        },
        stderr, "topoblock");
}
