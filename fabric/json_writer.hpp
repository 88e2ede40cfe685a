#pragma once
// A small streaming JSON writer for summary.json: keys in the order written,
// numbers printed with a fixed format, so equal runs give equal bytes.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace laps::fabric {

class json_writer {
public:
    explicit json_writer(std::ostream& out) : _out(out) {}

    json_writer& begin_object(std::string_view key = {}) { return open(key, '{'); }
    json_writer& end_object() { return close('}'); }
    json_writer& begin_array(std::string_view key = {}) { return open(key, '['); }
    json_writer& end_array() { return close(']'); }

    json_writer& value(std::string_view key, std::string_view v)
    {
        prefix(key);
        quote(v);
        return *this;
    }
    json_writer& value(std::string_view key, const char* v) { return value(key, std::string_view(v)); }
    json_writer& value(std::string_view key, const std::string& v) { return value(key, std::string_view(v)); }
    json_writer& value(std::string_view key, bool v)
    {
        prefix(key);
        _out << (v ? "true" : "false");
        return *this;
    }
    json_writer& value(std::string_view key, std::uint64_t v)
    {
        prefix(key);
        _out << v;
        return *this;
    }
    json_writer& value(std::string_view key, std::int64_t v)
    {
        prefix(key);
        _out << v;
        return *this;
    }
    json_writer& value(std::string_view key, std::uint32_t v) { return value(key, std::uint64_t{v}); }
    json_writer& value(std::string_view key, int v) { return value(key, std::int64_t{v}); }
    // Doubles with `decimals` digits after the point; NaN/inf as null.
    json_writer& value(std::string_view key, double v, int decimals = 4)
    {
        prefix(key);
        if (!std::isfinite(v)) {
            _out << "null";
            return *this;
        }
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
        _out << buf;
        return *this;
    }

    void finish() { _out << '\n'; }

private:
    json_writer& open(std::string_view key, char bracket)
    {
        prefix(key);
        _out << bracket;
        _first.push_back(true);
        return *this;
    }
    json_writer& close(char bracket)
    {
        const bool empty = _first.back();
        _first.pop_back();
        if (!empty) {
            _out << '\n' << std::string(2 * _first.size(), ' ');
        }
        _out << bracket;
        return *this;
    }
    void prefix(std::string_view key)
    {
        if (!_first.empty()) {
            _out << (_first.back() ? "\n" : ",\n") << std::string(2 * _first.size(), ' ');
            _first.back() = false;
        }
        if (!key.empty()) {
            quote(key);
            _out << ": ";
        }
    }
    void quote(std::string_view s)
    {
        _out << '"';
        for (const char c : s) {
            switch (c) {
            case '"':
                _out << "\\\"";
                break;
            case '\\':
                _out << "\\\\";
                break;
            case '\n':
                _out << "\\n";
                break;
            case '\t':
                _out << "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    _out << buf;
                } else {
                    _out << c;
                }
            }
        }
        _out << '"';
    }

    std::ostream& _out;
    std::vector<bool> _first;
};

} // namespace laps::fabric
