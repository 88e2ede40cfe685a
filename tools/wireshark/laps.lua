-- Wireshark dissector for the LAPS encapsulation, version 2 (docs/wire-format.md),
-- coalesced ACKs (ACK_RUN) and receiver-paced credits (CREDIT, flag PULL) included.
--
--   outer Ethernet / IPv4 / UDP (dst port 19521) / LAPS header
--     [/ run block (ACK_RUN)] [/ authentication trailer, flag 0x04] / inner frame (DATA)
--
-- Use:
--   wireshark -X lua_script:tools/wireshark/laps.lua capture.pcap
--   tshark -X lua_script:tools/wireshark/laps.lua -r capture.pcap -V
-- or copy this file to ~/.local/lib/wireshark/plugins/. The UDP port is a
-- preference (Edit > Preferences > Protocols > LAPS, or -o laps.udp_port:N).
--
-- Field names follow wire::field_layout (wire/layout.hpp): laps.version_type,
-- laps.flags, laps.anchor_count, laps.anchor_index, laps.pid, laps.time,
-- laps.flow_id, laps.seq, laps.inner_length, laps.window_offset, laps.epoch,
-- laps.anchor.

local laps = Proto("laps", "Latency Aware Packet Spraying")

local default_port = 19521
local fixed_size = 28
local laps_version = 2
local max_anchors = 4
local auth_size = 20 -- origin 4, counter 8, tag 8 (docs/wire-format.md "Authentication")
-- ACK_RUN (docs/wire-format.md "Coalesced ACKs"): count 1, reserved 3, ECN
-- bitmap 4, then per entry seq 4, latency delta 4, time_echo 2, acked_bytes 2.
local run_header_size = 8
local run_entry_size = 12
local max_run_entries = 31

local type_names = {
    [1] = "DATA",
    [2] = "ACK",
    [3] = "PROBE",
    [4] = "PROBE_ACK",
    [5] = "ACK_RUN",
    [6] = "CREDIT",
}

local f = laps.fields
f.version_type = ProtoField.uint8("laps.version_type", "Version/Type", base.HEX)
f.version = ProtoField.uint8("laps.version", "Version", base.DEC, nil, 0xF0)
f.type = ProtoField.uint8("laps.type", "Type", base.DEC, type_names, 0x0F)
f.flags = ProtoField.uint8("laps.flags", "Flags", base.HEX)
f.ecn_echo = ProtoField.bool("laps.flags.ecn_echo", "ECN echo", 8,
    {"acked packet was CE-marked", "not set"}, 0x01)
f.retransmit = ProtoField.bool("laps.flags.retransmit", "Retransmit", 8,
    {"resend", "not set"}, 0x02)
f.pull = ProtoField.bool("laps.flags.pull", "Pull", 8,
    {"asks its receiver for a credit", "not set"}, 0x08)
f.granted = ProtoField.uint32("laps.credit.granted", "Credits granted so far (CREDIT)", base.DEC)
f.anchor_count = ProtoField.uint8("laps.anchor_count", "Anchor count", base.DEC)
f.anchor_index = ProtoField.uint8("laps.anchor_index", "Anchor index (next to visit)", base.DEC)
f.pid = ProtoField.uint16("laps.pid", "Path id", base.DEC)
f.time = ProtoField.uint64("laps.time", "Time (48 bits)", base.DEC)
f.sent = ProtoField.uint64("laps.sent_ns", "Sender clock (ns mod 2^48)", base.DEC)
f.latency = ProtoField.int64("laps.latency_ns", "One-way latency (ns)", base.DEC)
f.flow_id = ProtoField.uint32("laps.flow_id", "Flow id", base.DEC)
f.seq = ProtoField.uint32("laps.seq", "Sequence", base.DEC)
f.inner_length = ProtoField.uint16("laps.inner_length", "Inner frame length", base.DEC)
f.window_offset = ProtoField.uint16("laps.window_offset", "Window offset (DATA: seq - oldest unacknowledged)", base.DEC)
f.time_echo = ProtoField.uint16("laps.time_echo", "Answered packet's time, low 16 bits (ACK/PROBE_ACK)", base.HEX)
f.acked_bytes = ProtoField.uint16("laps.acked_bytes", "Answered packet's length (ACK/PROBE_ACK)", base.DEC)
f.epoch = ProtoField.uint32("laps.epoch", "Sender epoch (incarnation)", base.HEX)
f.authenticated = ProtoField.bool("laps.flags.authenticated", "Authenticated (trailer follows the anchors)", 8,
    nil, 0x04)
f.auth = ProtoField.none("laps.auth", "Authentication trailer")
f.auth_origin = ProtoField.uint32("laps.auth.origin", "Origin (signing engine's epoch)", base.HEX)
f.auth_counter = ProtoField.uint64("laps.auth.counter", "Counter", base.DEC)
f.auth_tag = ProtoField.bytes("laps.auth.tag", "Tag (SipHash-2-4)")
f.run = ProtoField.none("laps.run", "Run block (answers to more DATA of this flow and path)")
f.run_count = ProtoField.uint8("laps.run.count", "Entries", base.DEC)
f.run_ecn = ProtoField.uint32("laps.run.ecn_echo", "ECN echo bitmap (bit i: entry i)", base.HEX)
f.run_entry = ProtoField.none("laps.run.entry", "Entry")
f.run_seq = ProtoField.uint32("laps.run.seq", "Sequence", base.DEC)
f.run_latency_delta = ProtoField.int32("laps.run.latency_delta", "Latency minus the header's (ns)", base.DEC)
f.run_latency = ProtoField.int64("laps.run.latency_ns", "One-way latency (ns)", base.DEC)
f.run_time_echo = ProtoField.uint16("laps.run.time_echo", "Answered packet's time, low 16 bits", base.HEX)
f.run_acked_bytes = ProtoField.uint16("laps.run.acked_bytes", "Answered packet's length", base.DEC)
f.anchors = ProtoField.none("laps.anchors", "Anchors")
f.anchor = ProtoField.uint32("laps.anchor", "Anchor", base.DEC_HEX)

local e_malformed = ProtoExpert.new("laps.malformed", "Malformed LAPS packet",
    expert.group.MALFORMED, expert.severity.ERROR)
local e_retransmit = ProtoExpert.new("laps.retransmit", "LAPS retransmission",
    expert.group.SEQUENCE, expert.severity.NOTE)
local e_ecn = ProtoExpert.new("laps.ecn_echo", "Congestion experienced (ECN echo)",
    expert.group.SEQUENCE, expert.severity.NOTE)
laps.experts = {e_malformed, e_retransmit, e_ecn}

laps.prefs.udp_port = Pref.uint("UDP port", default_port,
    "Outer UDP destination port of LAPS packets (the engine's udp_port setting)")

local eth_dissector = Dissector.get("eth_withoutfcs")

function laps.dissector(tvb, pinfo, tree)
    local len = tvb:len()
    if len < fixed_size then
        return 0
    end
    pinfo.cols.protocol = "LAPS"
    local subtree = tree:add(laps, tvb:range(0, math.min(len, fixed_size)))

    local vt = tvb:range(0, 1)
    local version = bit.rshift(vt:uint(), 4)
    local ptype = bit.band(vt:uint(), 0x0F)
    local vt_item = subtree:add(f.version_type, vt)
    vt_item:add(f.version, vt)
    vt_item:add(f.type, vt)
    local type_name = type_names[ptype] or ("type " .. ptype)
    if version ~= laps_version then
        subtree:add_proto_expert_info(e_malformed, "unknown LAPS version " .. version)
        pinfo.cols.info = "LAPS unknown version " .. version
        return len
    end
    if type_names[ptype] == nil then
        subtree:add_proto_expert_info(e_malformed, "unknown LAPS type " .. ptype)
    end

    local fl = tvb:range(1, 1)
    local fl_item = subtree:add(f.flags, fl)
    fl_item:add(f.ecn_echo, fl)
    fl_item:add(f.retransmit, fl)
    fl_item:add(f.authenticated, fl)
    fl_item:add(f.pull, fl)
    local count = tvb:range(2, 1):uint()
    local index = tvb:range(3, 1):uint()
    subtree:add(f.anchor_count, tvb:range(2, 1))
    local index_item = subtree:add(f.anchor_index, tvb:range(3, 1))
    if index > count then
        index_item:add_proto_expert_info(e_malformed, "anchor_index is past anchor_count")
    end
    local pid = tvb:range(4, 2):uint()
    subtree:add(f.pid, tvb:range(4, 2))

    local time = tvb:range(6, 6)
    subtree:add(f.time, time, time:uint64())
    local is_answer = ptype == 2 or ptype == 4 or ptype == 5
    if is_answer then
        -- 48-bit two's complement: clocks are not synchronised.
        subtree:add(f.latency, time, time:int64())
    else
        subtree:add(f.sent, time, time:uint64())
    end
    local flow = tvb:range(12, 4):uint()
    local seq = tvb:range(16, 4):uint()
    subtree:add(f.flow_id, tvb:range(12, 4))
    subtree:add(f.seq, tvb:range(16, 4))
    if ptype == 6 then
        subtree:add(f.granted, tvb:range(16, 4))
    end
    local inner_len = 0
    local inner_item = nil
    if is_answer then
        subtree:add(f.time_echo, tvb:range(20, 2))
    else
        inner_len = tvb:range(20, 2):uint()
        inner_item = subtree:add(f.inner_length, tvb:range(20, 2))
    end
    if is_answer then
        subtree:add(f.acked_bytes, tvb:range(22, 2))
    else
        subtree:add(f.window_offset, tvb:range(22, 2))
    end
    subtree:add(f.epoch, tvb:range(24, 4))

    local info = string.format("LAPS %s pid=%d", type_name, pid)
    if ptype == 1 or ptype == 2 or ptype == 5 or ptype == 6 then
        info = info .. string.format(" flow=%d", flow)
    end
    if ptype == 6 then
        info = info .. string.format(" granted=%d", seq)
    else
        info = info .. string.format(" seq=%d", seq)
    end
    if is_answer then
        info = info .. " latency=" .. tostring(time:int64()) .. "ns"
    end
    local flags = tvb:range(1, 1):uint()
    if ptype == 1 and bit.band(flags, 0x02) ~= 0 then
        subtree:add_proto_expert_info(e_retransmit)
        info = info .. " [retransmit]"
    end
    if ptype == 1 and bit.band(flags, 0x08) ~= 0 then
        info = info .. " [pull]"
    end
    if is_answer and bit.band(flags, 0x01) ~= 0 then
        subtree:add_proto_expert_info(e_ecn)
        info = info .. " [ECN echo]"
    end

    if count > max_anchors then
        subtree:add_proto_expert_info(e_malformed,
            "anchor_count " .. count .. " is over the limit of " .. max_anchors)
        pinfo.cols.info = info
        return len
    end
    local anchors_end = fixed_size + 4 * count
    local authenticated = bit.band(flags, 0x04) ~= 0
    local run_entries = 0
    if ptype == 5 then
        if len < anchors_end + run_header_size then
            subtree:add_proto_expert_info(e_malformed, "run block cut short")
            pinfo.cols.info = info
            return len
        end
        run_entries = tvb:range(anchors_end, 1):uint()
        if run_entries == 0 or run_entries > max_run_entries then
            subtree:add_proto_expert_info(e_malformed,
                "run block of " .. run_entries .. " entries (1 to " .. max_run_entries .. ")")
            pinfo.cols.info = info
            return len
        end
        info = info .. string.format(" +%d", run_entries)
    end
    local run_end = anchors_end
    if ptype == 5 then
        run_end = anchors_end + run_header_size + run_entry_size * run_entries
    end
    local header_size = run_end
    if authenticated then
        header_size = run_end + auth_size
    end
    if len < header_size then
        subtree:add_proto_expert_info(e_malformed, "header cut short")
        pinfo.cols.info = info
        return len
    end
    subtree:set_len(header_size)
    if count > 0 then
        local anchors = subtree:add(f.anchors, tvb:range(fixed_size, 4 * count))
        local list = {}
        for i = 0, count - 1 do
            local r = tvb:range(fixed_size + 4 * i, 4)
            local item = anchors:add(f.anchor, r)
            local mark = ""
            if i == index then
                mark = " (next)"
            end
            item:append_text(string.format(" [%d]%s", i, mark))
            list[#list + 1] = string.format("0x%08x", r:uint())
        end
        anchors:append_text(": " .. table.concat(list, ", "))
    end
    if ptype == 5 then
        local run = subtree:add(f.run, tvb:range(anchors_end, run_end - anchors_end))
        run:add(f.run_count, tvb:range(anchors_end, 1))
        local bits = tvb:range(anchors_end + 4, 4)
        run:add(f.run_ecn, bits)
        local base_latency = time:int64()
        for i = 0, run_entries - 1 do
            local at = anchors_end + run_header_size + run_entry_size * i
            local e = run:add(f.run_entry, tvb:range(at, run_entry_size))
            e:add(f.run_seq, tvb:range(at, 4))
            local delta = tvb:range(at + 4, 4)
            e:add(f.run_latency_delta, delta)
            e:add(f.run_latency, delta, base_latency + Int64(delta:int()))
            e:add(f.run_time_echo, tvb:range(at + 8, 2))
            e:add(f.run_acked_bytes, tvb:range(at + 10, 2))
            local ce = bit.band(bits:uint(), bit.lshift(1, i)) ~= 0
            e:append_text(string.format(" [%d] seq %d%s", i, tvb:range(at, 4):uint(), ce and " [ECN echo]" or ""))
        end
    end
    if authenticated then
        -- The tag is checked by laps with the fabric's key, not here.
        local t = subtree:add(f.auth, tvb:range(run_end, auth_size))
        t:add(f.auth_origin, tvb:range(run_end, 4))
        local c = tvb:range(run_end + 4, 8)
        t:add(f.auth_counter, c, c:uint64())
        t:add(f.auth_tag, tvb:range(run_end + 12, 8))
        info = info .. " [authenticated]"
    end
    pinfo.cols.info = info

    local rest = len - header_size
    if ptype == 1 then
        if inner_len ~= rest then
            inner_item:add_proto_expert_info(e_malformed,
                string.format("inner_length %d but %d bytes follow", inner_len, rest))
        end
        if rest > 0 then
            -- Keep "LAPS DATA ..." in front of what the inner frame adds.
            pinfo.cols.info:append(" | ")
            pinfo.cols.info:fence()
            eth_dissector:call(tvb:range(header_size, rest):tvb(), pinfo, tree)
        end
    elseif inner_len ~= 0 then
        inner_item:add_proto_expert_info(e_malformed, "inner_length must be 0 on " .. type_name)
    end
    return len
end

local udp_table = DissectorTable.get("udp.port")
local registered_port = default_port
udp_table:add(registered_port, laps)

function laps.prefs_changed()
    if laps.prefs.udp_port ~= registered_port then
        udp_table:remove(registered_port, laps)
        registered_port = laps.prefs.udp_port
        udp_table:add(registered_port, laps)
    end
end
