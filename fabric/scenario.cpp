#include "fabric/scenario.hpp"

#include "fabric/hosts/roce_config.hpp"
#include "topology/error.hpp"
#include "topology/yaml_io.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

namespace laps::fabric {

namespace {

using config::reader;

time_ns micros(const reader& r, const YAML::Node& n, const std::string& key, double max_us = 1e9)
{
    return static_cast<time_ns>(std::llround(r.number(n, key, 0.0, max_us) * 1000.0));
}

std::uint64_t bytes_value(const reader& r, const YAML::Node& n, const std::string& key, std::int64_t min,
                          std::int64_t max)
{
    return static_cast<std::uint64_t>(r.integer(n, key, min, max));
}

// A host by index or by name.
topology::node_id host_ref(const reader& r, const topology::fabric& f, const YAML::Node& n, const std::string& key)
{
    if (!n.IsScalar()) {
        r.fail(n, key, "expected a host index or a host name");
    }
    std::int64_t index = 0;
    if (YAML::convert<std::int64_t>::decode(n, index)) {
        if (index < 0 || static_cast<std::size_t>(index) >= f.host_count()) {
            r.fail(n, key, "host index " + std::to_string(index) + " is out of range [0, " +
                               std::to_string(f.host_count() - 1) + "]");
        }
        return static_cast<topology::node_id>(index);
    }
    const auto id = f.find(n.Scalar());
    if (!id) {
        r.fail(n, key, "no node named '" + n.Scalar() + "' in the topology");
    }
    if (!f.is_host(*id)) {
        r.fail(n, key, "'" + n.Scalar() + "' is a switch, not a host");
    }
    return *id;
}

topology::node_id node_ref(const reader& r, const topology::fabric& f, const YAML::Node& n, const std::string& key)
{
    const std::string name = r.string(n, key);
    const auto id = f.find(name);
    if (!id) {
        r.fail(n, key, "no node named '" + name + "' in the topology");
    }
    return *id;
}

std::string resolve(const std::string& base_dir, const std::string& path)
{
    const std::filesystem::path p(path);
    if (p.is_absolute() || base_dir.empty()) {
        return path;
    }
    return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

void parse_fabric_section(const reader& r, const YAML::Node& n, fabric_params& out)
{
    r.expect_map(n, "fabric",
                 {"port_queue_bytes", "shared_buffer_bytes", "ecn_threshold_bytes", "host_queue_bytes", "frame_bytes",
                  "memory_mb", "pfc", "pfc_xoff_bytes", "pfc_xon_bytes", "ecn", "red_kmin_bytes", "red_kmax_bytes",
                  "red_pmax"});
    constexpr std::int64_t tb = std::int64_t{1} << 40;
    r.optional_integer(n, "fabric", "port_queue_bytes", out.port_queue_bytes, 1, tb);
    r.optional_integer(n, "fabric", "shared_buffer_bytes", out.shared_buffer_bytes, 0, tb);
    r.optional_integer(n, "fabric", "ecn_threshold_bytes", out.ecn_threshold_bytes, 0, tb);
    r.optional_integer(n, "fabric", "host_queue_bytes", out.host_queue_bytes, 0, tb);
    // At least headers + the 12-byte flow tag; at most what a 9000-byte fabric MTU carries.
    r.optional_integer(n, "fabric", "frame_bytes", out.frame_bytes, 64, 8900);
    r.optional_integer(n, "fabric", "memory_mb", out.memory_mb, 0, 1 << 20);
    r.optional_boolean(n, "fabric", "pfc", out.pfc);
    r.optional_integer(n, "fabric", "pfc_xoff_bytes", out.pfc_xoff_bytes, 1, tb);
    r.optional_integer(n, "fabric", "pfc_xon_bytes", out.pfc_xon_bytes, 0, tb);
    if (out.pfc_xon_bytes > out.pfc_xoff_bytes) {
        r.fail(n["pfc_xon_bytes"], "fabric.pfc_xon_bytes", "must not exceed fabric.pfc_xoff_bytes");
    }
    if (const auto v = n["ecn"]) {
        out.ecn = r.choice_of(v, "fabric.ecn", ecn_mode_names);
    }
    r.optional_integer(n, "fabric", "red_kmin_bytes", out.red_kmin_bytes, 0, tb);
    r.optional_integer(n, "fabric", "red_kmax_bytes", out.red_kmax_bytes, 1, tb);
    r.optional_number(n, "fabric", "red_pmax", out.red_pmax, 0.0, 1.0);
    if (out.red_kmin_bytes >= out.red_kmax_bytes) {
        r.fail(n["red_kmax_bytes"] ? n["red_kmax_bytes"] : n["red_kmin_bytes"], "fabric.red_kmax_bytes",
               "must exceed fabric.red_kmin_bytes");
    }
}

void parse_engine_section(const reader& r, const YAML::Node& n, engine_params& out)
{
    r.expect_map(n, "engine", {"in_order", "acks", "rx_burst_us", "flow_queue_packets", "flow_idle_us", "poll_budget",
                               "housekeeping_us"});
    r.optional_boolean(n, "engine", "in_order", out.in_order);
    if (const auto a = n["acks"]) {
        out.acks = r.choice_of(a, "engine.acks", pipeline::ack_mode_names);
    }
    r.optional_integer(n, "engine", "flow_queue_packets", out.flow_queue_packets, 1, 1 << 16);
    if (const auto v = n["flow_idle_us"]) {
        out.flow_idle_ns = micros(r, v, "engine.flow_idle_us");
        if (out.flow_idle_ns == 0) {
            r.fail(v, "engine.flow_idle_us", "must be positive");
        }
    }
    r.optional_integer(n, "engine", "poll_budget", out.poll_budget, 1, 1 << 20);
    if (const auto v = n["rx_burst_us"]) {
        out.rx_burst_ns = micros(r, v, "engine.rx_burst_us");
    }
    if (const auto v = n["housekeeping_us"]) {
        out.housekeeping_ns = micros(r, v, "engine.housekeeping_us");
        if (out.housekeeping_ns == 0) {
            r.fail(v, "engine.housekeeping_us", "must be positive");
        }
    }
}

void parse_clocks_section(const reader& r, const topology::fabric& f, const YAML::Node& n, clock_params& out)
{
    r.expect_map(n, "clocks", {"epoch_us", "offset_max_us", "drift_max_ppm", "steps"});
    if (const auto v = n["epoch_us"]) {
        out.epoch_ns = micros(r, v, "clocks.epoch_us", 1e12);
    }
    if (const auto v = n["offset_max_us"]) {
        out.offset_max_ns = micros(r, v, "clocks.offset_max_us", 1e12);
        if (out.offset_max_ns > out.epoch_ns) {
            r.fail(v, "clocks.offset_max_us", "must not exceed clocks.epoch_us (clocks would go negative)");
        }
    }
    if (const auto v = n["drift_max_ppm"]) {
        // 1000 ppm is ten times any real oscillator's tolerance.
        out.drift_max_ppm = r.number(v, "clocks.drift_max_ppm", 0.0, 1000.0);
    }
    if (const auto list = n["steps"]) {
        r.expect_list(list, "clocks.steps");
        time_ns set_back = 0;
        for (std::size_t i = 0; i < list.size(); ++i) {
            const std::string key = "clocks.steps[" + std::to_string(i) + "]";
            const auto item = list[i];
            r.expect_map(item, key, {"host", "at_us", "step_us"});
            clock_params::step st;
            st.host = host_ref(r, f, r.require(item, key, "host"), key + ".host");
            st.at_ns = micros(r, r.require(item, key, "at_us"), key + ".at_us");
            const auto step = r.require(item, key, "step_us");
            st.step_ns = static_cast<time_ns>(std::llround(r.number(step, key + ".step_us", -1e6, 1e6) * 1000.0));
            if (st.step_ns == 0) {
                r.fail(step, key + ".step_us", "must not be 0");
            }
            set_back += std::min<time_ns>(st.step_ns, 0);
            if (-set_back > out.epoch_ns - out.offset_max_ns) {
                r.fail(step, key + ".step_us", "steps back exceed clocks.epoch_us - offset_max_us (clocks would go negative)");
            }
            out.steps.push_back(st);
        }
    }
}

poisson_traffic parse_poisson(const reader& r, const topology::fabric& f, const YAML::Node& n, const std::string& key,
                              const std::string& base_dir)
{
    r.expect_map(n, key, {"workload", "load", "duration_us", "start_us", "pairs"});
    poisson_traffic p;
    const auto w = r.require(n, key, "workload");
    const std::string path = resolve(base_dir, r.string(w, key + ".workload"));
    try {
        p.sizes = std::make_shared<const flow_size_cdf>(flow_size_cdf::load(path));
    } catch (const workload_error& e) {
        r.fail(w, key + ".workload", e.what());
    }
    p.load = r.number(r.require(n, key, "load"), key + ".load", 0.0, 4.0, true);
    p.duration_ns = micros(r, r.require(n, key, "duration_us"), key + ".duration_us");
    if (p.duration_ns == 0) {
        r.fail(n["duration_us"], key + ".duration_us", "must be positive");
    }
    if (const auto v = n["start_us"]) {
        p.start_ns = micros(r, v, key + ".start_us");
    }
    if (const auto pairs = n["pairs"]) {
        if (pairs.IsScalar()) {
            r.choice(pairs, key + ".pairs", {"all_to_all"});
        } else {
            r.expect_list(pairs, key + ".pairs");
            for (std::size_t i = 0; i < pairs.size(); ++i) {
                const std::string k = key + ".pairs[" + std::to_string(i) + "]";
                const auto pr = pairs[i];
                if (!pr.IsSequence() || pr.size() != 2) {
                    r.fail(pr, k, "expected [sender, receiver]");
                }
                const auto s = host_ref(r, f, pr[0], k + "[0]");
                const auto d = host_ref(r, f, pr[1], k + "[1]");
                if (s == d) {
                    r.fail(pr, k, "a host does not send to itself");
                }
                p.pairs.emplace_back(s, d);
            }
        }
    }
    if (f.host_count() < 2) {
        r.fail(n, key, "needs at least two hosts");
    }
    return p;
}

llm_traffic parse_llm(const reader& r, const topology::fabric& f, const YAML::Node& n, const std::string& key)
{
    r.expect_map(n, key, {"pattern", "message_bytes", "root", "hosts", "start_us", "poisson_starts_us"});
    llm_traffic l;
    l.pattern = r.choice_of(r.require(n, key, "pattern"), key + ".pattern", llm_pattern_names);
    r.optional_integer(n, key, "message_bytes", l.message_bytes, 1, std::int64_t{1} << 40);
    if (const auto h = n["hosts"]) {
        r.expect_list(h, key + ".hosts");
        for (std::size_t i = 0; i < h.size(); ++i) {
            l.hosts.push_back(host_ref(r, f, h[i], key + ".hosts[" + std::to_string(i) + "]"));
        }
        if (l.hosts.size() < 2) {
            r.fail(h, key + ".hosts", "needs at least two hosts");
        }
    } else if (f.host_count() < 2) {
        r.fail(n, key, "needs at least two hosts");
    }
    l.root = l.hosts.empty() ? 0 : l.hosts.front();
    if (const auto root = n["root"]) {
        l.root = host_ref(r, f, root, key + ".root");
        if (!l.hosts.empty() && std::find(l.hosts.begin(), l.hosts.end(), l.root) == l.hosts.end()) {
            r.fail(root, key + ".root", "the root must be one of the hosts");
        }
    }
    if (const auto v = n["start_us"]) {
        l.start_ns = micros(r, v, key + ".start_us");
    }
    if (const auto v = n["poisson_starts_us"]) {
        l.poisson_starts_ns = micros(r, v, key + ".poisson_starts_us");
    }
    return l;
}

std::vector<flow_spec> parse_flows(const reader& r, const topology::fabric& f, const YAML::Node& n,
                                   const std::string& key)
{
    r.expect_list(n, key);
    std::vector<flow_spec> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
        const std::string k = key + "[" + std::to_string(i) + "]";
        const auto item = n[i];
        r.expect_map(item, k, {"src", "dst", "bytes", "start_us"});
        flow_spec s;
        s.src = host_ref(r, f, r.require(item, k, "src"), k + ".src");
        s.dst = host_ref(r, f, r.require(item, k, "dst"), k + ".dst");
        if (s.src == s.dst) {
            r.fail(item, k, "a host does not send to itself");
        }
        s.bytes = bytes_value(r, r.require(item, k, "bytes"), k + ".bytes", 1, std::int64_t{1} << 40);
        if (const auto v = item["start_us"]) {
            s.start = micros(r, v, k + ".start_us");
        }
        out.push_back(s);
    }
    return out;
}

traffic_item parse_traffic_item(const reader& r, const topology::fabric& f, const YAML::Node& n,
                                const std::string& key, const std::string& base_dir)
{
    r.expect_map(n, key, {"poisson", "llm", "flows"});
    if (n.size() != 1) {
        r.fail(n, key, "one of poisson, llm or flows per item");
    }
    traffic_item t;
    if (const auto p = n["poisson"]) {
        t.type = traffic_item::kind::poisson;
        t.poisson = parse_poisson(r, f, p, key + ".poisson", base_dir);
        t.label = key + " (poisson " + std::filesystem::path(t.poisson.sizes->name()).stem().string() + ")";
    } else if (const auto l = n["llm"]) {
        t.type = traffic_item::kind::llm;
        t.llm = parse_llm(r, f, l, key + ".llm");
        t.label = key + " (llm " + std::string(to_string(t.llm.pattern)) + ")";
    } else {
        t.type = traffic_item::kind::flows;
        t.flows = parse_flows(r, f, n["flows"], key + ".flows");
        t.label = key + " (flows)";
    }
    return t;
}

fault_spec parse_fault(const reader& r, const topology::fabric& f, const YAML::Node& n, const std::string& key)
{
    r.expect_map(n, key, {"at_us", "link", "action", "probability", "direction"});
    fault_spec s;
    s.action = r.choice_of(r.require(n, key, "action"), key + ".action", fault_action_names);
    const std::string action(to_string(s.action));
    if (const auto v = n["at_us"]) {
        s.at_ns = micros(r, v, key + ".at_us");
    }
    const auto link = r.require(n, key, "link");
    if (link.IsScalar()) {
        r.choice(link, key + ".link", {"all"});
        s.all_links = true;
    } else {
        if (!link.IsSequence() || link.size() != 2) {
            r.fail(link, key + ".link", "expected [node, node] or all");
        }
        const auto a = node_ref(r, f, link[0], key + ".link[0]");
        const auto b = node_ref(r, f, link[1], key + ".link[1]");
        const auto l = f.link_between(a, b);
        if (!l) {
            r.fail(link, key + ".link", "no link between '" + f.name(a) + "' and '" + f.name(b) + "'");
        }
        s.link = *l;
        // Directions are as written: forward is link[0] -> link[1].
        const bool written_as_stored = f.link_at(*l).a == a;
        if (const auto d = n["direction"]) {
            const auto dir = r.choice(d, key + ".direction", {"both", "forward", "reverse"});
            const bool fwd = dir != "reverse";
            const bool rev = dir != "forward";
            s.forward = written_as_stored ? fwd : rev;
            s.reverse = written_as_stored ? rev : fwd;
        }
    }
    if (s.all_links && n["direction"]) {
        r.fail(n["direction"], key + ".direction", "applies to one link, not to all");
    }
    const bool needs_probability = s.action == fault_action::loss || s.action == fault_action::corruption;
    if (const auto p = n["probability"]) {
        if (!needs_probability) {
            r.fail(p, key + ".probability", "applies to actions loss and corruption only");
        }
        s.probability = r.number(p, key + ".probability", 0.0, 1.0);
    } else if (needs_probability) {
        r.fail(n, key + ".probability", "missing (required for action " + action + ")");
    }
    s.label = key + " (" + action + ")";
    return s;
}

} // namespace

time_ns path_timeout_floor(const scenario& s) noexcept
{
    const time_ns configured = s.algo.retransmit.min_timeout_ns;
    return s.fabric.pfc && !s.min_timeout_given ? std::max(configured, s.roce.irn_rto_high_ns) : configured;
}

scenario parse_scenario(const std::string& yaml, const std::string& name, const std::string& base_dir)
{
    const YAML::Node doc = config::load_yaml_string(yaml, name);
    const reader r(name);
    r.expect_map(doc, "",
                 {"version", "name", "description", "seed", "scale", "topology", "candidates", "fabric", "engine",
                  "clocks", "traffic", "faults", "run", "selection", "congestion", "retransmit", "tables",
                  "baseval", "scheme", "roce"});
    scenario s;
    s.file = name;
    s.name = std::filesystem::path(name).stem().string();
    if (const auto v = doc["name"]) {
        s.name = r.string(v, "name");
    }
    if (const auto v = doc["description"]) {
        s.description = r.string(v, "description");
    }
    r.optional_integer(doc, "", "seed", s.seed, 0, std::numeric_limits<std::int64_t>::max());
    r.optional_number(doc, "", "scale", s.scale, 0.0, 1e6, true);

    // The LAPS sections, exactly as in a laps config file (docs/configuration.md).
    config::parse_laps_sections(r, doc, s.algo);
    s.rate_cap_given = doc["congestion"] && doc["congestion"]["rate_cap_gbps"];
    s.min_timeout_given = doc["retransmit"] && doc["retransmit"]["min_timeout_us"];
    s.flow_capacity_given = doc["tables"] && doc["tables"]["flow_capacity"];

    const auto topo = r.require(doc, "", "topology");
    s.topology_label = r.string(topo, "topology");
    std::string argument = s.topology_label;
    std::error_code ec;
    if (const auto local = resolve(base_dir, argument); std::filesystem::is_regular_file(local, ec)) {
        argument = local;
    }
    try {
        s.topology = std::make_shared<const topology::fabric>(topology::open_topology(argument));
    } catch (const std::exception& e) {
        r.fail(topo, "topology", e.what());
    }
    const auto& f = *s.topology;

    if (const auto c = doc["candidates"]) {
        try {
            s.paths = topology::parse_path_options(r.string(c, "candidates"));
        } catch (const std::exception& e) {
            r.fail(c, "candidates", e.what());
        }
    }
    if (const auto v = doc["scheme"]) {
        const auto name = r.string(v, "scheme");
        s.scheme = schemes::find(name);
        if (s.scheme == nullptr) {
            r.fail(v, "scheme", "'" + name + "' is not one of: " + schemes::names());
        }
    }
    if (const auto n = doc["roce"]) {
        hosts::parse_roce_section(r, n, s.roce, s.scheme_params);
    }
    if (const auto n = doc["fabric"]) {
        parse_fabric_section(r, n, s.fabric);
    }
    if (const auto n = doc["engine"]) {
        parse_engine_section(r, n, s.engine);
    }
    if (const auto n = doc["clocks"]) {
        parse_clocks_section(r, f, n, s.clocks);
    }
    for (std::size_t h = 0; h < f.host_count(); ++h) {
        if (!f.address_of(static_cast<topology::node_id>(h)).is_ipv4()) {
            r.fail(topo, "topology", "host '" + f.name(static_cast<topology::node_id>(h)) +
                                         "' has an IPv6 address; the testbed sends IPv4 host frames");
        }
    }

    const auto traffic = r.require(doc, "", "traffic");
    r.expect_list(traffic, "traffic");
    if (traffic.size() == 0) {
        r.fail(traffic, "traffic", "expected at least one item");
    }
    for (std::size_t i = 0; i < traffic.size(); ++i) {
        s.traffic.push_back(parse_traffic_item(r, f, traffic[i], "traffic[" + std::to_string(i) + "]", base_dir));
    }
    if (const auto faults = doc["faults"]) {
        r.expect_list(faults, "faults");
        for (std::size_t i = 0; i < faults.size(); ++i) {
            s.faults.push_back(parse_fault(r, f, faults[i], "faults[" + std::to_string(i) + "]"));
        }
    }
    if (const auto run = doc["run"]) {
        r.expect_map(run, "run", {"max_time_us"});
        if (const auto v = run["max_time_us"]) {
            s.max_time_ns = micros(r, v, "run.max_time_us", 1e12);
            if (s.max_time_ns == 0) {
                r.fail(v, "run.max_time_us", "must be positive");
            }
        }
    }
    return s;
}

scenario load_scenario(const std::string& path)
{
    return parse_scenario(config::read_config_text(path), path, std::filesystem::path(path).parent_path().string());
}

} // namespace laps::fabric
