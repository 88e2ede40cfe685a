#pragma once
// Flow-size distributions: the empirical CDFs of configs/workloads/*.cdf
// (format there: "<bytes> <cumulative probability>" per line, sorted), sampled
// by inverse transform with linear interpolation between points.
//
// Files use probabilities in 0..1 or 0..100; the last point says which (1 or
// 100), so the 0..100 files (hadoop, storage) are normalised and never give
// sizes or loads off by 100x.

#include "common/rng.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace laps::fabric {

class workload_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class flow_size_cdf {
public:
    struct point {
        double bytes;
        double probability; // 0..1
    };

    // Throws workload_error naming file:line for a bad line, unsorted or
    // decreasing points, or a last probability that is neither 1 nor 100.
    static flow_size_cdf load(const std::string& path);
    static flow_size_cdf parse(const std::string& text, const std::string& name);

    // A size in bytes, at least 1.
    std::uint64_t sample(common::rng& rng) const noexcept;
    // The mean of the piecewise-linear distribution.
    double mean_bytes() const noexcept { return _mean; }
    const std::vector<point>& points() const noexcept { return _points; }
    const std::string& name() const noexcept { return _name; }

private:
    std::string _name;
    std::vector<point> _points;
    double _mean = 0;
};

} // namespace laps::fabric
