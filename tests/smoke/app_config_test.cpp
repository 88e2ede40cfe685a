// The app's YAML config on inline documents: defaults, instances and link,
// tables from a topology, and errors with file:line:col and key.
#include "app/config/config.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <unistd.h>
#include <string>

namespace laps::app {
namespace {

const std::string ports = R"(
ports:
  host: {devargs: "net_null0,copy=1"}
  fabric: {devargs: net_null1, rx_desc: 512}
outer: {ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:fe"}
)";

std::string error_of(const std::string& yaml)
{
    try {
        parse_app_config(yaml, "t.yaml");
    } catch (const config::config_error& e) {
        return e.what();
    }
    return "no error";
}

TEST(app_config, defaults)
{
    const auto c = parse_app_config(ports, "t.yaml");
    ASSERT_EQ(c.instances.size(), 1u);
    const auto& i = c.instances[0];
    EXPECT_EQ(i.name, "laps");
    EXPECT_EQ(i.host.devargs, "net_null0,copy=1");
    EXPECT_EQ(i.fabric.rx_desc, 512);
    EXPECT_TRUE(i.workers.empty());
    EXPECT_EQ(*i.outer.ip, 0x0a000001u);
    EXPECT_FALSE(i.outer.mac.has_value());
    EXPECT_EQ(i.outer.udp_port, 19521);
    EXPECT_EQ(i.engine.unknown_destination, pipeline::unknown_destination_policy::pass);
    EXPECT_EQ(c.run.max_packets, 0u);
    EXPECT_EQ(c.run.drain_ns, 100 * common::ns_per_ms);
    EXPECT_FALSE(c.link.has_value());
}

TEST(app_config, every_section)
{
    const auto c = parse_app_config(ports + R"(
lcores: {control: 0, workers: [1, 3], idle: yield}
mempool: {mbufs: 4095, control_mbufs: 1023, cache: 64}
engine: {unknown_destination: drop, oversize: pass, in_order: true, flow_queue_packets: 32, flow_idle_ms: 5, burst: 64}
steering: {host: software, fabric: rte_flow, tag_bits: 3, ring_size: 1024}
stats: {interval_ms: 500}
run: {max_packets: 10, max_fabric_packets: 20, duration_ms: 30, idle_ms: 40, drain_ms: 50}
congestion: {rate_cap_gbps: 25}
paths:
  pst: [{dst: 10.0.0.2, pids: [0]}]
  pit: [{pid: 0, base_ns: 1000}]
)",
                                    "t.yaml");
    const auto& i = c.instances[0];
    EXPECT_EQ(i.workers, (std::vector<unsigned>{1, 3}));
    EXPECT_EQ(c.idle, idle_mode::yield);
    EXPECT_EQ(i.mempool.mbufs, 4095u);
    EXPECT_EQ(i.engine.unknown_destination, pipeline::unknown_destination_policy::drop);
    EXPECT_EQ(i.engine.oversize, pipeline::oversize_policy::pass);
    EXPECT_TRUE(i.engine.in_order);
    EXPECT_EQ(i.engine.flow_idle_ns, 5 * common::ns_per_ms);
    EXPECT_EQ(i.burst, 64);
    EXPECT_EQ(i.steering.host, host_steering::software);
    EXPECT_EQ(i.steering.fabric, fabric_steering::rte_flow);
    EXPECT_EQ(*i.steering.tag_bits, 3);
    EXPECT_EQ(c.stats.interval_ns, 500 * common::ns_per_ms);
    EXPECT_EQ(c.run.max_fabric_packets, 20u);
    EXPECT_EQ(c.run.idle_ns, 40 * common::ns_per_ms);
    EXPECT_DOUBLE_EQ(i.engine.algo.congestion.aimd.cap_bps, 25e9);
    EXPECT_EQ(i.engine.algo.paths.pst.size(), 1u);
}

TEST(app_config, instances_and_link)
{
    const auto c = parse_app_config(R"(
lcores: {control: 0}
link: {lcore: 3, default_delay_us: 5, paths: [{pid: 0, delay_us: 20}, {pid: 1, delay_us: 80}]}
instances:
  a:
    ports: {host: {devargs: net_null0}, fabric: {link: true}}
    lcores: {workers: [1]}
    outer: {ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:02"}
  b:
    ports: {host: {devargs: net_null1}, fabric: {link: true}}
    lcores: {workers: [2]}
    outer: {ip: 10.0.0.2, next_hop_mac: "02:00:00:00:00:01"}
)",
                                    "t.yaml");
    ASSERT_EQ(c.instances.size(), 2u);
    EXPECT_EQ(c.instances[1].name, "b");
    EXPECT_TRUE(c.instances[0].fabric.link);
    ASSERT_TRUE(c.link.has_value());
    EXPECT_EQ(*c.link->lcore, 3u);
    EXPECT_EQ(c.link->paths[1].delay_ns, 80 * common::ns_per_us);
}

// docs/app.md "Instances joined by a link", "An in-cast on the link": a link
// joins two or more instances, each with a fabric port on it; rate_gbps
// gives every instance's receiving port a rate.
TEST(app_config, a_link_of_three_instances_with_a_port_rate)
{
    const std::string instance = R"(
    ports: {host: {devargs: net_nullN}, fabric: {link: true}}
    lcores: {workers: [N]}
    outer: {ip: 10.0.0.N, next_hop_mac: "02:00:00:00:00:09"}
)";
    const auto named = [&](char n) {
        std::string text = std::string("\n  i") + n + ":" + instance;
        for (auto at = text.find('N'); at != std::string::npos; at = text.find('N')) {
            text[at] = n;
        }
        return text;
    };
    const std::string three = "lcores: {control: 0}\nlink: {rate_gbps: 2.5}\ninstances:" + named('1') + named('2') +
                              named('3');
    const auto c = parse_app_config(three, "t.yaml");
    ASSERT_EQ(c.instances.size(), 3u);
    ASSERT_TRUE(c.link.has_value());
    EXPECT_DOUBLE_EQ(c.link->rate_bps, 2.5e9);
    EXPECT_EQ(parse_app_config(R"(
lcores: {control: 0}
link: {}
instances:)" + named('1') + named('2'),
                               "t.yaml")
                  .link->rate_bps,
              0.0);
    std::string unlinked = three;
    unlinked.replace(unlinked.rfind("fabric: {link: true}"), 20, "fabric: {devargs: net_null9}");
    EXPECT_NE(error_of(unlinked).find("link: joins two or more instances, every one with ports.fabric {link: true}"),
              std::string::npos)
        << error_of(unlinked);
    EXPECT_NE(error_of("lcores: {control: 0}\nlink: {rate_gbps: -1}\ninstances:" + named('1') + named('2'))
                  .find("link.rate_gbps"),
              std::string::npos);
    // Of three, each must be reachable by its own outer.ip.
    std::string same_ip = three;
    same_ip.replace(same_ip.rfind("10.0.0.3"), 8, "10.0.0.1");
    EXPECT_NE(error_of(same_ip).find("instances.i3.outer.ip: 10.0.0.1 is i1's too"), std::string::npos)
        << error_of(same_ip);
}

TEST(app_config, tables_from_a_topology)
{
    const char* root = std::getenv("LAPS_SOURCE_ROOT");
    const std::string file = std::string(root ? root : ".") + "/configs/topologies/two_paths.yaml";
    const auto c = parse_app_config(R"(
ports: {host: {devargs: net_null0}, fabric: {devargs: net_null1}}
outer: {next_hop_mac: "02:00:00:00:00:fe"}
topology: {file: )" + file + R"(, host: 0}
)",
                                    "t.yaml");
    const auto& i = c.instances[0];
    EXPECT_EQ(*i.outer.ip, 0x0a000001u); // host a's default address
    ASSERT_EQ(i.engine.algo.paths.pst.size(), 1u);
    EXPECT_EQ(i.engine.algo.paths.pst[0].pids.size(), 2u);
    EXPECT_EQ(i.engine.algo.paths.pit.size(), 2u);
}

TEST(app_config, errors_name_file_line_and_key)
{
    EXPECT_EQ(error_of("ports: {host: {devargs: a}, fabric: {devargs: b}}\nbogus: 1\n"),
              "t.yaml:2:1: bogus: unknown key (known here: version, host, selection, congestion, retransmit, tables, "
              "baseval, paths, ports, lcores, mempool, outer, engine, steering, topology, stats, run, metrics, "
              "capture, auth)");
    EXPECT_NE(error_of(ports + "lcores: {workers: [1, 1]}\n").find("lcores.workers[1]: lcore 1 is listed twice"),
              std::string::npos);
    EXPECT_NE(error_of("ports: {host: {devargs: a}, fabric: {devargs: b}}\nouter: {ip: 10.0.0.1}\n")
                  .find("outer.next_hop_mac: missing (required)"),
              std::string::npos);
    EXPECT_NE(error_of("ports: {host: {devargs: a}, fabric: {devargs: b}}\nouter: {next_hop_mac: 'zz'}\n")
                  .find("is not a MAC address"),
              std::string::npos);
    EXPECT_NE(error_of(ports + "topology: {file: x.yaml, host: 0}\npaths: {}\n").find("not both"), std::string::npos);
    EXPECT_NE(error_of(ports.substr(0, ports.find("outer")) +
                       "outer: {next_hop_mac: '02:00:00:00:00:01', udp_port: 4791}\n")
                  .find("belongs to VXLAN/Geneve/RoCEv2"),
              std::string::npos);
    EXPECT_NE(error_of("ports: {host: {devargs: a}, fabric: {link: true}}\nouter: {ip: 1.2.3.4, next_hop_mac: "
                       "'02:00:00:00:00:01'}\n")
                  .find("ports.fabric.link: only for instances joined by a `link:` section"),
              std::string::npos);
    EXPECT_NE(error_of("instances: {a: {}}\n").find("ports: missing (required)"), std::string::npos);
    EXPECT_NE(error_of(ports + "run: {max_packets: -1}\n").find("run.max_packets"), std::string::npos);
}

TEST(app_config, shipped_configs_parse)
{
    const char* root = std::getenv("LAPS_SOURCE_ROOT");
    const std::string dir = std::string(root ? root : ".") + "/configs/";
    for (const char* name : {"app-null.yaml", "app-pcap.yaml", "app-ring.yaml", "app-tap.yaml", "app-tap-pair.yaml",
                             "app-loop-2w.yaml"}) {
        SCOPED_TRACE(name);
        const auto c = load_app_config(dir + name);
        EXPECT_FALSE(c.instances.empty());
    }
    EXPECT_EQ(load_app_config(dir + "app-ring.yaml").instances.size(), 2u);
    const auto pair = load_app_config(dir + "app-tap-pair.yaml");
    ASSERT_EQ(pair.instances.size(), 2u);
    EXPECT_TRUE(pair.instances[0].engine.algo.tables.calibrate_base);
    EXPECT_EQ(pair.idle, idle_mode::sleep);
}

// docs/app.md "Host frames", "Two instances and a link": the host port's MTU
// (auto by default), the link's loss and jitter, lcores that sleep when idle, baseVal calibration.
TEST(app_config, host_mtu_link_loss_idle_sleep_calibration)
{
    const std::string host = "ports:\n  host: {devargs: net_null0";
    const std::string rest = "}\n  fabric: {devargs: net_null1}\nouter: {ip: 10.0.0.1, next_hop_mac: \"02:00:00:00:00:fe\"}\n";
    EXPECT_EQ(parse_app_config(host + rest, "t.yaml").instances[0].host.mtu, 0); // auto
    EXPECT_EQ(parse_app_config(host + ", mtu: auto" + rest, "t.yaml").instances[0].host.mtu, 0);
    EXPECT_EQ(parse_app_config(host + ", mtu: keep" + rest, "t.yaml").instances[0].host.mtu, -1);
    EXPECT_EQ(parse_app_config(host + ", mtu: 9000" + rest, "t.yaml").instances[0].host.mtu, 9000);
    EXPECT_NE(error_of(host + ", mtu: big" + rest).find("ports.host.mtu: 'big': expected auto, keep or a number"),
              std::string::npos);
    EXPECT_NE(error_of(host + ", mtu: 20" + rest).find("ports.host.mtu"), std::string::npos);
    EXPECT_NE(error_of("ports: {host: {devargs: a}, fabric: {devargs: b, mtu: 1500}}\nouter: {ip: 10.0.0.1, "
                       "next_hop_mac: '02:00:00:00:00:01'}\n")
                  .find("ports.fabric.mtu: only for the host port; the fabric MTU is outer.mtu"),
              std::string::npos);

    const auto c = parse_app_config(R"(
lcores: {control: 0, idle: sleep}
link: {paths: [{pid: 0, delay_us: 20, loss: 0.01, jitter_us: 5}, {pid: 1, delay_us: 80}]}
instances:
  a:
    ports: {host: {devargs: net_null0}, fabric: {link: true}}
    lcores: {workers: [1]}
    outer: {ip: 10.0.0.1, next_hop_mac: "02:00:00:00:00:02"}
    tables: {calibrate_base: true}
  b:
    ports: {host: {devargs: net_null1}, fabric: {link: true}}
    lcores: {workers: [2]}
    outer: {ip: 10.0.0.2, next_hop_mac: "02:00:00:00:00:01"}
)",
                                    "t.yaml");
    EXPECT_EQ(c.idle, idle_mode::sleep);
    EXPECT_DOUBLE_EQ(c.link->paths[0].loss, 0.01);
    EXPECT_EQ(c.link->paths[0].jitter_ns, 5 * common::ns_per_us);
    EXPECT_EQ(c.link->paths[1].loss, 0.0);
    EXPECT_TRUE(c.instances[0].engine.algo.tables.calibrate_base);
    EXPECT_FALSE(c.instances[1].engine.algo.tables.calibrate_base);
    EXPECT_NE(error_of("lcores: {control: 0}\nlink: {paths: [{pid: 0, delay_us: 1, loss: 1.5}]}\ninstances: {}\n")
                  .find("link.paths[0].loss"),
              std::string::npos);
}

TEST(app_config, mac_parsing)
{
    EXPECT_EQ(parse_mac("02:00:00:00:00:fe"), (wire::mac_address{2, 0, 0, 0, 0, 0xfe}));
    EXPECT_FALSE(parse_mac("02:00:00:00:00").has_value());
    EXPECT_FALSE(parse_mac("02:00:00:00:00:fe:01").has_value());
    EXPECT_EQ(format_mac({2, 0, 0, 0, 0, 0xfe}), "02:00:00:00:00:fe");
    EXPECT_EQ(format_ipv4(0x0a000001u), "10.0.0.1");
}

} // namespace
} // namespace laps::app

namespace laps::app {
namespace {

// Operating keys (docs/app.md "Config"): the metrics endpoint is off unless configured;
// a capture from the config is checked like every other key.
TEST(app_config, metrics_and_capture)
{
    const auto none = parse_app_config(ports, "t.yaml");
    EXPECT_FALSE(none.metrics.has_value());
    EXPECT_FALSE(none.capture.has_value());

    const auto c = parse_app_config(ports + R"(
metrics: {listen: "127.0.0.1:9464"}
capture: {file: /tmp/x.pcapng, side: fabric, pid: 3, count: 100, seconds: 2.5, snaplen: 128}
)", "t.yaml");
    ASSERT_TRUE(c.metrics.has_value());
    EXPECT_EQ(c.metrics->host, "127.0.0.1");
    EXPECT_EQ(c.metrics->port, 9464);
    ASSERT_TRUE(c.capture.has_value());
    EXPECT_EQ(c.capture->file, "/tmp/x.pcapng");
    EXPECT_EQ(c.capture->side, capture_side::fabric);
    EXPECT_EQ(c.capture->pid, 3);
    EXPECT_EQ(c.capture->count, 100u);
    EXPECT_EQ(c.capture->duration_ns, 2'500'000'000);
    EXPECT_EQ(c.capture->snaplen, 128u);

    const auto v6 = parse_listen("[::1]:0");
    ASSERT_TRUE(v6.has_value());
    EXPECT_EQ(v6->host, "::1");
    EXPECT_EQ(format_listen(*v6), "[::1]:0");

    EXPECT_NE(error_of(ports + "metrics: {listen: localhost:9464}\n").find("metrics.listen: 'localhost:9464' is not "
                                                                           "ADDRESS:PORT"),
              std::string::npos);
    EXPECT_NE(error_of(ports + "metrics: {listen: \"127.0.0.1:99999\"}\n").find("metrics.listen"), std::string::npos);
    EXPECT_NE(error_of(ports + "metrics: {port: 1}\n").find("metrics.port: unknown key"), std::string::npos);
    EXPECT_NE(error_of(ports + "capture: {file: x, side: wire}\n").find("capture.side"), std::string::npos);
    EXPECT_NE(error_of(ports + "capture: {file: x, side: host, pid: 1}\n").find("pids are on the fabric side"),
              std::string::npos);
    EXPECT_NE(error_of(ports + "capture: {side: host}\n").find("capture.file"), std::string::npos);
}


// docs/security.md: one key for the fabric, every instance's engines get it;
// errors say what is wrong with the key, never the key.
TEST(app_config, auth_key_inline_or_from_a_file_for_every_instance)
{
    const auto c = parse_app_config(ports + "auth: {key: \"000102030405060708090a0b0c0d0e0f\", peers: 64}\n", "t.yaml");
    ASSERT_TRUE(c.auth.has_value());
    EXPECT_EQ(c.auth->from, "auth.key");
    EXPECT_EQ(c.auth->peers, 64u);
    ASSERT_TRUE(c.instances[0].engine.auth_key.has_value());
    EXPECT_EQ(c.instances[0].engine.auth_key->bytes[15], 0x0f);
    EXPECT_EQ(c.instances[0].engine.auth_peers, 64u);
    EXPECT_FALSE(parse_app_config(ports, "t.yaml").instances[0].engine.auth_key.has_value());

    char path[] = "/tmp/laps-auth-key-XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    const std::string key = "ffeeddccbbaa99887766554433221100\n";
    ASSERT_EQ(write(fd, key.data(), key.size()), static_cast<ssize_t>(key.size()));
    close(fd);
    const auto f = parse_app_config(ports + "auth: {key_file: " + std::string(path) + "}\n", "t.yaml");
    EXPECT_EQ(f.auth->from, path);
    EXPECT_EQ(f.instances[0].engine.auth_key->bytes[0], 0xff);
    unlink(path);

    const std::string wrong = error_of(ports + "auth: {key: \"00112233445566778899aabbccddeeXX\"}\n");
    EXPECT_NE(wrong.find("auth.key: a key is 32 hexadecimal digits (128 bits): character 31 is not one"),
              std::string::npos)
        << wrong;
    EXPECT_EQ(wrong.find("00112233"), std::string::npos) << "the key's text is never in an error";
    EXPECT_NE(error_of(ports + "auth: {key: \"00\", key_file: /x}\n").find("expected one of key"), std::string::npos);
    EXPECT_NE(error_of(ports + "auth: {key_file: /nonexistent/key}\n").find("/nonexistent/key: cannot be read"),
              std::string::npos);
}

} // namespace
} // namespace laps::app
