// docs/wire-format.md against the code: every field row of the doc's tables
// has the offset and length of wire::field_layout, every field is documented,
// and the doc's hex dumps are exactly what the encoder produces.
#include "tests/unit/wire/examples.hpp"
#include "wire/layout.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace laps::wire {
namespace {

std::vector<std::string> doc_lines()
{
    const char* path = std::getenv("LAPS_WIRE_DOC");
    EXPECT_NE(path, nullptr) << "LAPS_WIRE_DOC is not set (meson sets it)";
    std::vector<std::string> lines;
    if (path == nullptr) {
        return lines;
    }
    std::ifstream in(path);
    EXPECT_TRUE(in.good()) << "cannot read " << path;
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

const field_position* find_field(std::string_view name)
{
    for (const field_position& f : field_layout) {
        if (f.name == name) {
            return &f;
        }
    }
    return nullptr;
}

// Rows like "| 48 | 6 | 6 | `laps.time` | ... |": frame offset, LAPS offset
// ("-" for outer fields), length ("4n" for the anchors), field name.
TEST(wire_doc, field_tables_match_the_layout)
{
    const std::regex row(R"(^\|\s*(\d+)\s*\|\s*(\d+|-)\s*\|\s*(\d+|4n)\s*\|\s*`([a-z0-9_.]+)`\s*\|)");
    std::map<std::string, int> seen;
    for (const std::string& line : doc_lines()) {
        std::smatch m;
        if (!std::regex_search(line, m, row)) {
            continue;
        }
        const std::string name = m[4];
        const field_position* f = find_field(name);
        ASSERT_NE(f, nullptr) << "doc field not in wire::field_layout: " << line;
        ++seen[name];
        EXPECT_EQ(std::stoul(m[1]), f->offset) << line;
        if (m[2] == "-") {
            EXPECT_LT(f->offset, outer_off::laps) << line;
        } else {
            EXPECT_EQ(std::stoul(m[2]) + outer_off::laps, f->offset) << line;
        }
        if (f->repeated) {
            EXPECT_EQ(m[3], "4n") << line;
        } else {
            EXPECT_EQ(std::stoul(m[3]), f->length) << line;
        }
    }
    for (const field_position& f : field_layout) {
        EXPECT_GE(seen[std::string(f.name)], 1) << f.name << " is not documented";
    }
    // The LAPS fields appear in the layout table and in each packet type's table.
    EXPECT_GE(seen["laps.time"], 5);
}

// The hex dump that follows "<!-- example: NAME -->": lines "0000  02 5e ...".
std::map<std::string, test::bytes> doc_dumps()
{
    const std::regex marker(R"(<!-- example: ([a-z_]+) -->)");
    const std::regex dump_line(R"(^([0-9a-f]{4})  ((?:[0-9a-f]{2} ?)+)\s*$)");
    std::map<std::string, test::bytes> dumps;
    std::string current;
    bool in_block = false;
    for (const std::string& line : doc_lines()) {
        std::smatch m;
        if (std::regex_search(line, m, marker)) {
            current = m[1];
            in_block = false;
            continue;
        }
        if (current.empty()) {
            continue;
        }
        if (line.starts_with("```")) {
            if (in_block) {
                current.clear();
            }
            in_block = !in_block;
            continue;
        }
        if (in_block && std::regex_match(line, m, dump_line)) {
            test::bytes& b = dumps[current];
            EXPECT_EQ(std::stoul(m[1], nullptr, 16), b.size()) << line;
            std::istringstream hex(m[2]);
            for (std::string byte; hex >> byte;) {
                b.push_back(static_cast<std::uint8_t>(std::stoul(byte, nullptr, 16)));
            }
        }
    }
    return dumps;
}

TEST(wire_doc, hex_dumps_are_what_the_encoder_writes)
{
    const auto dumps = doc_dumps();
    for (const auto& e : test::wire_examples::all()) {
        const auto it = dumps.find(e.name);
        ASSERT_NE(it, dumps.end()) << "no hex dump for " << e.name;
        EXPECT_EQ(it->second, e.packet) << e.name;
    }
    EXPECT_EQ(dumps.size(), test::wire_examples::all().size());
}

TEST(wire_doc, states_the_numbers)
{
    std::string text;
    for (const std::string& line : doc_lines()) {
        text += line + "\n";
    }
    EXPECT_NE(text.find("19521"), std::string::npos);
    EXPECT_NE(text.find("host MTU + " + std::to_string(max_overhead)), std::string::npos);
}

} // namespace
} // namespace laps::wire
