#include "topology/export.hpp"

#include <ostream>

namespace laps::topology {

void write_table_yaml(std::ostream& out, const fabric& f, node_id host, const tables::table_spec& spec,
                      std::string_view comment)
{
    if (!comment.empty()) {
        out << "# " << comment << "\n";
    }
    out << "version: 1\n";
    out << "host:\n";
    out << "  id: " << host << "\n";
    out << "  address: " << f.address_of(host).to_string() << "\n";
    out << "paths:\n";
    out << "  pst:\n";
    for (const auto& row : spec.pst) {
        out << "    - {dst: " << row.destination.to_string() << ", pids: [";
        for (std::size_t i = 0; i < row.pids.size(); ++i) {
            out << (i == 0 ? "" : ", ") << row.pids[i];
        }
        out << "]}\n";
    }
    out << "  pit:\n";
    for (const auto& row : spec.pit) {
        out << "    - {pid: " << row.pid << ", base_ns: " << row.base_ns << ", uncongested_ns: " << row.uncongested_ns
            << ", hops: " << unsigned{row.hop_count} << ", anchors: [";
        for (std::size_t i = 0; i < row.anchor_count; ++i) {
            out << (i == 0 ? "" : ", ") << row.anchors[i];
        }
        out << "], valid: " << (row.valid ? "true" : "false") << "}\n";
    }
}

} // namespace laps::topology
