#include "topology/key_values.hpp"
#include "topology/builders.hpp"

#include "common/names.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <functional>
#include <initializer_list>

namespace laps::topology {

namespace {

std::string str(std::uint32_t v)
{
    return std::to_string(v);
}

// "sw3_1": a prefix and indices joined by '_'. Built by appending: GCC 12
// wrongly flags "literal" + std::string under -Wrestrict.
std::string name(std::string_view prefix, std::initializer_list<std::uint32_t> indices)
{
    std::string s(prefix);
    bool first = true;
    for (const auto i : indices) {
        if (!first) {
            s += '_';
        }
        s += std::to_string(i);
        first = false;
    }
    return s;
}

void add_link(fabric_spec& spec, const std::string& a, const std::string& b, double rate, std::int64_t delay,
              std::uint32_t weight = 1)
{
    spec.links.push_back(link_spec{a, b, rate, delay, weight, {}});
}

// Parameters common to the builders' checks.
void require(bool ok, const std::string& builder, const std::string& what)
{
    if (!ok) {
        throw topology_error(builder + ": " + what);
    }
}

} // namespace

fabric_spec rail_spec(const rail_params& p)
{
    require(p.clusters >= 1 && p.gpus >= 1, "rail", "clusters and gpus must be >= 1");
    fabric_spec spec;
    spec.family = fabric_family::rail;
    for (std::uint32_t c = 0; c < p.clusters; ++c) {
        for (std::uint32_t g = 0; g < p.gpus; ++g) {
            spec.hosts.push_back(host_spec{name("gpu", {c, g}), std::nullopt, static_cast<std::int32_t>(c), {}});
        }
    }
    // Rail switches are in no cluster: the paper's rule sends inter-cluster
    // traffic through each of them.
    for (std::uint32_t g = 0; g < p.gpus; ++g) {
        spec.switches.push_back(switch_spec{name("rail", {g}), no_group, {}});
    }
    for (std::uint32_t c = 0; c < p.clusters; ++c) {
        spec.switches.push_back(switch_spec{name("nvlink", {c}), static_cast<std::int32_t>(c), {}});
    }
    for (std::uint32_t c = 0; c < p.clusters; ++c) {
        for (std::uint32_t g = 0; g < p.gpus; ++g) {
            const std::string gpu = name("gpu", {c, g});
            add_link(spec, gpu, name("nvlink", {c}), p.nvlink_rate_gbps, p.nvlink_delay_ns);
            add_link(spec, gpu, name("rail", {g}), p.rail_rate_gbps, p.rail_delay_ns);
        }
    }
    return spec;
}

fabric_spec dragonfly_spec(const dragonfly_params& p)
{
    require(p.groups >= 1 && p.switches_per_group >= 1 && p.hosts_per_switch >= 1, "dragonfly",
            "groups, switches_per_group and hosts_per_switch must be >= 1");
    const std::uint32_t ports = p.switches_per_group * p.global_links;
    if (p.groups > 1) {
        require(ports > 0 && ports % (p.groups - 1) == 0, "dragonfly",
                "switches_per_group * global_links (" + str(ports) + ") must be a positive multiple of groups - 1 (" +
                    str(p.groups - 1) + ") so that every pair of groups gets the same number of global links");
    }
    fabric_spec spec;
    spec.family = fabric_family::dragonfly;
    auto sw = [](std::uint32_t g, std::uint32_t s) { return name("sw", {g, s}); };
    for (std::uint32_t g = 0; g < p.groups; ++g) {
        for (std::uint32_t s = 0; s < p.switches_per_group; ++s) {
            for (std::uint32_t h = 0; h < p.hosts_per_switch; ++h) {
                spec.hosts.push_back(host_spec{name("h", {g, s, h}), std::nullopt,
                                               static_cast<std::int32_t>(g), {}});
            }
        }
    }
    for (std::uint32_t g = 0; g < p.groups; ++g) {
        for (std::uint32_t s = 0; s < p.switches_per_group; ++s) {
            spec.switches.push_back(switch_spec{sw(g, s), static_cast<std::int32_t>(g), {}});
        }
    }
    for (std::uint32_t g = 0; g < p.groups; ++g) {
        for (std::uint32_t s = 0; s < p.switches_per_group; ++s) {
            for (std::uint32_t h = 0; h < p.hosts_per_switch; ++h) {
                add_link(spec, name("h", {g, s, h}), sw(g, s), p.host_rate_gbps, p.host_delay_ns);
            }
        }
    }
    for (std::uint32_t g = 0; g < p.groups; ++g) {
        for (std::uint32_t s = 0; s < p.switches_per_group; ++s) {
            for (std::uint32_t t = s + 1; t < p.switches_per_group; ++t) {
                add_link(spec, sw(g, s), sw(g, t), p.local_rate_gbps, p.local_delay_ns);
            }
        }
    }
    if (p.groups > 1) {
        const std::uint32_t span = p.groups - 1;
        for (std::uint32_t i = 0; i < p.groups; ++i) {
            for (std::uint32_t port = 0; port < ports; ++port) {
                const std::uint32_t j = (i + 1 + port % span) % p.groups;
                if (j < i) {
                    continue; // emitted from the lower group
                }
                // The same instance of the i-j link seen from group j.
                const std::uint32_t back = (i + p.groups - j - 1) % p.groups + (port / span) * span;
                add_link(spec, sw(i, port / p.global_links), sw(j, back / p.global_links), p.global_rate_gbps,
                         p.global_delay_ns, p.global_weight);
            }
        }
    }
    return spec;
}

fabric_spec leaf_spine_spec(const leaf_spine_params& p)
{
    require(p.leaves >= 1 && p.spines >= 1 && p.hosts_per_leaf >= 1, "leaf_spine",
            "leaves, spines and hosts_per_leaf must be >= 1");
    require(p.uplink_rates_gbps.empty() || p.uplink_rates_gbps.size() == p.spines, "leaf_spine",
            "uplink_rates has " + std::to_string(p.uplink_rates_gbps.size()) + " values, one per spine (" +
                str(p.spines) + ") expected");
    fabric_spec spec;
    spec.family = fabric_family::leaf_spine;
    for (std::uint32_t l = 0; l < p.leaves; ++l) {
        for (std::uint32_t h = 0; h < p.hosts_per_leaf; ++h) {
            spec.hosts.push_back(host_spec{name("h", {l, h}), std::nullopt, no_group, {}});
        }
    }
    for (std::uint32_t l = 0; l < p.leaves; ++l) {
        spec.switches.push_back(switch_spec{name("leaf", {l}), no_group, {}});
    }
    for (std::uint32_t s = 0; s < p.spines; ++s) {
        spec.switches.push_back(switch_spec{name("spine", {s}), no_group, {}});
    }
    for (std::uint32_t l = 0; l < p.leaves; ++l) {
        for (std::uint32_t h = 0; h < p.hosts_per_leaf; ++h) {
            add_link(spec, name("h", {l, h}), name("leaf", {l}), p.host_rate_gbps, p.host_delay_ns);
        }
    }
    for (std::uint32_t l = 0; l < p.leaves; ++l) {
        for (std::uint32_t s = 0; s < p.spines; ++s) {
            const double rate = p.uplink_rates_gbps.empty() ? p.uplink_rate_gbps : p.uplink_rates_gbps[s];
            add_link(spec, name("leaf", {l}), name("spine", {s}), rate, p.uplink_delay_ns);
        }
    }
    return spec;
}

fabric_spec fat_tree_spec(const fat_tree_params& p)
{
    require(p.k >= 2 && p.k % 2 == 0, "fat_tree", "k must be an even number >= 2, got " + str(p.k));
    const std::uint32_t half = p.k / 2;
    fabric_spec spec;
    spec.family = fabric_family::fat_tree;
    auto edge = [](std::uint32_t pod, std::uint32_t e) { return name("edge", {pod, e}); };
    auto agg = [](std::uint32_t pod, std::uint32_t a) { return name("agg", {pod, a}); };
    auto core = [](std::uint32_t a, std::uint32_t j) { return name("core", {a, j}); };
    auto host = [](std::uint32_t pod, std::uint32_t e, std::uint32_t h) {
        return name("h", {pod, e, h});
    };
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t e = 0; e < half; ++e) {
            for (std::uint32_t h = 0; h < half; ++h) {
                spec.hosts.push_back(host_spec{host(pod, e, h), std::nullopt, static_cast<std::int32_t>(pod), {}});
            }
        }
    }
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t e = 0; e < half; ++e) {
            spec.switches.push_back(switch_spec{edge(pod, e), static_cast<std::int32_t>(pod), {}});
        }
    }
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t a = 0; a < half; ++a) {
            spec.switches.push_back(switch_spec{agg(pod, a), static_cast<std::int32_t>(pod), {}});
        }
    }
    for (std::uint32_t a = 0; a < half; ++a) {
        for (std::uint32_t j = 0; j < half; ++j) {
            spec.switches.push_back(switch_spec{core(a, j), no_group, {}});
        }
    }
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t e = 0; e < half; ++e) {
            for (std::uint32_t h = 0; h < half; ++h) {
                add_link(spec, host(pod, e, h), edge(pod, e), p.rate_gbps, p.delay_ns);
            }
        }
    }
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t e = 0; e < half; ++e) {
            for (std::uint32_t a = 0; a < half; ++a) {
                add_link(spec, edge(pod, e), agg(pod, a), p.rate_gbps, p.delay_ns);
            }
        }
    }
    for (std::uint32_t pod = 0; pod < p.k; ++pod) {
        for (std::uint32_t a = 0; a < half; ++a) {
            for (std::uint32_t j = 0; j < half; ++j) {
                add_link(spec, agg(pod, a), core(a, j), p.rate_gbps, p.delay_ns);
            }
        }
    }
    return spec;
}

namespace {

// One settable parameter of a builder.
struct param_def {
    std::string_view key;
    std::function<void(const builder_param&)> set;
};

std::string param_label(const std::string& builder, const builder_param& p)
{
    return builder + " parameter '" + p.key + "'";
}

const std::string& single(const std::string& builder, const builder_param& p)
{
    if (p.values.size() != 1) {
        throw topology_error(p.where, param_label(builder, p) + ": expected one value, got " +
                                          std::to_string(p.values.size()));
    }
    return p.values.front();
}

template <typename T>
bool parse_number(const std::string& text, T& out)
{
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && ptr == end;
}

auto count(const std::string& builder, std::uint32_t& out, std::uint32_t min)
{
    return [&builder, &out, min](const builder_param& p) {
        const std::string& v = single(builder, p);
        std::uint32_t x = 0;
        if (!parse_number(v, x) || x < min) {
            throw topology_error(p.where, param_label(builder, p) + ": expected an integer >= " + std::to_string(min) +
                                              ", got '" + v + "'");
        }
        out = x;
    };
}

double parse_rate(const std::string& builder, const builder_param& p, const std::string& v)
{
    double x = 0;
    if (!parse_number(v, x) || !(x > 0) || !std::isfinite(x)) {
        throw topology_error(p.where, param_label(builder, p) + ": expected a rate in Gb/s > 0, got '" + v + "'");
    }
    return x;
}

auto rate(const std::string& builder, double& out)
{
    return [&builder, &out](const builder_param& p) { out = parse_rate(builder, p, single(builder, p)); };
}

auto rates(const std::string& builder, std::vector<double>& out)
{
    return [&builder, &out](const builder_param& p) {
        out.clear();
        for (const auto& v : p.values) {
            out.push_back(parse_rate(builder, p, v));
        }
    };
}

auto delay(const std::string& builder, std::int64_t& out)
{
    return [&builder, &out](const builder_param& p) {
        const std::string& v = single(builder, p);
        std::int64_t x = 0;
        if (!parse_number(v, x) || x < 0) {
            throw topology_error(p.where, param_label(builder, p) + ": expected a delay in ns >= 0, got '" + v + "'");
        }
        out = x;
    };
}

void apply(const builder_request& request, const std::vector<param_def>& defs)
{
    for (const auto& p : request.params) {
        const param_def* def = nullptr;
        for (const auto& d : defs) {
            if (d.key == p.key) {
                def = &d;
            }
        }
        if (def == nullptr) {
            std::string known;
            for (const auto& d : defs) {
                known += (known.empty() ? "" : ", ") + std::string(d.key);
            }
            throw topology_error(p.where, "unknown " + request.type + " parameter '" + p.key + "' (known: " + known + ")");
        }
        def->set(p);
    }
}

// A thrown topology_error of a builder, placed where the request was written.
template <typename Make>
fabric_spec located(const builder_request& request, Make&& make)
{
    try {
        return make();
    } catch (const topology_error& e) {
        throw topology_error(request.where, e.what());
    }
}

fabric_spec build_rail(const builder_request& request)
{
    const std::string& b = request.type;
    rail_params p;
    apply(request, {{"clusters", count(b, p.clusters, 1)},
                    {"gpus", count(b, p.gpus, 1)},
                    {"rail_rate_gbps", rate(b, p.rail_rate_gbps)},
                    {"nvlink_rate_gbps", rate(b, p.nvlink_rate_gbps)},
                    {"rail_delay_ns", delay(b, p.rail_delay_ns)},
                    {"nvlink_delay_ns", delay(b, p.nvlink_delay_ns)}});
    return rail_spec(p);
}

fabric_spec build_dragonfly(const builder_request& request)
{
    const std::string& b = request.type;
    dragonfly_params p;
    apply(request, {{"groups", count(b, p.groups, 1)},
                    {"switches_per_group", count(b, p.switches_per_group, 1)},
                    {"hosts_per_switch", count(b, p.hosts_per_switch, 1)},
                    {"global_links", count(b, p.global_links, 0)},
                    {"global_weight", count(b, p.global_weight, 1)},
                    {"host_rate_gbps", rate(b, p.host_rate_gbps)},
                    {"local_rate_gbps", rate(b, p.local_rate_gbps)},
                    {"global_rate_gbps", rate(b, p.global_rate_gbps)},
                    {"host_delay_ns", delay(b, p.host_delay_ns)},
                    {"local_delay_ns", delay(b, p.local_delay_ns)},
                    {"global_delay_ns", delay(b, p.global_delay_ns)}});
    return located(request, [&p] { return dragonfly_spec(p); });
}

fabric_spec build_leaf_spine(const builder_request& request)
{
    const std::string& b = request.type;
    leaf_spine_params p;
    apply(request, {{"leaves", count(b, p.leaves, 1)},
                    {"spines", count(b, p.spines, 1)},
                    {"hosts_per_leaf", count(b, p.hosts_per_leaf, 1)},
                    {"host_rate_gbps", rate(b, p.host_rate_gbps)},
                    {"uplink_rate_gbps", rate(b, p.uplink_rate_gbps)},
                    {"uplink_rates_gbps", rates(b, p.uplink_rates_gbps)},
                    {"host_delay_ns", delay(b, p.host_delay_ns)},
                    {"uplink_delay_ns", delay(b, p.uplink_delay_ns)}});
    return located(request, [&p] { return leaf_spine_spec(p); });
}

fabric_spec build_fat_tree(const builder_request& request)
{
    const std::string& b = request.type;
    fat_tree_params p;
    apply(request, {{"k", count(b, p.k, 2)}, {"rate_gbps", rate(b, p.rate_gbps)}, {"delay_ns", delay(b, p.delay_ns)}});
    return located(request, [&p] { return fat_tree_spec(p); });
}

// The builders by name: `builder:` in topology files, "rail:..." on command lines.
using builder_function = fabric_spec (*)(const builder_request&);
constexpr std::array builders{
    common::named<builder_function>{"rail", build_rail},
    common::named<builder_function>{"dragonfly", build_dragonfly},
    common::named<builder_function>{"leaf_spine", build_leaf_spine},
    common::named<builder_function>{"fat_tree", build_fat_tree},
};

} // namespace

bool is_builder_name(std::string_view name) noexcept
{
    return common::find_named(builders, name).has_value();
}

builder_request parse_builder_argument(std::string_view text)
{
    builder_request request;
    const auto colon = text.find(':');
    request.type = std::string(text.substr(0, colon));
    if (colon == std::string_view::npos) {
        return request;
    }
    for_each_key_value(text.substr(colon + 1), [&](std::string_view item, std::string_view key, std::string_view values) {
        if (item.find('=') == std::string_view::npos || key.empty()) {
            throw topology_error(request.type + ": expected key=value, got '" + std::string(item) + "'");
        }
        builder_param p;
        p.key = std::string(key);
        while (true) {
            const auto slash = values.find('/');
            p.values.emplace_back(values.substr(0, slash));
            if (slash == std::string_view::npos) {
                break;
            }
            values = values.substr(slash + 1);
        }
        request.params.push_back(std::move(p));
    });
    return request;
}

fabric_spec build_spec(const builder_request& request)
{
    const auto build = common::find_named(builders, request.type);
    if (!build) {
        throw topology_error(request.where, "unknown builder '" + request.type + "' (known: " +
                                                common::joined_names(builders) + ")");
    }
    return (*build)(request);
}

} // namespace laps::topology
