#include "topology/baseval.hpp"

#include "common/time.hpp"
#include "topology/path.hpp"

#include <charconv>
#include <cmath>

namespace laps::topology {

void parse_margin(std::string_view text, delay_options& options)
{
    const auto colon = text.find(':');
    const std::string_view mode = text.substr(0, colon);
    const auto margin = common::find_named(margin_mode_names, mode);
    if (!margin) {
        throw topology_error("margin '" + std::string(text) + "': expected per_switch[:packets] or per_link[:packets]");
    }
    options.margin = *margin;
    // The paper's five packets per switch; the authors' simulator's one per link.
    options.margin_packets = *margin == margin_mode::per_switch ? 5 : 1;
    if (colon != std::string_view::npos) {
        const std::string_view n = text.substr(colon + 1);
        double packets = 0;
        const auto [ptr, ec] = std::from_chars(n.data(), n.data() + n.size(), packets);
        if (ec != std::errc() || ptr != n.data() + n.size() || !(packets >= 0) || !std::isfinite(packets)) {
            throw topology_error("margin '" + std::string(text) + "': packets must be a number >= 0");
        }
        options.margin_packets = packets;
    }
}

delay_model::delay_model(const fabric& f, const delay_options& options) : _fabric(f), _options(options)
{
    if (options.packet_bytes == 0) {
        throw topology_error("packet size must be at least 1 byte");
    }
    _serialization.reserve(f.link_count());
    for (const auto& l : f.links()) {
        _serialization.push_back(common::serialization_ns(options.packet_bytes, l.rate_gbps * 1e9));
    }
}

path_delay delay_model::finish(std::int64_t link_ns, std::int64_t serial_ns, std::int64_t first_serial_ns) const
{
    // Per switch: every link but the first leaves a forwarding node.
    const std::int64_t queued = _options.margin == margin_mode::per_link ? serial_ns : serial_ns - first_serial_ns;
    const auto margin = static_cast<std::int64_t>(std::llround(_options.margin_packets * static_cast<double>(queued)));
    return path_delay{link_ns + margin, link_ns};
}

delay_model::sums delay_model::sum(std::span<const node_id> path) const
{
    sums s;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        const auto l = _fabric.link_between(path[i], path[i + 1]);
        if (!l) {
            throw path_error("path " + describe_path(_fabric, path) + ": " + _fabric.name(path[i]) + " and " +
                             _fabric.name(path[i + 1]) + " are not linked");
        }
        const std::int64_t ser = _serialization[*l];
        if (!s.has_links) {
            s.first_serial_ns = ser;
            s.has_links = true;
        }
        s.serial_ns += ser;
        s.link_ns += ser + _fabric.link_at(*l).delay_ns;
    }
    return s;
}

path_delay delay_model::of(std::span<const node_id> path) const
{
    const sums s = sum(path);
    return finish(s.link_ns, s.serial_ns, s.first_serial_ns);
}

path_delay delay_model::combine(const sums& core, std::optional<link_id> from_access,
                                std::optional<link_id> to_access) const
{
    std::int64_t link_ns = core.link_ns;
    std::int64_t serial_ns = core.serial_ns;
    std::int64_t first = core.has_links ? core.first_serial_ns : 0;
    bool first_set = core.has_links;
    if (to_access) {
        const std::int64_t ser = _serialization[*to_access];
        link_ns += ser + _fabric.link_at(*to_access).delay_ns;
        serial_ns += ser;
        if (!first_set) {
            first = ser;
        }
    }
    if (from_access) {
        const std::int64_t ser = _serialization[*from_access];
        link_ns += ser + _fabric.link_at(*from_access).delay_ns;
        serial_ns += ser;
        first = ser;
    }
    return finish(link_ns, serial_ns, first);
}

} // namespace laps::topology
