#pragma once
// The Prometheus/OpenMetrics text of a running laps (docs/telemetry.md
// "Metrics"): every engine, worker, port (rte_eth_stats and xstats), path and
// mempool counter, with HELP and TYPE lines and the labels instance, worker,
// pid, port, pool and reason. Rendered on the metrics thread
// (metrics_server.hpp), never on a worker: engine and worker counters come
// from the workers' published snapshots (relaxed atomics, 1 ms old at most),
// paths from the same snapshots as the console's (inspect.hpp).

#include "app/run/instance.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace laps::app {

enum class metrics_format : std::uint8_t {
    prometheus,  // text/plain; version=0.0.4 (what Prometheus asks for by default)
    openmetrics, // application/openmetrics-text; version=1.0.0
};

using metric_labels = std::vector<std::pair<std::string_view, std::string>>;

// Writes families in either format. A family's samples follow its HELP and
// TYPE lines; counter names are given without "_total".
class metrics_writer {
public:
    explicit metrics_writer(metrics_format format) : _format(format) {}

    void counter(std::string_view name, std::string_view help) { family(name, help, "counter"); }
    void gauge(std::string_view name, std::string_view help) { family(name, help, "gauge"); }
    void sample(const metric_labels& labels, std::uint64_t value);
    void sample(const metric_labels& labels, double value);

    // The text, with OpenMetrics' "# EOF" where it needs one.
    std::string finish();

private:
    void family(std::string_view name, std::string_view help, std::string_view type);
    void sample_head(const metric_labels& labels);

    metrics_format _format;
    std::string _out;
    std::string _name;   // current family
    bool _counter = false;
};

// The families of every instance (and the process's mempools).
void write_instance_metrics(metrics_writer& w, std::vector<std::unique_ptr<instance>>& instances);

const char* content_type(metrics_format format) noexcept;

} // namespace laps::app
