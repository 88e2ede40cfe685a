// The scheme registry and the interface every scheme plugs in through
// (fabric/schemes/registry.hpp, scheme.hpp, docs/testbed.md "The code"):
// names, report columns, parameter sections, a scheme's packet fields.
#include "fabric/schemes/conga.hpp"
#include "fabric/schemes/scheme.hpp"
#include "helpers.hpp"

#include <set>

using namespace laps;
using namespace laps::test;

namespace {

const std::string two_leaves = "version: 1\n"
                               "topology: 'leaf_spine:leaves=2,spines=2,hosts_per_leaf=2'\n"
                               "traffic:\n"
                               "  - flows: [{src: h0_0, dst: h1_0, bytes: 200000}, {src: h0_1, dst: h1_1, bytes: 200000}]\n";

std::vector<std::string> names_of(const std::vector<std::pair<std::string_view, std::uint64_t>>& counters)
{
    std::vector<std::string> out;
    for (const auto& [name, value] : counters) {
        out.emplace_back(name);
    }
    return out;
}

} // namespace

TEST(Schemes_Registry, NamesAreUniqueAndFoundAndLapsIsTheDefault)
{
    std::set<std::string_view> seen;
    for (const auto& row : fabric::schemes::registry()) {
        EXPECT_TRUE(seen.insert(row.name).second) << row.name << " twice";
        EXPECT_EQ(fabric::schemes::find(row.name), &row);
        EXPECT_NE(row.make, nullptr) << row.name;
        EXPECT_EQ(row.params_key.empty(), row.parse_params == nullptr) << row.name;
        EXPECT_EQ(row.counters.empty(), row.counters.data() == nullptr) << row.name;
    }
    EXPECT_EQ(seen.size(), 16u);
    EXPECT_EQ(fabric::schemes::find("nosuch"), nullptr);
    EXPECT_EQ(fabric::schemes::default_scheme().name, "laps");
    EXPECT_EQ(fabric::schemes::default_scheme().hosts, fabric::schemes::transport::laps_engine);
    EXPECT_EQ(fabric::scenario{}.scheme, &fabric::schemes::default_scheme());
}

// Every RoCE run reports every scheme's counters, in one order: the columns
// of summary.json's "roce" object do not depend on the scheme that ran.
TEST(Schemes_Registry, EveryRunReportsTheSameCounterColumns)
{
    const std::vector<std::string> columns{
        "path_changes",    "flowlets",         "plb_repaths",       "plb_rounds",         "plb_congested",
        "conga_feedback",  "cw_reroutes",      "cw_replies",        "cw_notifies",        "cw_held",
        "cw_held_max",     "cw_flush_by_tail", "cw_flush_by_timer", "reps_recycled",      "reps_explored",
        "reps_freezes",    "hopper_probes",    "hopper_switches",   "flowbender_reroutes", "sprayed_flows",
        "telb_pinned",     "glb_heartbeats",   "reunion_elephants", "reunion_marks",      "reunion_notifies",
        "reunion_reroutes"};
    for (const auto& row : fabric::schemes::registry()) {
        if (row.hosts == fabric::schemes::transport::laps_engine) {
            continue;
        }
        SCOPED_TRACE(std::string(row.name));
        auto s = scenario_from(two_leaves);
        s.scheme = &row;
        const auto summary = run_to_end(s);
        EXPECT_EQ(summary.completed, summary.flows);
        EXPECT_EQ(names_of(summary.scheme_counters), columns);
        // A scheme's own counters are its; the others' stay 0.
        for (const auto& [name, value] : summary.scheme_counters) {
            const bool own = name == "path_changes" ||
                             std::find(row.counters.begin(), row.counters.end(), name) != row.counters.end();
            if (!own) {
                EXPECT_EQ(value, 0u) << name;
            }
        }
        EXPECT_THROW(summary.scheme_counter("nosuch"), std::out_of_range);
    }
}

TEST(Schemes_Parameters, SectionsAreReadByTheirRowAndDefaultWhenAbsent)
{
    const auto given = scenario_from(two_leaves + "roce: {conga: {dre_alpha: 0.5, aging_us: 100}}\n");
    const auto& conga = given.scheme_params.get<fabric::schemes::conga_params>("conga");
    EXPECT_DOUBLE_EQ(conga.dre.alpha, 0.5);
    EXPECT_EQ(conga.aging_ns, 100'000);
    EXPECT_EQ(conga.dre.quantize_bits, 3u) << "keys not given keep their defaults";
    const auto absent = scenario_from(two_leaves);
    EXPECT_DOUBLE_EQ(absent.scheme_params.get<fabric::schemes::conga_params>("conga").dre.alpha, 0.2);
    EXPECT_THROW(given.scheme_params.get<fabric::schemes::dre_params>("conga"), std::logic_error)
        << "a section read as another type is a programming error, not a default";
    try {
        scenario_from(two_leaves + "roce: {conga: {dre_alfa: 0.5}}\n", "bad.yaml");
        ADD_FAILURE() << "a misspelt key must be an error";
    } catch (const config::config_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind("bad.yaml:5:16: roce.conga.dre_alfa: unknown key", 0), 0u) << e.what();
    }
}

// A scheme's fields on a packet: zero on a new record (its defaults), kept
// through copies of the record.
TEST(Schemes_Interface, HeaderFieldsRoundTripAndStartAtZero)
{
    struct fields {
        bool flag = false;
        std::uint32_t count = 0;
        std::int64_t stamp = 0;
    };
    fabric::packet_pool pool;
    const auto i = pool.alloc();
    const auto zero = fabric::schemes::header_of<fields>(pool[i]);
    EXPECT_FALSE(zero.flag);
    EXPECT_EQ(zero.count, 0u);
    EXPECT_EQ(zero.stamp, 0);
    fabric::schemes::set_header(pool[i], fields{true, 7, -5});
    const fabric::packet copy = pool[i];
    const auto back = fabric::schemes::header_of<fields>(copy);
    EXPECT_TRUE(back.flag);
    EXPECT_EQ(back.count, 7u);
    EXPECT_EQ(back.stamp, -5);
    pool.release(i);
    const auto j = pool.alloc();
    EXPECT_EQ(fabric::schemes::header_of<fields>(pool[j]).count, 0u) << "a recycled record starts clean";
}
