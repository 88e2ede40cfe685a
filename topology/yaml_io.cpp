#include "topology/yaml_io.hpp"

#include "topology/builders.hpp"

#include "common/read_bounded.hpp"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace laps::topology {

namespace {

class reader {
public:
    explicit reader(std::string file) : _file(std::move(file)) {}

    source_location at(const YAML::Node& n) const
    {
        const auto mark = n.Mark();
        return source_location{_file, mark.is_null() ? 0 : mark.line + 1};
    }

    [[noreturn]] void fail(const YAML::Node& n, const std::string& what) const { throw topology_error(at(n), what); }

    // Rejects keys not in `allowed`, and keys given twice.
    void check_keys(const YAML::Node& map, std::initializer_list<std::string_view> allowed, const std::string& what) const
    {
        if (!map.IsMap()) {
            fail(map, what + ": expected a map");
        }
        std::set<std::string> seen;
        for (const auto& kv : map) {
            const auto key = kv.first.as<std::string>();
            bool known = false;
            for (const auto a : allowed) {
                known = known || a == key;
            }
            if (!known) {
                std::string list;
                for (const auto a : allowed) {
                    list += (list.empty() ? "" : ", ") + std::string(a);
                }
                fail(kv.first, what + ": unknown key '" + key + "' (expected: " + list + ")");
            }
            if (!seen.insert(key).second) {
                fail(kv.first, what + ": key '" + key + "' given twice");
            }
        }
    }

    std::string text(const YAML::Node& n, const std::string& what) const
    {
        if (!n.IsScalar()) {
            fail(n, what + ": expected a scalar");
        }
        return n.Scalar();
    }

    template <typename T>
    T number(const YAML::Node& n, const std::string& what, const char* expected) const
    {
        const std::string s = text(n, what);
        T value{};
        const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
        if (ec != std::errc() || ptr != s.data() + s.size()) {
            fail(n, what + ": expected " + expected + ", got '" + s + "'");
        }
        return value;
    }

    std::int32_t group(const YAML::Node& n, const std::string& what) const
    {
        const auto g = number<std::int32_t>(n, what + " group", "an integer >= 0");
        if (g < 0) {
            fail(n, what + " group: expected an integer >= 0");
        }
        return g;
    }

    tables::address address(const YAML::Node& n, const std::string& what) const
    {
        const auto a = tables::address::parse(text(n, what));
        if (!a) {
            fail(n, what + ": expected an IPv4 or IPv6 address, got '" + n.Scalar() + "'");
        }
        return *a;
    }

    const YAML::Node sequence(const YAML::Node& n, const std::string& what) const
    {
        if (!n.IsSequence()) {
            fail(n, what + ": expected a list");
        }
        return n;
    }

    const std::string& file() const noexcept { return _file; }

private:
    std::string _file;
};

struct link_defaults {
    std::optional<double> rate_gbps;
    std::optional<std::int64_t> delay_ns;
};

std::string entry_name(const char* kind, std::size_t index)
{
    return std::string(kind) + " " + std::to_string(index);
}

void read_hosts(const reader& r, const YAML::Node& list, fabric_spec& spec)
{
    std::size_t i = 0;
    for (const auto& h : r.sequence(list, "hosts")) {
        const std::string what = entry_name("host", i++);
        host_spec host;
        host.where = r.at(h);
        if (h.IsScalar()) {
            host.name = h.Scalar();
        } else {
            r.check_keys(h, {"name", "address", "group"}, what);
            if (!h["name"]) {
                r.fail(h, what + ": 'name' is required");
            }
            host.name = r.text(h["name"], what + " name");
            if (h["address"]) {
                host.address = r.address(h["address"], "host " + host.name + " address");
            }
            if (h["group"]) {
                host.group = r.group(h["group"], "host " + host.name);
            }
        }
        spec.hosts.push_back(std::move(host));
    }
}

void read_switches(const reader& r, const YAML::Node& list, fabric_spec& spec)
{
    std::size_t i = 0;
    for (const auto& s : r.sequence(list, "switches")) {
        const std::string what = entry_name("switch", i++);
        switch_spec sw;
        sw.where = r.at(s);
        if (s.IsScalar()) {
            sw.name = s.Scalar();
        } else {
            r.check_keys(s, {"name", "group"}, what);
            if (!s["name"]) {
                r.fail(s, what + ": 'name' is required");
            }
            sw.name = r.text(s["name"], what + " name");
            if (s["group"]) {
                sw.group = r.group(s["group"], "switch " + sw.name);
            }
        }
        spec.switches.push_back(std::move(sw));
    }
}

void read_rate_delay(const reader& r, const YAML::Node& n, const std::string& what, std::optional<double>& rate,
                     std::optional<std::int64_t>& delay)
{
    if (n["rate_gbps"]) {
        rate = r.number<double>(n["rate_gbps"], what + " rate_gbps", "a rate in Gb/s");
    }
    if (n["delay_ns"]) {
        delay = r.number<std::int64_t>(n["delay_ns"], what + " delay_ns", "an integer delay in ns");
    }
}

std::optional<std::uint32_t> read_weight(const reader& r, const YAML::Node& n, const std::string& what)
{
    if (!n["weight"]) {
        return std::nullopt;
    }
    return r.number<std::uint32_t>(n["weight"], what + " weight", "an integer >= 1");
}

void read_links(const reader& r, const YAML::Node& list, const link_defaults& defaults, fabric_spec& spec)
{
    std::size_t i = 0;
    for (const auto& l : r.sequence(list, "links")) {
        std::string what = entry_name("link", i++);
        r.check_keys(l, {"a", "b", "rate_gbps", "delay_ns", "weight"}, what);
        if (!l["a"] || !l["b"]) {
            r.fail(l, what + ": 'a' and 'b' (the two nodes) are required");
        }
        link_spec link;
        link.where = r.at(l);
        link.a = r.text(l["a"], what + " a");
        link.b = r.text(l["b"], what + " b");
        what = "link " + link.a + " - " + link.b;
        std::optional<double> rate = defaults.rate_gbps;
        std::optional<std::int64_t> delay = defaults.delay_ns;
        read_rate_delay(r, l, what, rate, delay);
        if (!rate) {
            r.fail(l, what + ": 'rate_gbps' is required (or set defaults.rate_gbps)");
        }
        link.rate_gbps = *rate;
        link.delay_ns = delay.value_or(0);
        link.weight = read_weight(r, l, what).value_or(1);
        spec.links.push_back(std::move(link));
    }
}

void apply_overrides(const reader& r, const YAML::Node& o, fabric_spec& spec)
{
    r.check_keys(o, {"hosts", "links"}, "overrides");
    if (o["hosts"]) {
        for (const auto& h : r.sequence(o["hosts"], "overrides.hosts")) {
            r.check_keys(h, {"name", "address", "group"}, "overrides.hosts entry");
            if (!h["name"]) {
                r.fail(h, "overrides.hosts entry: 'name' is required");
            }
            const std::string name = r.text(h["name"], "overrides.hosts name");
            host_spec* target = nullptr;
            for (auto& host : spec.hosts) {
                if (host.name == name) {
                    target = &host;
                }
            }
            if (target == nullptr) {
                r.fail(h, "overrides.hosts: the builder made no host named '" + name + "'");
            }
            target->where = r.at(h);
            if (h["address"]) {
                target->address = r.address(h["address"], "host " + name + " address");
            }
            if (h["group"]) {
                target->group = r.group(h["group"], "host " + name);
            }
        }
    }
    if (o["links"]) {
        for (const auto& l : r.sequence(o["links"], "overrides.links")) {
            r.check_keys(l, {"a", "b", "rate_gbps", "delay_ns", "weight"}, "overrides.links entry");
            if (!l["a"] || !l["b"]) {
                r.fail(l, "overrides.links entry: 'a' and 'b' are required");
            }
            const std::string a = r.text(l["a"], "overrides.links a");
            const std::string b = r.text(l["b"], "overrides.links b");
            link_spec* target = nullptr;
            for (auto& link : spec.links) {
                if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) {
                    target = &link;
                }
            }
            if (target == nullptr) {
                r.fail(l, "overrides.links: the builder made no link " + a + " - " + b);
            }
            std::optional<double> rate = target->rate_gbps;
            std::optional<std::int64_t> delay = target->delay_ns;
            read_rate_delay(r, l, "link " + a + " - " + b, rate, delay);
            target->rate_gbps = *rate;
            target->delay_ns = *delay;
            target->weight = read_weight(r, l, "link " + a + " - " + b).value_or(target->weight);
            target->where = r.at(l);
        }
    }
}

builder_request read_builder(const reader& r, const YAML::Node& b)
{
    if (!b.IsMap()) {
        r.fail(b, "builder: expected a map with 'type' and parameters");
    }
    builder_request request;
    request.where = r.at(b);
    if (!b["type"]) {
        r.fail(b, "builder: 'type' is required (rail, dragonfly, leaf_spine, fat_tree)");
    }
    request.type = r.text(b["type"], "builder type");
    if (!is_builder_name(request.type)) {
        r.fail(b["type"], "builder: unknown type '" + request.type + "' (known: rail, dragonfly, leaf_spine, fat_tree)");
    }
    std::set<std::string> seen;
    for (const auto& kv : b) {
        const auto key = kv.first.as<std::string>();
        if (!seen.insert(key).second) {
            r.fail(kv.first, "builder: key '" + key + "' given twice");
        }
        if (key == "type") {
            continue;
        }
        builder_param p;
        p.key = key;
        p.where = r.at(kv.first);
        if (kv.second.IsSequence()) {
            for (const auto& v : kv.second) {
                p.values.push_back(r.text(v, "builder " + key));
            }
        } else {
            p.values.push_back(r.text(kv.second, "builder " + key));
        }
        request.params.push_back(std::move(p));
    }
    return request;
}

fabric_spec read_spec(const reader& r, const YAML::Node& root)
{
    if (!root.IsMap()) {
        r.fail(root, "a topology file is a map (builder: ... or hosts/switches/links)");
    }
    r.check_keys(root, {"version", "family", "builder", "overrides", "defaults", "hosts", "switches", "links"},
                 "topology");
    if (root["version"]) {
        const auto v = r.number<int>(root["version"], "version", "1");
        if (v != 1) {
            r.fail(root["version"], "version: only version 1 is supported, got " + std::to_string(v));
        }
    }
    fabric_spec spec;
    if (root["builder"]) {
        for (const char* key : {"hosts", "switches", "links", "defaults"}) {
            if (root[key]) {
                r.fail(root[key], std::string("'") + key +
                                      "' cannot be combined with 'builder'; change the builder's elements in "
                                      "'overrides'");
            }
        }
        spec = build_spec(read_builder(r, root["builder"]));
        if (root["overrides"]) {
            apply_overrides(r, root["overrides"], spec);
        }
    } else {
        if (root["overrides"]) {
            r.fail(root["overrides"], "'overrides' needs a 'builder'; edit the explicit lists instead");
        }
        link_defaults defaults;
        if (root["defaults"]) {
            r.check_keys(root["defaults"], {"rate_gbps", "delay_ns"}, "defaults");
            read_rate_delay(r, root["defaults"], "defaults", defaults.rate_gbps, defaults.delay_ns);
        }
        if (!root["hosts"] || !root["links"]) {
            r.fail(root, "a topology needs 'builder', or 'hosts' and 'links' (and usually 'switches')");
        }
        read_hosts(r, root["hosts"], spec);
        if (root["switches"]) {
            read_switches(r, root["switches"], spec);
        }
        read_links(r, root["links"], defaults, spec);
    }
    if (root["family"]) {
        const auto family = parse_family(r.text(root["family"], "family"));
        if (!family) {
            r.fail(root["family"], "family: expected custom, rail, dragonfly, leaf_spine or fat_tree, got '" +
                                       root["family"].Scalar() + "'");
        }
        spec.family = *family;
    }
    return spec;
}

std::string format_rate(double rate)
{
    char buf[64];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, rate);
    return ec == std::errc() ? std::string(buf, ptr) : std::to_string(rate);
}

} // namespace

fabric_spec parse_fabric_spec(std::string_view yaml_text, const std::string& source_name)
{
    const reader r(source_name);
    YAML::Node root;
    try {
        root = YAML::Load(std::string(yaml_text));
    } catch (const YAML::ParserException& e) {
        throw topology_error(source_location{source_name, e.mark.line + 1}, "YAML syntax error: " + e.msg);
    }
    try {
        return read_spec(r, root);
    } catch (const YAML::Exception& e) {
        throw topology_error(source_location{source_name, e.mark.is_null() ? 0 : e.mark.line + 1}, e.msg);
    }
}

fabric parse_fabric(std::string_view yaml_text, const std::string& source_name)
{
    return fabric(parse_fabric_spec(yaml_text, source_name));
}

fabric load_fabric(const std::string& path)
{
    std::string text;
    switch (common::read_bounded(path, max_topology_bytes, text)) {
    case common::read_status::cannot_open:
        throw topology_error("cannot open topology file '" + path + "'");
    case common::read_status::too_large:
        throw topology_error("topology file '" + path + "' is larger than " +
                             std::to_string(max_topology_bytes >> 20) + " MiB (is it the right file?)");
    case common::read_status::ok:
        break;
    }
    if (text.find('\0') != std::string::npos) {
        throw topology_error("topology file '" + path + "' holds a NUL byte: not a YAML text file");
    }
    return parse_fabric(text, path);
}

void write_fabric_yaml(std::ostream& out, const fabric& f)
{
    out << "# laps topology: " << f.host_count() << " hosts, " << f.switch_count() << " switches, " << f.link_count()
        << " links\n";
    out << "version: 1\n";
    out << "family: " << to_string(f.family()) << "\n";
    out << "hosts:\n";
    for (node_id h = 0; h < f.host_count(); ++h) {
        const auto& n = f.at(h);
        out << "  - {name: " << n.name;
        if (f.address_of(h) != default_host_address(h)) {
            out << ", address: " << f.address_of(h).to_string();
        }
        if (n.group != no_group) {
            out << ", group: " << n.group;
        }
        out << "}\n";
    }
    out << "switches:\n";
    for (node_id s = static_cast<node_id>(f.host_count()); s < f.node_count(); ++s) {
        const auto& n = f.at(s);
        out << "  - {name: " << n.name;
        if (n.group != no_group) {
            out << ", group: " << n.group;
        }
        out << "}\n";
    }
    out << "links:\n";
    for (const auto& l : f.links()) {
        out << "  - {a: " << f.name(l.a) << ", b: " << f.name(l.b) << ", rate_gbps: " << format_rate(l.rate_gbps)
            << ", delay_ns: " << l.delay_ns;
        if (l.weight != 1) {
            out << ", weight: " << l.weight;
        }
        out << "}\n";
    }
}

std::string to_yaml(const fabric& f)
{
    std::ostringstream out;
    write_fabric_yaml(out, f);
    return out.str();
}

fabric open_topology(std::string_view argument)
{
    const std::string arg(argument);
    std::error_code ec;
    if (std::filesystem::is_regular_file(arg, ec)) {
        return load_fabric(arg);
    }
    if (is_builder_name(argument.substr(0, argument.find(':')))) {
        return fabric(build_spec(parse_builder_argument(argument)));
    }
    throw topology_error("topology '" + arg +
                         "': no such file, and not a builder (rail, dragonfly, leaf_spine, fat_tree[:key=value,...])");
}

} // namespace laps::topology
