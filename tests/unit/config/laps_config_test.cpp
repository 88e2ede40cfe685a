// Configuration: defaults, the example files, and one test per class of bad
// input, each checking that the error names file:line:column and the key.
#include "config/laps_config.hpp"
#include "config/reader.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace laps::config;

namespace {

// The message of the config_error that loading `yaml` throws.
std::string error_of(const std::string& yaml)
{
    try {
        load_laps_config_string(yaml, "bad.yaml");
    } catch (const config_error& e) {
        return e.what();
    }
    return "no error";
}

#define EXPECT_ERROR(yaml, expected)                                                                                  \
    do {                                                                                                            \
        const std::string msg = error_of(yaml);                                                                     \
        EXPECT_NE(msg.find(expected), std::string::npos) << "got: " << msg;                                        \
    } while (0)

} // namespace

TEST(Config, EmptyDocumentGivesThePaperDefaults)
{
    const auto c = load_laps_config_string("version: 1\n");
    EXPECT_EQ(c.selection.beta.mode, laps::softmax::beta_mode::normalized);
    EXPECT_EQ(c.selection.beta.alpha, 1.0);
    EXPECT_EQ(c.congestion.aimd.increase_stages, 5u);
    EXPECT_EQ(c.congestion.aimd.cap_bps, 100e9);
    EXPECT_EQ(c.baseval.margin_packets, 5u);
    EXPECT_EQ(c.baseval.margin_per, margin_unit::per_switch);
    EXPECT_TRUE(c.tables.estimate_clock_offset);
    EXPECT_TRUE(c.paths.pst.empty());
}

TEST(Config, ExampleFilesLoad)
{
    const auto params = load_laps_config_file(LAPS_SOURCE_DIR "/configs/laps.yaml");
    EXPECT_EQ(params.retransmit.window_packets, 256u);
    EXPECT_EQ(params.retransmit.min_timeout_ns, 10'000);

    const auto c = load_laps_config_file(LAPS_SOURCE_DIR "/configs/paths-example.yaml");
    ASSERT_EQ(c.paths.pst.size(), 2u);
    EXPECT_EQ(c.paths.pst[0].destination.to_string(), "10.0.0.2");
    EXPECT_EQ(c.paths.pst[1].destination.to_string(), "fd00::2");
    EXPECT_EQ(c.paths.pst[1].fabric_ipv4, 0x0a000002u);
    EXPECT_EQ(c.paths.pst[0].fabric_ipv4, 0u);
    ASSERT_EQ(c.paths.pit.size(), 3u);
    EXPECT_EQ(c.paths.pit[1].anchor_count, 2);
    EXPECT_EQ(c.paths.pit[1].anchors[1], 71u);
    EXPECT_EQ(c.paths.pit[1].uncongested_ns, 9000);
    EXPECT_EQ(c.paths.pit[2].uncongested_ns, 8000); // defaults to base_ns
    EXPECT_EQ(c.host.address->to_string(), "10.0.0.1");
}

TEST(Config, FixedBetaIsPerMicrosecond)
{
    const auto c = load_laps_config_string("selection: {beta: {mode: fixed, per_us: 0.5}}\n");
    EXPECT_EQ(c.selection.beta.mode, laps::softmax::beta_mode::fixed);
    EXPECT_DOUBLE_EQ(c.selection.beta.fixed_per_ns, 0.0005);
}

TEST(Config, UnknownKeyNamesFileLineAndKey)
{
    EXPECT_ERROR("version: 1\ncongestion:\n  increase_stage: 5\n",
                 "bad.yaml:3:3: congestion.increase_stage: unknown key (known here: increase_stages,");
    EXPECT_ERROR("colour: blue\n", "bad.yaml:1:1: colour: unknown key");
}

TEST(Config, RepeatedKeyNamesBothPlaces)
{
    // yaml-cpp would keep the first value and ignore the second.
    EXPECT_ERROR("version: 1\ncongestion:\n  increase_stages: 5\n  increase_stages: 3\n",
                 "bad.yaml:4:3: congestion.increase_stages: key given twice (first at bad.yaml:3:3)");
    EXPECT_ERROR("version: 1\nversion: 1\n", "bad.yaml:2:1: version: key given twice (first at bad.yaml:1:1)");
}

TEST(Config, WrongTypeNamesFileLineAndKey)
{
    EXPECT_ERROR("congestion:\n  rate_cap_gbps: fast\n",
                 "bad.yaml:2:18: congestion.rate_cap_gbps: expected a number in (0, 10000], got 'fast'");
    EXPECT_ERROR("selection:\n  probing: maybe\n", "bad.yaml:2:12: selection.probing: expected true or false");
    EXPECT_ERROR("congestion: 5\n", "bad.yaml:1:13: congestion: expected a map, got '5'");
}

TEST(Config, OutOfRangeNamesFileLineAndKey)
{
    EXPECT_ERROR("congestion:\n  increase_stages: 100\n",
                 "bad.yaml:2:20: congestion.increase_stages: value 100 is out of range [0, 64]");
    EXPECT_ERROR("congestion:\n  rate_cap_gbps: 0\n", "bad.yaml:2:18: congestion.rate_cap_gbps: value 0 is out of range");
    EXPECT_ERROR("congestion: {rate_floor_gbps: 50, rate_cap_gbps: 10}\n",
                 "bad.yaml:1:31: congestion.rate_floor_gbps: floor 50 Gb/s is above the cap 10 Gb/s");
    EXPECT_ERROR("version: 2\n", "bad.yaml:1:10: version: value 2 is out of range [1, 1]");
}

TEST(Config, DanglingPidNamesFileLineAndKey)
{
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0, base_ns: 100}\n  pst:\n    - {dst: 10.0.0.2, pids: [0, 9]}\n",
                 "bad.yaml:5:33: paths.pst[0].pids[1]: pid 9 has no row in paths.pit (dangling pid)");
}

TEST(Config, PidSharedByTwoDestinationsIsAnError)
{
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0, base_ns: 100}\n  pst:\n    - {dst: 10.0.0.2, pids: [0]}\n"
                 "    - {dst: 10.0.0.3, pids: [0]}\n",
                 "bad.yaml:6:30: paths.pst[1].pids[0]: pid 0 already serves 10.0.0.2");
}

TEST(Config, DuplicatePitRowAndDestinationAreErrors)
{
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 3, base_ns: 100}\n    - {pid: 3, base_ns: 200}\n",
                 "bad.yaml:4:13: paths.pit[1].pid: pid 3 is already defined at line 3");
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0, base_ns: 100}\n    - {pid: 1, base_ns: 100}\n  pst:\n"
                 "    - {dst: 10.0.0.2, pids: [0]}\n    - {dst: 10.0.0.2, pids: [1]}\n",
                 "bad.yaml:7:13: paths.pst[1].dst: destination 10.0.0.2 appears twice");
}

TEST(Config, TooManyAnchorsOrPidsAreErrors)
{
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0, base_ns: 100, anchors: [1, 2, 3, 4, 5]}\n",
                 "bad.yaml:3:39: paths.pit[0].anchors: 5 anchors, at most 4");
    std::string many = "paths:\n  pit:\n";
    for (int i = 0; i < 17; ++i) {
        many += "    - {pid: " + std::to_string(i) + ", base_ns: 100}\n";
    }
    many += "  pst:\n    - {dst: 10.0.0.2, pids: [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16]}\n";
    EXPECT_ERROR(many, "bad.yaml:21:29: paths.pst[0].pids: 17 pids, expected 1 to 16");
}

TEST(Config, BadAddressAndMissingKeyAreErrors)
{
    EXPECT_ERROR("paths:\n  pst:\n    - {dst: 10.0.0.300, pids: [0]}\n",
                 "bad.yaml:3:13: paths.pst[0].dst: '10.0.0.300' is not an IPv4 or IPv6 address");
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0}\n", "bad.yaml:3:7: paths.pit[0].base_ns: missing (required)");
    EXPECT_ERROR("selection: {beta: {mode: fixed}}\n", "bad.yaml:1:19: selection.beta.per_us: missing (required)");
}

TEST(Config, Ipv6DestinationNeedsAFabricAddress)
{
    EXPECT_ERROR("paths:\n  pit:\n    - {pid: 0, base_ns: 100}\n  pst:\n    - {dst: fd00::2, pids: [0]}\n",
                 "bad.yaml:5:13: paths.pst[0].dst: an IPv6 destination needs fabric_ip");
}

TEST(Config, InconsistentBetaKeysAreErrors)
{
    EXPECT_ERROR("selection: {beta: {mode: fixed, per_us: 1, alpha: 2}}\n",
                 "bad.yaml:1:51: selection.beta.alpha: applies to mode normalized, not fixed");
    EXPECT_ERROR("selection: {beta: {mode: softer}}\n",
                 "bad.yaml:1:26: selection.beta.mode: 'softer' is not one of: fixed, normalized");
}

TEST(Config, YamlSyntaxErrorNamesFileAndLine)
{
    EXPECT_ERROR("congestion:\n  increase_stages: [1,\n", "bad.yaml:3:1: YAML syntax error");
}

TEST(Config, MissingFileIsAnError)
{
    try {
        load_laps_config_file("/nonexistent/laps.yaml");
        FAIL();
    } catch (const config_error& e) {
        EXPECT_STREQ(e.what(), "/nonexistent/laps.yaml: cannot open file");
    }
}

TEST(Config, ErrorsInARealFileNameThatFile)
{
    const std::string path = testing::TempDir() + "laps_config_test.yaml";
    {
        std::ofstream f(path);
        f << "version: 1\nretransmit:\n  window_packets: 1\n";
    }
    try {
        load_laps_config_file(path);
        FAIL();
    } catch (const config_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  path + ":3:19: retransmit.window_packets: value 1 is out of range [2, 32768]");
    }
    std::remove(path.c_str());
}

// Bounded inputs (config/reader.hpp max_config_bytes), each refused quickly with a clear error.
TEST(Config, NulByteIsAnErrorNamingItsLine)
{
    EXPECT_ERROR(std::string("version: 1\ntables: {clocks: \"un\0synchronized\"}\n", 47),
                 "bad.yaml:2:21: a NUL byte; a config is text");
}

TEST(Config, ASecondYamlDocumentIsAnError)
{
    EXPECT_ERROR("version: 1\n---\nselection: {probing: false}\n",
                 "bad.yaml:2:1: a second YAML document; a config file holds one");
    EXPECT_ERROR("version: 1\n...\nselection: {probing: false}\n", "bad.yaml:3:1: a second YAML document");
    // An explicit start of the first document is fine.
    EXPECT_EQ(error_of("# comment\n---\nversion: 1\n"), "no error");
}

TEST(Config, ANonScalarKeyIsAnErrorNotACrash)
{
    // Found by fuzz_laps_config: yaml-cpp's conversion threw past the reader.
    EXPECT_ERROR("? [a, b]\n: 1\n", "bad.yaml:1:3: a key must be a plain name, got a list");
    EXPECT_ERROR("selection: {? {x: 1} : 2}\n", "a key must be a plain name");
}

TEST(Config, FilesLargerThanTheLimitAreRefusedBeforeParsing)
{
    const std::string big = testing::TempDir() + "/laps_big_config.yaml";
    {
        std::ofstream out(big, std::ios::binary);
        out << "version: 1\n# " << std::string(max_config_bytes, 'x') << "\n";
    }
    try {
        load_laps_config_file(big);
        ADD_FAILURE() << "a 16 MiB config loaded";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("larger than 16 MiB"), std::string::npos) << e.what();
    }
    std::remove(big.c_str());
    // A device that never ends is refused after 16 MiB, not after memory runs out.
    try {
        load_laps_config_file("/dev/zero");
        ADD_FAILURE() << "/dev/zero loaded";
    } catch (const config_error& e) {
        EXPECT_NE(std::string(e.what()).find("/dev/zero: larger than 16 MiB"), std::string::npos) << e.what();
    }
}

// docs/congestion.md: congestion.cc chooses the rate control; congestion.fair tunes the
// fair variant. The paper's Alg. 2 is the default.
TEST(Config, CongestionControlVariantAndFairParameters)
{
    EXPECT_EQ(load_laps_config_string("version: 1\n").congestion.aimd.variant, laps::congestion::cc_variant::paper);
    const auto c = load_laps_config_string("version: 1\n"
                                           "congestion:\n"
                                           "  cc: fair\n"
                                           "  fair: {target_queue_us: 3.5, increase_gbps: 0.5, interval_us: 20,\n"
                                           "         decrease_gain: 0.6, max_decrease: 0.25, flow_scaling_us: 15,\n"
                                           "         coupled_paths: true}\n");
    const auto& a = c.congestion.aimd;
    EXPECT_EQ(a.variant, laps::congestion::cc_variant::fair);
    EXPECT_EQ(a.fair.target_queue_ns, 3'500);
    EXPECT_DOUBLE_EQ(a.fair.increase_bps, 0.5e9);
    EXPECT_EQ(a.fair.interval_ns, 20'000);
    EXPECT_DOUBLE_EQ(a.fair.decrease_gain, 0.6);
    EXPECT_DOUBLE_EQ(a.fair.max_decrease, 0.25);
    EXPECT_EQ(a.fair.flow_scaling_ns, 15'000);
    EXPECT_TRUE(a.fair.coupled_paths);
    EXPECT_FALSE(load_laps_config_string("version: 1\n").congestion.aimd.fair.coupled_paths); // off
    EXPECT_ERROR("version: 1\ncongestion:\n  fair: {coupled_paths: 2}\n", "congestion.fair.coupled_paths");
    EXPECT_EQ(load_laps_config_string("version: 1\n").congestion.aimd.fair.flow_scaling_ns, 0); // off
    EXPECT_ERROR("version: 1\ncongestion:\n  fair: {flow_scaling_us: -1}\n", "congestion.fair.flow_scaling_us");
    EXPECT_ERROR("version: 1\ncongestion:\n  cc: swift\n", "bad.yaml:3:7: congestion.cc:");
    EXPECT_ERROR("version: 1\ncongestion:\n  fair: {target: 1}\n", "congestion.fair.target: unknown key");
    EXPECT_ERROR("version: 1\ncongestion:\n  fair: {increase_gbps: 0}\n", "congestion.fair.increase_gbps");
    EXPECT_ERROR("version: 1\ncongestion:\n  fair: {max_decrease: 1.5}\n", "congestion.fair.max_decrease");
}

// docs/congestion.md "Receiver-paced credits": congestion.cc credit and its parameters.
TEST(Config, ReceiverPacedCreditParameters)
{
    const auto d = load_laps_config_string("version: 1\n").congestion.aimd.credit;
    EXPECT_EQ(d.unscheduled_bytes, 32u * 1024);
    EXPECT_EQ(d.window_bytes, 112u * 1024);
    EXPECT_DOUBLE_EQ(d.rate_fraction, 0.98);
    EXPECT_EQ(d.downlink_bps, 0.0);
    EXPECT_EQ(d.ports, 1u);
    EXPECT_EQ(d.fallback_ns, 100'000);
    EXPECT_FALSE(d.lossless_fabric.has_value()); // the testbed derives it from fabric.pfc
    const auto c = load_laps_config_string("version: 1\n"
                                           "congestion:\n"
                                           "  cc: credit\n"
                                           "  credit: {unscheduled_kb: 16, window_kb: 64, rate_fraction: 0.95,\n"
                                           "           downlink_gbps: 200, ports: 2, fallback_us: 50,\n"
                                           "           lossless_fabric: true}\n");
    const auto& a = c.congestion.aimd;
    EXPECT_EQ(a.variant, laps::congestion::cc_variant::credit);
    EXPECT_EQ(a.credit.unscheduled_bytes, 16u * 1024);
    EXPECT_EQ(a.credit.window_bytes, 64u * 1024);
    EXPECT_DOUBLE_EQ(a.credit.rate_fraction, 0.95);
    EXPECT_DOUBLE_EQ(a.credit.downlink_bps, 200e9);
    EXPECT_EQ(a.credit.ports, 2u);
    EXPECT_EQ(a.credit.fallback_ns, 50'000);
    EXPECT_EQ(a.credit.lossless_fabric, true);
    // The window past the unscheduled bytes, in DATA of the first request's length.
    EXPECT_EQ(laps::congestion::credit_window_grants(a.credit, 1024), 48u);
    EXPECT_ERROR("version: 1\ncongestion:\n  credit: {unscheduled_kb: 64, window_kb: 32}\n",
                 "congestion.credit.window_kb: below congestion.credit.unscheduled_kb (64)");
    EXPECT_ERROR("version: 1\ncongestion:\n  credit: {ports: 3}\n", "congestion.credit.ports");
    EXPECT_ERROR("version: 1\ncongestion:\n  credit: {rate_fraction: 0}\n", "congestion.credit.rate_fraction");
    EXPECT_ERROR("version: 1\ncongestion:\n  credit: {pace: 1}\n", "congestion.credit.pace: unknown key");
    EXPECT_ERROR("version: 1\ncongestion:\n  credit: {lossless_fabric: 2}\n", "congestion.credit.lossless_fabric");
}

// docs/pipeline.md "Other policies": the other seeds' host-side policies and their parameters.
TEST(Config, OtherSeedsPoliciesAndTheirParameters)
{
    const auto d = load_laps_config_string("version: 1\n").selection;
    EXPECT_EQ(d.reps_cache_size, 8);
    EXPECT_EQ(d.reps_freeze_ns, 1'000'000);
    EXPECT_DOUBLE_EQ(d.hopper.probe_threshold, 1.5);
    EXPECT_DOUBLE_EQ(d.hopper.congestion_threshold, 2.5);
    EXPECT_DOUBLE_EQ(d.flowbender.marked_fraction, 0.05);
    EXPECT_EQ(d.elephant_bytes, 1'000'000u);
    for (const char* name : {"reps", "hopper", "flowbender", "selective"}) {
        const auto c = load_laps_config_string(std::string("selection: {policy: ") + name + "}\n");
        EXPECT_EQ(laps::softmax::to_string(c.selection.policy), name);
    }
    const auto c = load_laps_config_string("selection:\n"
                                           "  policy: hopper\n"
                                           "  reps: {cache_size: 4, freeze_us: 0}\n"
                                           "  hopper: {probe_threshold: 2, congestion_threshold: 3, probe_ttl: 8,\n"
                                           "           ewma_gain: 0.5, switch_margin: 0.7}\n"
                                           "  flowbender: {marked_fraction: 0.1, rounds: 2}\n"
                                           "  selective: {elephant_bytes: 65536}\n");
    const auto& s = c.selection;
    EXPECT_EQ(s.reps_cache_size, 4);
    EXPECT_EQ(s.reps_freeze_ns, 0);
    EXPECT_DOUBLE_EQ(s.hopper.probe_threshold, 2.0);
    EXPECT_DOUBLE_EQ(s.hopper.congestion_threshold, 3.0);
    EXPECT_DOUBLE_EQ(s.hopper.probe_ttl, 8.0);
    EXPECT_DOUBLE_EQ(s.hopper.ewma_gain, 0.5);
    EXPECT_DOUBLE_EQ(s.hopper.switch_margin, 0.7);
    EXPECT_DOUBLE_EQ(s.flowbender.marked_fraction, 0.1);
    EXPECT_EQ(s.flowbender.rounds, 2u);
    EXPECT_EQ(s.elephant_bytes, 65536u);
    EXPECT_ERROR("selection:\n  policy: conga\n", "bad.yaml:2:11: selection.policy:");
    EXPECT_ERROR("selection:\n  reps: {cache_size: 0}\n", "selection.reps.cache_size");
    EXPECT_ERROR("selection:\n  hopper: {probe_threshold: 3, congestion_threshold: 2}\n",
                 "selection.hopper: congestion_threshold must be at least probe_threshold");
    EXPECT_ERROR("selection:\n  flowbender: {rounds: 0}\n", "selection.flowbender.rounds");
    EXPECT_ERROR("selection:\n  selective: {size: 1}\n", "selection.selective.size: unknown key");
    EXPECT_EQ(load_laps_config_string("selection: {selective: {dscp: [0, 46]}}\n").selection.elephant_dscp,
              (std::uint64_t{1} << 46) | 1u);
    EXPECT_ERROR("selection: {selective: {dscp: [64]}}\n", "selection.selective.dscp[0]");
}
