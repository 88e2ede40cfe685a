#include "app/config/config.hpp"

#include "app/config/config_sections.hpp"

#include "common/read_bounded.hpp"

#include <rte_config.h>

#include <arpa/inet.h>

#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace laps::app {

namespace {

using config::reader;

constexpr std::string_view key_version = "version";

void parse_stats(const reader& r, const YAML::Node& n, stats_config& out)
{
    r.expect_map(n, "stats", {"interval_ms"});
    if (const auto i = n["interval_ms"]) {
        out.interval_ns = ms_to_ns(r.number(i, "stats.interval_ms", 0, 3.6e6));
    }
}

void parse_run(const reader& r, const YAML::Node& n, run_config& out)
{
    r.expect_map(n, "run", {"max_packets", "max_fabric_packets", "duration_ms", "idle_ms", "drain_ms", "tx_batch_us"});
    r.optional_integer(n, "run", "max_packets", out.max_packets, 0, std::numeric_limits<std::int64_t>::max());
    r.optional_integer(n, "run", "max_fabric_packets", out.max_fabric_packets, 0,
                       std::numeric_limits<std::int64_t>::max());
    if (const auto d = n["duration_ms"]) {
        out.duration_ns = ms_to_ns(r.number(d, "run.duration_ms", 0, 1e9));
    }
    if (const auto d = n["idle_ms"]) {
        out.idle_ns = ms_to_ns(r.number(d, "run.idle_ms", 0, 1e9));
    }
    if (const auto d = n["drain_ms"]) {
        out.drain_ns = ms_to_ns(r.number(d, "run.drain_ms", 0, 60000));
    }
    if (const auto d = n["tx_batch_us"]) {
        // 0: every iteration's outputs leave at its end.
        out.tx_batch_ns = static_cast<common::time_ns>(std::llround(r.number(d, "run.tx_batch_us", 0, 1000) * 1000.0));
    }
}

metrics_config parse_metrics(const reader& r, const YAML::Node& n)
{
    r.expect_map(n, "metrics", {"listen"});
    const auto l = r.require(n, "metrics", "listen");
    const std::string text = r.string(l, "metrics.listen");
    const auto m = parse_listen(text);
    if (!m) {
        r.fail(l, "metrics.listen",
               "'" + text + "' is not ADDRESS:PORT (a numeric IPv4 or [IPv6] address and a port, 0 for any: "
               "127.0.0.1:9464)");
    }
    return *m;
}

capture_config parse_capture(const reader& r, const YAML::Node& n)
{
    r.expect_map(n, "capture", {"file", "side", "pid", "count", "seconds", "snaplen"});
    capture_config c;
    c.file = r.string(r.require(n, "capture", "file"), "capture.file");
    if (c.file.empty()) {
        r.fail(n["file"], "capture.file", "empty: expected the pcapng file to write");
    }
    if (const auto s = n["side"]) {
        c.side = r.choice_of(s, "capture.side", capture_side_names);
    }
    if (const auto p = n["pid"]) {
        c.pid = static_cast<std::uint16_t>(r.integer(p, "capture.pid", 0, 65535));
        if (c.side == capture_side::host) {
            r.fail(p, "capture.pid", "pids are on the fabric side: use side fabric or both");
        }
    }
    r.optional_integer(n, "capture", "count", c.count, 0, std::numeric_limits<std::int64_t>::max());
    if (const auto d = n["seconds"]) {
        c.duration_ns = static_cast<common::time_ns>(r.number(d, "capture.seconds", 0, 1e6) * 1e9);
    }
    r.optional_integer(n, "capture", "snaplen", c.snaplen, 64, 65535);
    return c;
}

// One key for the fabric: every instance's engines sign and verify with it.
void apply_auth(app_config& app)
{
    for (auto& i : app.instances) {
        i.engine.auth_key = app.auth ? std::optional<wire::auth_key>(app.auth->key) : std::nullopt;
        i.engine.auth_peers = app.auth ? app.auth->peers : i.engine.auth_peers;
    }
}

auth_config parse_auth(const reader& r, const YAML::Node& n)
{
    r.expect_map(n, "auth", {"key", "key_file", "peers"});
    const auto key = n["key"];
    const auto file = n["key_file"];
    if (static_cast<bool>(key) == static_cast<bool>(file)) {
        r.fail(n, "auth", "expected one of key (32 hexadecimal digits) or key_file (a file holding them)");
    }
    auth_config a;
    std::string text;
    if (key) {
        text = r.string(key, "auth.key");
        a.from = "auth.key";
    } else {
        a.from = r.string(file, "auth.key_file");
        constexpr std::size_t limit = 4096;
        switch (common::read_bounded(a.from, limit, text)) {
        case common::read_status::ok:
            break;
        case common::read_status::cannot_open:
            r.fail(file, "auth.key_file", a.from + ": cannot be read");
        case common::read_status::too_large:
            r.fail(file, "auth.key_file", a.from + ": larger than a key file (" + std::to_string(limit) + " bytes)");
        }
    }
    try {
        a.key = wire::parse_auth_key(text);
    } catch (const wire::auth_error& e) {
        // The message describes the text, never repeats it.
        r.fail(key ? key : file, key ? "auth.key" : "auth.key_file", e.what());
    }
    r.optional_integer(n, "auth", "peers", a.peers, 1, 1 << 20);
    return a;
}

link_config parse_link(const reader& r, const YAML::Node& n)
{
    r.expect_map(n, "link", {"lcore", "default_delay_us", "paths", "mbufs", "ring_size", "rate_gbps"});
    link_config l;
    if (const auto c = n["lcore"]) {
        l.lcore = static_cast<unsigned>(r.integer(c, "link.lcore", 0, RTE_MAX_LCORE - 1));
    }
    if (const auto d = n["default_delay_us"]) {
        l.default_delay_ns = static_cast<common::time_ns>(r.number(d, "link.default_delay_us", 0, 1e7) * 1000.0);
    }
    if (const auto p = n["paths"]) {
        r.expect_list(p, "link.paths");
        std::set<tables::path_id> seen;
        for (std::size_t i = 0; i < p.size(); ++i) {
            const std::string key = "link.paths[" + std::to_string(i) + "]";
            r.expect_map(p[i], key, {"pid", "delay_us", "loss", "jitter_us"});
            link_path lp;
            lp.pid = static_cast<tables::path_id>(r.integer(r.require(p[i], key, "pid"), key + ".pid", 0, 65535));
            if (!seen.insert(lp.pid).second) {
                r.fail(p[i]["pid"], key + ".pid", "pid " + std::to_string(lp.pid) + " is listed twice");
            }
            lp.delay_ns = static_cast<common::time_ns>(
                r.number(r.require(p[i], key, "delay_us"), key + ".delay_us", 0, 1e7) * 1000.0);
            r.optional_number(p[i], key, "loss", lp.loss, 0.0, 1.0);
            double jitter_us = 0.0;
            r.optional_number(p[i], key, "jitter_us", jitter_us, 0.0, 1e7);
            lp.jitter_ns = static_cast<common::time_ns>(jitter_us * 1000.0);
            l.paths.push_back(lp);
        }
    }
    double rate_gbps = 0.0;
    r.optional_number(n, "link", "rate_gbps", rate_gbps, 0.0, 1e4);
    l.rate_bps = rate_gbps * 1e9;
    r.optional_integer(n, "link", "mbufs", l.mbufs, 1023, 1 << 24);
    r.optional_integer(n, "link", "ring_size", l.ring_size, 64, 1 << 20);
    if ((l.ring_size & (l.ring_size - 1)) != 0) {
        r.fail(n["ring_size"], "link.ring_size", "must be a power of two");
    }
    return l;
}

app_config parse(const YAML::Node& doc, const std::string& name)
{
    const reader r(name);
    app_config app;
    app.source = name;
    if (const auto v = doc[std::string(key_version)]) {
        r.integer(v, "version", 1, 1);
    }
    const bool multi = static_cast<bool>(doc["instances"]);
    if (multi) {
        r.expect_map(doc, "", {"version", "lcores", "stats", "run", "link", "instances", "metrics", "capture", "auth"});
    } else {
        r.expect_map(doc, "", {"version", "host", "selection", "congestion", "retransmit", "tables", "baseval", "paths",
                               "ports", "lcores", "mempool", "outer", "engine", "steering", "topology", "stats",
                               "run", "metrics", "capture", "auth"});
    }
    if (const auto s = doc["stats"]) {
        parse_stats(r, s, app.stats);
    }
    if (const auto s = doc["run"]) {
        parse_run(r, s, app.run);
    }
    if (const auto m = doc["metrics"]) {
        app.metrics = parse_metrics(r, m);
    }
    if (const auto c = doc["capture"]) {
        app.capture = parse_capture(r, c);
    }
    if (const auto a = doc["auth"]) {
        app.auth = parse_auth(r, a);
    }
    if (!multi) {
        app.instances.push_back(parse_instance(r, doc, "laps", false, app, true));
        apply_auth(app);
        return app;
    }
    if (const auto l = doc["lcores"]) {
        parse_lcores(r, l, true, false, app, nullptr);
    }
    if (const auto l = doc["link"]) {
        app.link = parse_link(r, l);
    }
    const auto list = doc["instances"];
    if (!list.IsMap() || list.size() == 0) {
        r.fail(list, "instances", "expected a map of instance name -> instance config");
    }
    for (const auto& entry : list) {
        const std::string iname = entry.first.as<std::string>();
        const std::string key = "instances." + iname;
        if (iname.empty() || iname.size() > 16 ||
            iname.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
            r.fail(entry.first, key, "instance names are 1-16 characters of [a-z0-9_] (they name DPDK objects)");
        }
        r.expect_map(entry.second, key,
                     {"version", "host", "selection", "congestion", "retransmit", "tables", "baseval", "paths",
                      "ports", "lcores", "mempool", "outer", "engine", "steering", "topology"});
        app.instances.push_back(parse_instance(r, entry.second, iname, app.link.has_value(), app, false));
    }
    apply_auth(app);
    if (app.link) {
        unsigned linked = 0;
        for (const auto& i : app.instances) {
            linked += i.fabric.link ? 1 : 0;
        }
        if (app.instances.size() < 2 || linked != app.instances.size()) {
            r.fail(doc["link"], "link", "joins two or more instances, every one with ports.fabric {link: true}");
        }
        // Of three or more, the link hands a packet to the instance its
        // outer destination IP names: two with one address could not both
        // be reached.
        for (std::size_t i = 0; app.instances.size() > 2 && i < app.instances.size(); ++i) {
            for (std::size_t j = 0; j < i; ++j) {
                if (app.instances[i].outer.ip == app.instances[j].outer.ip) {
                    r.fail(list[app.instances[i].name]["outer"], "instances." + app.instances[i].name + ".outer.ip",
                           format_ipv4(*app.instances[i].outer.ip) + " is " + app.instances[j].name +
                               "'s too: a link of three or more instances routes by it");
                }
            }
        }
    }
    return app;
}

} // namespace

std::optional<wire::mac_address> parse_mac(const std::string& text)
{
    wire::mac_address mac{};
    unsigned b[6];
    char tail = 0;
    if (std::sscanf(text.c_str(), "%2x:%2x:%2x:%2x:%2x:%2x%c", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &tail) != 6) {
        return std::nullopt;
    }
    for (int i = 0; i < 6; ++i) {
        mac[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(b[i]);
    }
    return mac;
}

std::string format_mac(const wire::mac_address& mac)
{
    char buf[18];
    std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4], mac[5]);
    return buf;
}

std::string format_ipv4(std::uint32_t a)
{
    return std::to_string(a >> 24) + "." + std::to_string((a >> 16) & 0xff) + "." + std::to_string((a >> 8) & 0xff) +
           "." + std::to_string(a & 0xff);
}

std::optional<metrics_config> parse_listen(const std::string& text)
{
    metrics_config m;
    std::string host;
    std::string port;
    if (!text.empty() && text.front() == '[') {
        const auto close = text.find("]:");
        if (close == std::string::npos) {
            return std::nullopt;
        }
        host = text.substr(1, close - 1);
        port = text.substr(close + 2);
        in6_addr a6{};
        if (inet_pton(AF_INET6, host.c_str(), &a6) != 1) {
            return std::nullopt;
        }
    } else {
        const auto colon = text.rfind(':');
        if (colon == std::string::npos) {
            return std::nullopt;
        }
        host = text.substr(0, colon);
        port = text.substr(colon + 1);
        in_addr a4{};
        if (inet_pton(AF_INET, host.c_str(), &a4) != 1) {
            return std::nullopt;
        }
    }
    if (port.empty() || port.size() > 5 || port.find_first_not_of("0123456789") != std::string::npos ||
        std::stoul(port) > 65535) {
        return std::nullopt;
    }
    m.host = host;
    m.port = static_cast<std::uint16_t>(std::stoul(port));
    return m;
}

std::string format_listen(const metrics_config& m)
{
    const bool v6 = m.host.find(':') != std::string::npos;
    return (v6 ? "[" + m.host + "]" : m.host) + ":" + std::to_string(m.port);
}

app_config load_app_config(const std::string& path)
{
    return parse(config::load_yaml_file(path), path);
}

app_config parse_app_config(const std::string& yaml, const std::string& name)
{
    return parse(config::load_yaml_string(yaml, name), name);
}
} // namespace laps::app
