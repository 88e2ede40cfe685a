// docs/design.md §2: the testbed is deterministic for a seed. Two runs of the same
// scenario and seed write byte-identical result files; another seed changes
// them (Poisson arrivals, sizes and engine draws all come from the seed).
// Every run returns every mbuf to its pool.
#include "helpers.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace laps;
using namespace laps::test;

namespace {

std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

const char* const scenario_yaml = "version: 1\n"
                                  "topology: 'leaf_spine:leaves=2,spines=2,hosts_per_leaf=4'\n"
                                  "traffic:\n"
                                  "  - poisson: {workload: configs/workloads/hadoop.cdf, load: 0.6, "
                                  "duration_us: 300}\n"
                                  "faults:\n"
                                  "  - {link: all, action: loss, probability: 1e-4}\n"
                                  "  - {at_us: 150, link: [leaf0, spine1], action: down}\n";

std::filesystem::path run_into(const std::string& tag, std::uint64_t seed,
                               const fabric::schemes::info& scheme = fabric::schemes::default_scheme())
{
    const auto dir =
        std::filesystem::temp_directory_path() / ("laps-testbed-det-" + std::to_string(getpid()) + "-" + tag);
    fabric::run_options o;
    o.seed = seed;
    auto s = scenario_from(scenario_yaml);
    s.scheme = &scheme;
    fabric::simulation sim(s, o);
    sim.run();
    const auto summary = fabric::write_results(sim, dir.string(), nullptr);
    for (const auto& p : summary.pools) {
        EXPECT_EQ(p.in_use, 0u) << p.name;
    }
    EXPECT_GT(summary.flows, 20u);
    return dir;
}

} // namespace

TEST(IV_Determinism, SameSeedGivesIdenticalFiles)
{
    const auto a = run_into("a", 7);
    const auto b = run_into("b", 7);
    const auto c = run_into("c", 8);
    for (const char* file : {"summary.json", "flows.csv", "paths.csv", "links.csv", "reorder.csv"}) {
        EXPECT_EQ(slurp(a / file), slurp(b / file)) << file << " differs between two runs with seed 7";
    }
    EXPECT_NE(slurp(a / "summary.json"), slurp(c / "summary.json")) << "seed 8 should change the run";
    for (const auto& d : {a, b, c}) {
        std::filesystem::remove_all(d);
    }
}

// The same for every scheme (fabric/schemes/registry.hpp): the RoCE NIC
// model, RED marking and the schemes' random path choices all draw from the seed.
TEST(IV_Determinism, EverySchemeGivesIdenticalFilesForASeed)
{
    for (const auto& info : fabric::schemes::registry()) {
        if (&info == &fabric::schemes::default_scheme()) {
            continue; // the test above (laps)
        }
        SCOPED_TRACE(std::string(info.name));
        const std::string name(info.name);
        const auto a = run_into(name + "-a", 7, info);
        const auto b = run_into(name + "-b", 7, info);
        const auto c = run_into(name + "-c", 8, info);
        for (const char* file : {"summary.json", "flows.csv", "paths.csv", "links.csv"}) {
            EXPECT_EQ(slurp(a / file), slurp(b / file)) << file << " differs between two runs with seed 7";
        }
        EXPECT_NE(slurp(a / "summary.json"), slurp(c / "summary.json")) << "seed 8 should change the run";
        for (const auto& d : {a, b, c}) {
            std::filesystem::remove_all(d);
        }
    }
}

// Mid-run stops, link failures, losses and flows cut short leave nothing
// behind: release() frees the fabric, the engines free what they hold.
TEST(IV_Determinism, EveryMbufReturnsToItsPoolEvenWhenStoppedMidRun)
{
    fabric::simulation sim(scenario_from(scenario_yaml));
    sim.run_until(200'000);
    EXPECT_FALSE(sim.done());
    for (const auto& p : sim.release()) {
        EXPECT_EQ(p.in_use, 0u) << p.name;
    }
}
