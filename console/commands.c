/* The console's instruction tables for rte_cmdline (testpmd-style grammar,
 * verb first). Handlers live in dispatch.cpp; every instruction passes its
 * command id in `data`. Keyword tokens are shared: in every result struct of
 * grammar.h the keywords w0, w1, w2 sit at the same offsets. */
#include "console/grammar.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define KEYWORD(name, field, text) \
    static cmdline_parse_token_string_t name = TOKEN_STRING_INITIALIZER(struct laps_cmd_words, field, text)
#define INSTRUCTION(name, id, help, ...)                              \
    static cmdline_parse_inst_t name = {                              \
        .f = laps_console_dispatch,                                   \
        .data = (void *)(uintptr_t)(id),                              \
        .help_str = help,                                             \
        .tokens = {__VA_ARGS__, NULL},                                \
    }

/* Keywords by position. */
KEYWORD(kw_help, w0, "help");
KEYWORD(kw_show, w0, "show");
KEYWORD(kw_clear, w0, "clear");
KEYWORD(kw_set, w0, "set");
KEYWORD(kw_path, w0, "path");
KEYWORD(kw_pst0, w0, "pst");
KEYWORD(kw_pit0, w0, "pit");
KEYWORD(kw_load, w0, "load");
KEYWORD(kw_start, w0, "start");
KEYWORD(kw_stop, w0, "stop");
KEYWORD(kw_quit, w0, "quit");
KEYWORD(kw_wait, w0, "wait");
KEYWORD(kw_capture0, w0, "capture");
KEYWORD(kw_capture1, w1, "capture");
KEYWORD(kw_start1, w1, "start");
KEYWORD(kw_stop1, w1, "stop");
KEYWORD(kw_port, w1, "port");
KEYWORD(kw_pst1, w1, "pst");
KEYWORD(kw_pit1, w1, "pit");
KEYWORD(kw_flows, w1, "flows");
KEYWORD(kw_paths, w1, "paths");
KEYWORD(kw_engine, w1, "engine");
KEYWORD(kw_lcores, w1, "lcores");
KEYWORD(kw_config, w1, "config");
KEYWORD(kw_beta, w1, "beta");
KEYWORD(kw_policy, w1, "policy");
KEYWORD(kw_aimd, w1, "aimd");
KEYWORD(kw_cc, w1, "cc");
KEYWORD(kw_add, w1, "add");
KEYWORD(kw_del, w1, "del");
KEYWORD(kw_stats2, w2, "stats");
KEYWORD(kw_normalized, w2, "normalized");
KEYWORD(kw_n, w2, "n");
KEYWORD(kw_all3, w3, "all");

/* Arguments. */
/* A section or a command's first word: dispatch.cpp answers unknown ones. */
static cmdline_parse_token_string_t arg_help_section = TOKEN_STRING_INITIALIZER(struct laps_cmd_value, value, NULL);
static cmdline_parse_token_num_t arg_port = TOKEN_NUM_INITIALIZER(struct laps_cmd_port, port, RTE_UINT16);
static cmdline_parse_token_ipaddr_t arg_address = TOKEN_IPADDR_INITIALIZER(struct laps_cmd_address, address);
static cmdline_parse_token_num_t arg_pid = TOKEN_NUM_INITIALIZER(struct laps_cmd_pid, pid, RTE_UINT16);
static cmdline_parse_token_num_t arg_count = TOKEN_NUM_INITIALIZER(struct laps_cmd_count, n, RTE_UINT32);
static cmdline_parse_token_string_t arg_value = TOKEN_STRING_INITIALIZER(struct laps_cmd_value, value, NULL);
/* Filled at start-up from the C++ policy registry. */
static char policy_choices[256] = "laps";
static char policy_help[384] = "set policy <name>: path selection policy";
static cmdline_parse_token_string_t arg_policy =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_value, value, policy_choices);
static cmdline_parse_token_string_t arg_keyword_value =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_keyword_value, value, NULL);
static cmdline_parse_token_num_t arg_keyword_count =
    TOKEN_NUM_INITIALIZER(struct laps_cmd_keyword_count, n, RTE_UINT32);
static cmdline_parse_token_num_t arg_path_pid = TOKEN_NUM_INITIALIZER(struct laps_cmd_path_state, pid, RTE_UINT16);
static cmdline_parse_token_string_t arg_cc = TOKEN_STRING_INITIALIZER(struct laps_cmd_value, value, "paper#fair#credit");
static cmdline_parse_token_string_t arg_path_state =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_path_state, state, "down#up");
static cmdline_parse_token_ipaddr_t arg_pst_destination =
    TOKEN_IPADDR_INITIALIZER(struct laps_cmd_pst_add, destination);
static cmdline_parse_token_string_t arg_pst_pids = TOKEN_STRING_INITIALIZER(struct laps_cmd_pst_add, pids, NULL);
static cmdline_parse_token_string_t arg_pst_fabric_keyword =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_pst_add, fabric_keyword, "fabric");
static cmdline_parse_token_ipaddr_t arg_pst_fabric = TOKEN_IPV4_INITIALIZER(struct laps_cmd_pst_add, fabric);
static cmdline_parse_token_num_t arg_wait_n = TOKEN_NUM_INITIALIZER(struct laps_cmd_wait, n, RTE_UINT64);
static cmdline_parse_token_string_t arg_wait_packets = TOKEN_STRING_INITIALIZER(struct laps_cmd_wait, w2, "packets");
static cmdline_parse_token_num_t arg_pit_pid = TOKEN_NUM_INITIALIZER(struct laps_cmd_pit_add, pid, RTE_UINT16);
static cmdline_parse_token_string_t arg_pit_rest =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_pit_add, rest, TOKEN_STRING_MULTI);

INSTRUCTION(cmd_help, LAPS_CMD_HELP, "help: list the commands", (void *)&kw_help);
INSTRUCTION(cmd_help_section, LAPS_CMD_HELP_SECTION,
            "help show|set|path|tables|control|<command>: one group of commands, or the forms of one command",
            (void *)&kw_help, (void *)&arg_help_section);
INSTRUCTION(cmd_show_port_stats_all, LAPS_CMD_SHOW_PORT_STATS_ALL, "show port stats all: counters of every port",
            (void *)&kw_show, (void *)&kw_port, (void *)&kw_stats2, (void *)&kw_all3);
INSTRUCTION(cmd_show_port_stats_one, LAPS_CMD_SHOW_PORT_STATS_ONE, "show port stats <port_id>: one port's counters",
            (void *)&kw_show, (void *)&kw_port, (void *)&kw_stats2, (void *)&arg_port);
INSTRUCTION(cmd_clear_port_stats_all, LAPS_CMD_CLEAR_PORT_STATS_ALL, "clear port stats all: reset port counters",
            (void *)&kw_clear, (void *)&kw_port, (void *)&kw_stats2, (void *)&kw_all3);
INSTRUCTION(cmd_show_pst, LAPS_CMD_SHOW_PST, "show pst: every destination and its candidate pids",
            (void *)&kw_show, (void *)&kw_pst1);
INSTRUCTION(cmd_show_pst_dst, LAPS_CMD_SHOW_PST_DST, "show pst <dst>: one destination", (void *)&kw_show,
            (void *)&kw_pst1, (void *)&arg_address);
INSTRUCTION(cmd_show_pit, LAPS_CMD_SHOW_PIT, "show pit: every path", (void *)&kw_show, (void *)&kw_pit1);
INSTRUCTION(cmd_show_pit_pid, LAPS_CMD_SHOW_PIT_PID, "show pit <pid>: one path", (void *)&kw_show,
            (void *)&kw_pit1, (void *)&arg_pid);
INSTRUCTION(cmd_show_pit_dst, LAPS_CMD_SHOW_PIT_DST, "show pit <dst>: the paths of one destination",
            (void *)&kw_show, (void *)&kw_pit1, (void *)&arg_address);
INSTRUCTION(cmd_show_flows, LAPS_CMD_SHOW_FLOWS, "show flows: active flows (first 20)", (void *)&kw_show,
            (void *)&kw_flows);
INSTRUCTION(cmd_show_flows_n, LAPS_CMD_SHOW_FLOWS_N, "show flows <n>: the first n active flows", (void *)&kw_show,
            (void *)&kw_flows, (void *)&arg_count);
INSTRUCTION(cmd_show_paths_stats, LAPS_CMD_SHOW_PATHS_STATS,
            "show paths stats: per path packets, bytes, share, realVal, baseVal, probes, losses", (void *)&kw_show,
            (void *)&kw_paths, (void *)&kw_stats2);
INSTRUCTION(cmd_show_engine_stats, LAPS_CMD_SHOW_ENGINE_STATS, "show engine stats: every engine counter by name",
            (void *)&kw_show, (void *)&kw_engine, (void *)&kw_stats2);
INSTRUCTION(cmd_show_lcores, LAPS_CMD_SHOW_LCORES, "show lcores: lcores, their roles and queues", (void *)&kw_show,
            (void *)&kw_lcores);
INSTRUCTION(cmd_show_config, LAPS_CMD_SHOW_CONFIG, "show config: the running configuration", (void *)&kw_show,
            (void *)&kw_config);
INSTRUCTION(cmd_set_beta, LAPS_CMD_SET_BETA, "set beta <per_us>: fixed beta of Eq. 1, per microsecond (0: uniform)",
            (void *)&kw_set, (void *)&kw_beta, (void *)&arg_value);
INSTRUCTION(cmd_set_beta_normalized, LAPS_CMD_SET_BETA_NORMALIZED,
            "set beta normalized <alpha>: beta = alpha / max baseVal of each destination", (void *)&kw_set,
            (void *)&kw_beta, (void *)&kw_normalized, (void *)&arg_keyword_value);
INSTRUCTION(cmd_set_policy, LAPS_CMD_SET_POLICY, policy_help,
            (void *)&kw_set, (void *)&kw_policy, (void *)&arg_policy);
INSTRUCTION(cmd_set_aimd_n, LAPS_CMD_SET_AIMD_N, "set aimd n <N>: AIMD increase stages before hyper increase",
            (void *)&kw_set, (void *)&kw_aimd, (void *)&kw_n, (void *)&arg_keyword_count);
INSTRUCTION(cmd_set_cc, LAPS_CMD_SET_CC, "set cc paper|fair|credit: rate control, Alg. 2 as published, the fair variant, or receiver-paced credits",
            (void *)&kw_set, (void *)&kw_cc, (void *)&arg_cc);
INSTRUCTION(cmd_path_state, LAPS_CMD_PATH_STATE, "path <pid> down|up: stop or resume using a path",
            (void *)&kw_path, (void *)&arg_path_pid, (void *)&arg_path_state);
INSTRUCTION(cmd_pst_add, LAPS_CMD_PST_ADD, "pst add <dst> <pid,pid,...>: a destination and its candidate paths",
            (void *)&kw_pst0, (void *)&kw_add, (void *)&arg_pst_destination, (void *)&arg_pst_pids);
INSTRUCTION(cmd_pst_add_fabric, LAPS_CMD_PST_ADD_FABRIC,
            "pst add <dst> <pid,pid,...> fabric <ipv4>: with the host's fabric address (IPv6 destinations)",
            (void *)&kw_pst0, (void *)&kw_add, (void *)&arg_pst_destination, (void *)&arg_pst_pids,
            (void *)&arg_pst_fabric_keyword, (void *)&arg_pst_fabric);
INSTRUCTION(cmd_pst_del, LAPS_CMD_PST_DEL, "pst del <dst>: delete a destination (its flows are torn down)",
            (void *)&kw_pst0, (void *)&kw_del, (void *)&arg_address);
INSTRUCTION(cmd_pit_add, LAPS_CMD_PIT_ADD,
            "pit add <pid> base_ns=<ns> [uncongested_ns=<ns>] [anchors=<id,id,...>] [hops=<n>] [valid=true|false]",
            (void *)&kw_pit0, (void *)&kw_add, (void *)&arg_pit_pid, (void *)&arg_pit_rest);
INSTRUCTION(cmd_pit_del, LAPS_CMD_PIT_DEL, "pit del <pid>: delete a path no destination uses", (void *)&kw_pit0,
            (void *)&kw_del, (void *)&arg_pid);
INSTRUCTION(cmd_load, LAPS_CMD_LOAD, "load <file>: apply the paths (pst, pit) of a laps config file",
            (void *)&kw_load, (void *)&arg_value);
INSTRUCTION(cmd_wait_packets, LAPS_CMD_WAIT_PACKETS,
            "wait <n> packets: return once n more host frames were taken (scripts; at most 60 s)", (void *)&kw_wait,
            (void *)&arg_wait_n, (void *)&arg_wait_packets);
INSTRUCTION(cmd_start, LAPS_CMD_START, "start: resume forwarding", (void *)&kw_start);
INSTRUCTION(cmd_stop, LAPS_CMD_STOP, "stop: pause forwarding (host frames wait at the port)", (void *)&kw_stop);
INSTRUCTION(cmd_quit, LAPS_CMD_QUIT, "quit: stop laps, drain, print final stats", (void *)&kw_quit);

static cmdline_parse_token_string_t arg_capture_file = TOKEN_STRING_INITIALIZER(struct laps_cmd_capture, file, NULL);
static cmdline_parse_token_string_t arg_capture_rest =
    TOKEN_STRING_INITIALIZER(struct laps_cmd_capture, rest, TOKEN_STRING_MULTI);
INSTRUCTION(cmd_capture_start, LAPS_CMD_CAPTURE_START,
            "capture start <file> [side host|fabric|both] [pid <pid>] [count <n>] [seconds <s>] [snaplen <n>]: "
            "write packets to a pcapng file",
            (void *)&kw_capture0, (void *)&kw_start1, (void *)&arg_capture_file);
INSTRUCTION(cmd_capture_start_options, LAPS_CMD_CAPTURE_START_OPTIONS,
            "capture start <file> <options>: as above, with options",
            (void *)&kw_capture0, (void *)&kw_start1, (void *)&arg_capture_file, (void *)&arg_capture_rest);
INSTRUCTION(cmd_capture_stop, LAPS_CMD_CAPTURE_STOP, "capture stop: end the live capture, close its file",
            (void *)&kw_capture0, (void *)&kw_stop1);
INSTRUCTION(cmd_show_capture, LAPS_CMD_SHOW_CAPTURE, "show capture: the live capture, its filter and counts",
            (void *)&kw_show, (void *)&kw_capture1);

/* The catch-all: a token that takes a whole line when no other instruction
 * does, so that the interactive prompt answers it as helpfully as a script
 * (rte_cmdline itself would print only "Bad arguments"). */
static int parse_unmatched(cmdline_parse_token_hdr_t *tk, const char *buf, void *res, unsigned ressize)
{
    size_t len = strcspn(buf, "\n\r");
    size_t first = strspn(buf, " \t");
    (void)tk;
    if (first >= len || buf[first] == '#' || !laps_console_unmatched(buf)) {
        return -1;
    }
    if (res != NULL) {
        struct laps_cmd_unmatched *r = res;
        size_t copy = len < sizeof r->line - 1 ? len : sizeof r->line - 1;
        if (ressize < sizeof *r) {
            return -1;
        }
        memcpy(r->line, buf, copy);
        r->line[copy] = '\0';
    }
    return (int)len;
}

static int help_unmatched(cmdline_parse_token_hdr_t *tk, char *dstbuf, unsigned size)
{
    (void)tk;
    snprintf(dstbuf, size, "any other line");
    return 0;
}

static struct cmdline_token_ops unmatched_ops = {
    .parse = parse_unmatched,
    .complete_get_nb = NULL,
    .complete_get_elt = NULL,
    .get_help = help_unmatched,
};
static cmdline_parse_token_hdr_t arg_unmatched = {.ops = &unmatched_ops, .offset = 0};
INSTRUCTION(cmd_unmatched, LAPS_CMD_UNMATCHED, "", (void *)&arg_unmatched);

#define LAPS_COMMANDS \
    (cmdline_parse_inst_t *)&cmd_help, \
    (cmdline_parse_inst_t *)&cmd_help_section, \
    (cmdline_parse_inst_t *)&cmd_show_port_stats_all, \
    (cmdline_parse_inst_t *)&cmd_show_port_stats_one, \
    (cmdline_parse_inst_t *)&cmd_clear_port_stats_all, \
    (cmdline_parse_inst_t *)&cmd_show_pst, \
    (cmdline_parse_inst_t *)&cmd_show_pst_dst, \
    (cmdline_parse_inst_t *)&cmd_show_pit, \
    (cmdline_parse_inst_t *)&cmd_show_pit_pid, \
    (cmdline_parse_inst_t *)&cmd_show_pit_dst, \
    (cmdline_parse_inst_t *)&cmd_show_flows, \
    (cmdline_parse_inst_t *)&cmd_show_flows_n, \
    (cmdline_parse_inst_t *)&cmd_show_paths_stats, \
    (cmdline_parse_inst_t *)&cmd_show_engine_stats, \
    (cmdline_parse_inst_t *)&cmd_show_lcores, \
    (cmdline_parse_inst_t *)&cmd_show_config, \
    (cmdline_parse_inst_t *)&cmd_set_beta_normalized, \
    (cmdline_parse_inst_t *)&cmd_set_beta, \
    (cmdline_parse_inst_t *)&cmd_set_policy, \
    (cmdline_parse_inst_t *)&cmd_set_aimd_n, \
    (cmdline_parse_inst_t *)&cmd_set_cc, \
    (cmdline_parse_inst_t *)&cmd_path_state, \
    (cmdline_parse_inst_t *)&cmd_pst_add_fabric, \
    (cmdline_parse_inst_t *)&cmd_pst_add, \
    (cmdline_parse_inst_t *)&cmd_pst_del, \
    (cmdline_parse_inst_t *)&cmd_pit_add, \
    (cmdline_parse_inst_t *)&cmd_pit_del, \
    (cmdline_parse_inst_t *)&cmd_load, \
    (cmdline_parse_inst_t *)&cmd_wait_packets, \
    (cmdline_parse_inst_t *)&cmd_start, \
    (cmdline_parse_inst_t *)&cmd_stop, \
    (cmdline_parse_inst_t *)&cmd_quit, \
    (cmdline_parse_inst_t *)&cmd_capture_start, \
    (cmdline_parse_inst_t *)&cmd_capture_start_options, \
    (cmdline_parse_inst_t *)&cmd_capture_stop, \
    (cmdline_parse_inst_t *)&cmd_show_capture, \

cmdline_parse_ctx_t laps_console_commands[] = {LAPS_COMMANDS NULL};
cmdline_parse_ctx_t laps_console_context[] = {LAPS_COMMANDS(cmdline_parse_inst_t *)&cmd_unmatched, NULL};


void laps_console_set_policy_choices(const char *choices)
{
    size_t i;
    strncpy(policy_choices, choices, sizeof policy_choices - 1);
    policy_choices[sizeof policy_choices - 1] = '\0';
    /* "set policy laps|spray|...: path selection policy" */
    snprintf(policy_help, sizeof policy_help, "set policy %s: path selection policy (help set)", policy_choices);
    for (i = 0; policy_help[i] != '\0'; ++i) {
        if (policy_help[i] == '#') {
            policy_help[i] = '|';
        }
    }
}
