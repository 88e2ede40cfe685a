#include "fabric/workload.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

namespace laps::fabric {

flow_size_cdf flow_size_cdf::load(const std::string& path)
{
    std::ifstream in(path);
    if (!in) {
        throw workload_error(path + ": cannot open the flow-size CDF");
    }
    std::stringstream text;
    text << in.rdbuf();
    return parse(text.str(), path);
}

flow_size_cdf flow_size_cdf::parse(const std::string& text, const std::string& name)
{
    flow_size_cdf cdf;
    cdf._name = name;
    std::istringstream lines(text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
        ++number;
        const auto hash = line.find('#');
        if (hash != std::string::npos) {
            line.resize(hash);
        }
        std::istringstream fields(line);
        double bytes = 0;
        double p = 0;
        if (!(fields >> bytes)) {
            continue; // blank or comment
        }
        std::string extra;
        if (!(fields >> p) || (fields >> extra) || !std::isfinite(bytes) || !std::isfinite(p) || bytes < 0 || p < 0) {
            throw workload_error(name + ":" + std::to_string(number) +
                                 ": expected '<bytes> <cumulative probability>', both >= 0");
        }
        if (!cdf._points.empty() && (bytes < cdf._points.back().bytes || p < cdf._points.back().probability)) {
            throw workload_error(name + ":" + std::to_string(number) +
                                 ": sizes and probabilities must not decrease");
        }
        cdf._points.push_back({bytes, p});
    }
    if (cdf._points.size() < 2) {
        throw workload_error(name + ": a CDF needs at least two points");
    }
    const double last = cdf._points.back().probability;
    double scale = 0;
    if (last == 1.0) {
        scale = 1.0;
    } else if (last == 100.0) {
        scale = 0.01;
    } else {
        throw workload_error(name + ": the last probability must be 1 (0..1 scale) or 100 (0..100 scale), not " +
                             std::to_string(last));
    }
    for (auto& pt : cdf._points) {
        pt.probability *= scale;
    }
    // Mass below the first point sits at the first size.
    double mean = cdf._points.front().bytes * cdf._points.front().probability;
    for (std::size_t i = 1; i < cdf._points.size(); ++i) {
        const auto& a = cdf._points[i - 1];
        const auto& b = cdf._points[i];
        mean += (b.probability - a.probability) * (a.bytes + b.bytes) / 2;
    }
    cdf._mean = std::max(mean, 1.0);
    return cdf;
}

std::uint64_t flow_size_cdf::sample(common::rng& rng) const noexcept
{
    const double u = rng.unit();
    // First point with probability > u (points are sorted by probability).
    const auto it = std::upper_bound(_points.begin(), _points.end(), u,
                                     [](double v, const point& p) { return v < p.probability; });
    double bytes = 0;
    if (it == _points.begin()) {
        bytes = _points.front().bytes;
    } else if (it == _points.end()) {
        bytes = _points.back().bytes;
    } else {
        const auto& b = *it;
        const auto& a = *(it - 1);
        const double span = b.probability - a.probability;
        bytes = span > 0 ? a.bytes + (b.bytes - a.bytes) * (u - a.probability) / span : b.bytes;
    }
    return std::max<std::uint64_t>(1, static_cast<std::uint64_t>(std::llround(bytes)));
}

} // namespace laps::fabric
