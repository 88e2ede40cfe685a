#include "app/config/config_sections.hpp"

#include "topology/candidates.hpp"
#include "topology/yaml_io.hpp"

#include <rte_config.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <arpa/inet.h>

#include <algorithm>
#include <filesystem>
#include <set>

namespace laps::app {

using config::reader;

namespace {

std::uint32_t parse_ipv4(const reader& r, const YAML::Node& n, std::string_view key)
{
    const std::string text = r.string(n, key);
    in_addr a{};
    if (inet_pton(AF_INET, text.c_str(), &a) != 1) {
        r.fail(n, key, "'" + text + "' is not an IPv4 address");
    }
    return ntohl(a.s_addr);
}

wire::mac_address parse_mac_node(const reader& r, const YAML::Node& n, std::string_view key)
{
    const std::string text = r.string(n, key);
    const auto mac = parse_mac(text);
    if (!mac) {
        r.fail(n, key, "'" + text + "' is not a MAC address (expected six hex bytes like 02:00:00:00:00:01)");
    }
    return *mac;
}

port_config parse_port(const reader& r, const YAML::Node& n, const std::string& key, bool link_allowed)
{
    r.expect_map(n, key, {"devargs", "link", "mtu", "rx_desc", "tx_desc"});
    port_config p;
    if (const auto d = n["devargs"]) {
        p.devargs = r.string(d, key + ".devargs");
        if (p.devargs.empty()) {
            r.fail(d, key + ".devargs", "empty: expected a vdev string (net_null0, net_pcap0,rx_pcap=F) or a PCI address");
        }
    }
    r.optional_boolean(n, key, "link", p.link);
    if (p.link && !link_allowed) {
        r.fail(n["link"], key + ".link", "only for instances joined by a `link:` section");
    }
    if (p.link == !p.devargs.empty()) {
        r.fail(n, key, p.link ? "give either devargs or link: true, not both" : "devargs is required");
    }
    if (const auto m = n["mtu"]) {
        if (key != "ports.host") {
            r.fail(m, key + ".mtu", "only for the host port; the fabric MTU is outer.mtu");
        }
        const std::string text = m.IsScalar() ? m.Scalar() : std::string();
        if (text == "auto") {
            p.mtu = 0;
        } else if (text == "keep") {
            p.mtu = -1;
        } else if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) {
            p.mtu = static_cast<std::int32_t>(r.integer(m, key + ".mtu", 68, 65535));
        } else {
            r.fail(m, key + ".mtu", "'" + text + "': expected auto, keep or a number from 68 to 65535");
        }
    }
    r.optional_integer(n, key, "rx_desc", p.rx_desc, 32, 16384);
    r.optional_integer(n, key, "tx_desc", p.tx_desc, 32, 16384);
    return p;
}

void parse_ports(const reader& r, const YAML::Node& n, instance_config& out, bool link_allowed)
{
    r.expect_map(n, "ports", {"host", "fabric"});
    out.host = parse_port(r, r.require(n, "ports", "host"), "ports.host", false);
    out.fabric = parse_port(r, r.require(n, "ports", "fabric"), "ports.fabric", link_allowed);
}

std::vector<unsigned> parse_workers(const reader& r, const YAML::Node& n)
{
    r.expect_list(n, "lcores.workers");
    if (n.size() == 0) {
        r.fail(n, "lcores.workers", "empty: give at least one lcore, or leave the key out for all EAL lcores");
    }
    std::vector<unsigned> out;
    std::set<unsigned> seen;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string key = "lcores.workers[" + std::to_string(i) + "]";
        const auto id = static_cast<unsigned>(r.integer(n[i], key, 0, RTE_MAX_LCORE - 1));
        if (!seen.insert(id).second) {
            r.fail(n[i], key, "lcore " + std::to_string(id) + " is listed twice");
        }
        out.push_back(id);
    }
    return out;
}

void parse_mempool(const reader& r, const YAML::Node& n, mempool_config& out)
{
    r.expect_map(n, "mempool", {"mbufs", "control_mbufs", "cache", "data_room"});
    r.optional_integer(n, "mempool", "mbufs", out.mbufs, 1023, 1 << 24);
    r.optional_integer(n, "mempool", "control_mbufs", out.control_mbufs, 255, 1 << 24);
    r.optional_integer(n, "mempool", "cache", out.cache, 0, RTE_MEMPOOL_CACHE_MAX_SIZE);
    r.optional_integer(n, "mempool", "data_room", out.data_room, RTE_PKTMBUF_HEADROOM + 256, 65535);
}

void parse_outer(const reader& r, const YAML::Node& n, outer_section& out)
{
    r.expect_map(n, "outer", {"ip", "mac", "next_hop_mac", "udp_port", "mtu", "ttl"});
    if (const auto ip = n["ip"]) {
        out.ip = parse_ipv4(r, ip, "outer.ip");
    }
    if (const auto mac = n["mac"]) {
        if (r.string(mac, "outer.mac") != "port") {
            out.mac = parse_mac_node(r, mac, "outer.mac");
        }
    }
    out.next_hop_mac = parse_mac_node(r, r.require(n, "outer", "next_hop_mac"), "outer.next_hop_mac");
    r.optional_integer(n, "outer", "udp_port", out.udp_port, 1, 65535);
    if (const auto p = n["udp_port"]) {
        if (out.udp_port == 4789 || out.udp_port == 6081 || out.udp_port == 4791 || out.udp_port == 4793) {
            r.fail(p, "outer.udp_port",
                   std::to_string(out.udp_port) + " belongs to VXLAN/Geneve/RoCEv2; pick another (default 19521)");
        }
    }
    if (n["mtu"]) {
        std::uint16_t mtu = 0;
        r.optional_integer(n, "outer", "mtu", mtu, 576, 9600);
        out.mtu = mtu;
    }
    r.optional_integer(n, "outer", "ttl", out.ttl, 1, 255);
}

void parse_engine(const reader& r, const YAML::Node& n, instance_config& out)
{
    r.expect_map(n, "engine", {"unknown_destination", "oversize", "non_ip", "link_local", "in_order", "flow_queue_packets", "flow_idle_ms",
                               "staging_packets", "poll_budget", "burst", "port_rate_gbps", "reorder_timeout_ms",
                               "reorder_timeout_action", "reorder_hold_max", "max_latency_ms", "acks"});
    auto& e = out.engine;
    if (const auto u = n["non_ip"]) {
        e.non_ip = r.choice_of(u, "engine.non_ip", local_frame_policy_names);
    }
    if (const auto u = n["link_local"]) {
        e.link_local = r.choice_of(u, "engine.link_local", local_frame_policy_names);
    }
    if (const auto u = n["unknown_destination"]) {
        e.unknown_destination = r.choice_of(u, "engine.unknown_destination", unknown_destination_policy_names);
    }
    if (const auto o = n["oversize"]) {
        e.oversize = r.choice_of(o, "engine.oversize", oversize_policy_names);
    }
    r.optional_boolean(n, "engine", "in_order", e.in_order);
    if (const auto a = n["acks"]) {
        e.acks = r.choice_of(a, "engine.acks", pipeline::ack_mode_names);
    }
    if (const auto t = n["reorder_timeout_ms"]) {
        e.reorder_timeout_ns = ms_to_ns(r.number(t, "engine.reorder_timeout_ms", 0.001, 3.6e6));
    }
    if (const auto a = n["reorder_timeout_action"]) {
        e.reorder_timeout_action = r.choice_of(a, "engine.reorder_timeout_action", reorder_gap_action_names);
    }
    out.reorder_hold_max_given = static_cast<bool>(n["reorder_hold_max"]);
    r.optional_integer(n, "engine", "reorder_hold_max", e.reorder_hold_max, 1, 1 << 24);
    if (const auto t = n["max_latency_ms"]) {
        e.max_latency_ns = ms_to_ns(r.number(t, "engine.max_latency_ms", 0.001, 3.6e6));
    }
    r.optional_integer(n, "engine", "flow_queue_packets", e.flow_queue_packets, 1, 1 << 16);
    if (const auto t = n["flow_idle_ms"]) {
        e.flow_idle_ns = ms_to_ns(r.number(t, "engine.flow_idle_ms", 0.001, 3.6e6));
    }
    r.optional_integer(n, "engine", "staging_packets", e.staging_packets, 64, 1 << 20);
    r.optional_integer(n, "engine", "poll_budget", e.poll_budget, 1, 1 << 20);
    r.optional_integer(n, "engine", "burst", out.burst, 1, 512);
    // The NIC rate limiter over all flows; split evenly between workers at start.
    if (const auto p = n["port_rate_gbps"]) {
        e.port_rate_bps = r.number(p, "engine.port_rate_gbps", 0.0, 1e4) * 1e9;
    }
}

void parse_steering(const reader& r, const YAML::Node& n, steering_config& out)
{
    r.expect_map(n, "steering", {"host", "fabric", "tag_bits", "ring_size"});
    if (const auto h = n["host"]) {
        out.host = r.choice_of(h, "steering.host", host_steering_names);
    }
    if (const auto f = n["fabric"]) {
        out.fabric = r.choice_of(f, "steering.fabric", fabric_steering_names);
    }
    if (const auto t = n["tag_bits"]) {
        out.tag_bits = static_cast<std::uint8_t>(r.integer(t, "steering.tag_bits", 0, 8));
    }
    r.optional_integer(n, "steering", "ring_size", out.ring_size, 64, 1 << 20);
    if ((out.ring_size & (out.ring_size - 1)) != 0) {
        r.fail(n["ring_size"], "steering.ring_size", "must be a power of two");
    }
}

topology_config parse_topology(const reader& r, const YAML::Node& n)
{
    r.expect_map(n, "topology", {"file", "host", "paths"});
    topology_config t;
    t.file = r.string(r.require(n, "topology", "file"), "topology.file");
    if (const auto h = n["host"]) {
        t.host = static_cast<std::uint32_t>(r.integer(h, "topology.host", 0, 0xffffffffLL));
    }
    if (const auto p = n["paths"]) {
        t.paths = r.string(p, "topology.paths");
    }
    return t;
}

// Resolves a topology file name relative to the config file's folder when it
// is not found as given (configs can then name their neighbours).
std::string resolve_topology_file(const std::string& file, const std::string& config_path)
{
    namespace fs = std::filesystem;
    if (file.find(':') != std::string::npos || fs::exists(file) || fs::path(file).is_absolute()) {
        return file;
    }
    const fs::path beside = fs::path(config_path).parent_path() / file;
    return fs::exists(beside) ? beside.string() : file;
}

// Fills algo.paths from the topology; errors point at the topology key.
void compute_tables(const reader& r, const YAML::Node& node, instance_config& inst)
{
    auto& t = *inst.topology;
    auto& algo = inst.engine.algo;
    if (!t.host) {
        t.host = algo.host.id;
    }
    if (!t.host) {
        r.fail(node, "topology.host", "required (or host.id): which host of the topology this instance is");
    }
    try {
        const topology::fabric f = topology::open_topology(resolve_topology_file(t.file, r.file()));
        if (*t.host >= f.host_count()) {
            r.fail(node["host"] ? node["host"] : node, "topology.host",
                   "the topology has hosts 0 to " + std::to_string(f.host_count() - 1));
        }
        const topology::routing routes(f);
        topology::delay_options delays;
        delays.packet_bytes = algo.baseval.packet_bytes;
        delays.margin_packets = algo.baseval.margin_packets;
        delays.margin = algo.baseval.margin_per == config::margin_unit::per_switch ? topology::margin_mode::per_switch
                                                                                  : topology::margin_mode::per_link;
        const topology::path_planner planner(routes, topology::parse_path_options(t.paths), delays);
        algo.paths = planner.table(*t.host);
        const auto& own = f.address_of(*t.host);
        if (!inst.outer.ip && own.is_ipv4()) {
            inst.outer.ip = own.ipv4_host_order();
        }
        if (!algo.host.address) {
            algo.host.address = own;
        }
    } catch (const topology::topology_error& e) {
        r.fail(node, "topology", e.what());
    } catch (const topology::path_error& e) {
        r.fail(node, "topology", e.what());
    }
}

} // namespace

void parse_lcores(const reader& r, const YAML::Node& n, bool global, bool local, app_config& app,
                  instance_config* inst)
{
    if (global) {
        r.expect_map(n, "lcores", local ? std::initializer_list<std::string_view>{"control", "workers", "idle"}
                                        : std::initializer_list<std::string_view>{"control", "idle"});
    } else {
        r.expect_map(n, "lcores", {"workers"});
    }
    if (global) {
        if (const auto c = n["control"]) {
            app.control_lcore = static_cast<unsigned>(r.integer(c, "lcores.control", 0, RTE_MAX_LCORE - 1));
        }
        if (const auto i = n["idle"]) {
            app.idle = r.choice_of(i, "lcores.idle", idle_mode_names);
        }
    }
    if (local && inst != nullptr) {
        if (const auto w = n["workers"]) {
            inst->workers = parse_workers(r, w);
        }
    }
}

instance_config parse_instance(const reader& r, const YAML::Node& n, const std::string& name, bool link_allowed,
                               app_config& app, bool single)
{
    instance_config inst;
    inst.name = name;
    if (const auto l = n["lcores"]) {
        parse_lcores(r, l, single, true, app, &inst);
    }
    parse_ports(r, r.require(n, "", "ports"), inst, link_allowed);
    if (const auto m = n["mempool"]) {
        parse_mempool(r, m, inst.mempool);
    }
    if (const auto e = n["engine"]) {
        parse_engine(r, e, inst);
    }
    if (const auto s = n["steering"]) {
        parse_steering(r, s, inst.steering);
    }
    config::parse_laps_sections(r, n, inst.engine.algo);
    inst.engine.algo.source = r.file();
    if (!inst.reorder_hold_max_given) {
        // Frames held for order may take a quarter of the packet pool, no more.
        inst.engine.reorder_hold_max = std::max<std::uint32_t>(inst.mempool.mbufs / 4, 1);
    }
    if (const auto o = n["outer"]) {
        parse_outer(r, o, inst.outer);
    } else {
        r.fail(n, "outer", "required: at least outer.next_hop_mac");
    }
    if (!inst.outer.ip && inst.engine.algo.host.address && inst.engine.algo.host.address->is_ipv4()) {
        inst.outer.ip = inst.engine.algo.host.address->ipv4_host_order();
    }
    if (const auto t = n["topology"]) {
        if (n["paths"]) {
            r.fail(n["paths"], "paths", "give either paths: or topology:, not both");
        }
        inst.topology = parse_topology(r, t);
        compute_tables(r, t, inst);
    }
    if (!inst.outer.ip) {
        r.fail(n["outer"], "outer.ip", "required (or host.address, or topology:): this NIC's fabric IPv4 address");
    }
    return inst;
}

} // namespace laps::app
