/* The console's command grammar, shared by commands.c (the rte_cmdline
 * instruction tables, which end in a flexible array and so are C) and
 * dispatch.cpp (the C++ handlers). One parsed-result struct per token shape;
 * each instruction carries its command id in its `data` pointer. */
#ifndef LAPS_CONSOLE_GRAMMAR_H
#define LAPS_CONSOLE_GRAMMAR_H

#include <stdint.h>

#include <cmdline.h>
#include <cmdline_parse.h>
#include <cmdline_parse_ipaddr.h>
#include <cmdline_parse_num.h>
#include <cmdline_parse_string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum laps_console_command {
    LAPS_CMD_HELP,
    LAPS_CMD_HELP_SECTION,
    LAPS_CMD_SHOW_PORT_STATS_ALL,
    LAPS_CMD_SHOW_PORT_STATS_ONE,
    LAPS_CMD_CLEAR_PORT_STATS_ALL,
    LAPS_CMD_SHOW_PST,
    LAPS_CMD_SHOW_PST_DST,
    LAPS_CMD_SHOW_PIT,
    LAPS_CMD_SHOW_PIT_PID,
    LAPS_CMD_SHOW_PIT_DST,
    LAPS_CMD_SHOW_FLOWS,
    LAPS_CMD_SHOW_FLOWS_N,
    LAPS_CMD_SHOW_PATHS_STATS,
    LAPS_CMD_SHOW_ENGINE_STATS,
    LAPS_CMD_SHOW_LCORES,
    LAPS_CMD_SHOW_CONFIG,
    LAPS_CMD_SET_BETA,
    LAPS_CMD_SET_BETA_NORMALIZED,
    LAPS_CMD_SET_POLICY,
    LAPS_CMD_SET_AIMD_N,
    LAPS_CMD_SET_CC,
    LAPS_CMD_PATH_STATE,
    LAPS_CMD_PST_ADD,
    LAPS_CMD_PST_ADD_FABRIC,
    LAPS_CMD_PST_DEL,
    LAPS_CMD_PIT_ADD,
    LAPS_CMD_PIT_DEL,
    LAPS_CMD_LOAD,
    LAPS_CMD_WAIT_PACKETS,
    LAPS_CMD_START,
    LAPS_CMD_STOP,
    LAPS_CMD_QUIT,
    LAPS_CMD_CAPTURE_START,
    LAPS_CMD_CAPTURE_START_OPTIONS,
    LAPS_CMD_CAPTURE_STOP,
    LAPS_CMD_SHOW_CAPTURE,
    LAPS_CMD_UNMATCHED, /* any line no other instruction takes: a helpful error */
};

/* Keywords only: "show paths stats", "start", ... */
struct laps_cmd_words {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t w2;
    cmdline_fixed_string_t w3;
};

/* "show port stats <port>" */
struct laps_cmd_port {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t w2;
    uint16_t port;
};

/* "show pst <dst>", "show pit <dst>", "pst del <dst>" */
struct laps_cmd_address {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_ipaddr_t address;
};

/* "show pit <pid>", "pit del <pid>" */
struct laps_cmd_pid {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    uint16_t pid;
};

/* "show flows <n>" */
struct laps_cmd_count {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    uint32_t n;
};

/* "help <section>", "set beta <v>", "set policy <name>", "load <file>" */
struct laps_cmd_value {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t value;
};

/* "set beta normalized <alpha>" */
struct laps_cmd_keyword_value {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t w2;
    cmdline_fixed_string_t value;
};

/* "set aimd n <N>" */
struct laps_cmd_keyword_count {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t w2;
    uint32_t n;
};

/* "wait <n> packets" */
struct laps_cmd_wait {
    cmdline_fixed_string_t w0;
    uint64_t n;
    cmdline_fixed_string_t w2;
};

/* "path <pid> down|up" */
struct laps_cmd_path_state {
    cmdline_fixed_string_t w0;
    uint16_t pid;
    cmdline_fixed_string_t state;
};

/* "pst add <dst> <pid,pid,...>" [fabric <ipv4>] */
struct laps_cmd_pst_add {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_ipaddr_t destination;
    cmdline_fixed_string_t pids;
    cmdline_fixed_string_t fabric_keyword;
    cmdline_ipaddr_t fabric;
};

/* "pit add <pid> key=value ..." */
struct laps_cmd_pit_add {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    uint16_t pid;
    cmdline_multi_string_t rest;
};

/* "capture start <file> [key value ...]" */
struct laps_cmd_capture {
    cmdline_fixed_string_t w0;
    cmdline_fixed_string_t w1;
    cmdline_fixed_string_t file;
    cmdline_multi_string_t rest;
};

/* Any line that no other instruction takes (the last instruction). */
#define LAPS_CONSOLE_LINE_MAX 512 /* rte_cmdline's line buffer */
struct laps_cmd_unmatched {
    char line[LAPS_CONSOLE_LINE_MAX];
};

/* The instruction list, NULL-terminated, for cmdline_new(). */
extern cmdline_parse_ctx_t laps_console_context[];

/* Sets the choices of "set policy <name>" ('#'-separated, from the C++
 * registry) before the first command is parsed. */
void laps_console_set_policy_choices(const char *choices);

/* The instructions without the catch-all, to check whether another takes a line. */
extern cmdline_parse_ctx_t laps_console_commands[];

/* Implemented in C++ (console.cpp): 1 when no instruction of
 * laps_console_commands takes `line` (then the catch-all does). */
int laps_console_unmatched(const char *line);

/* Implemented in C++ (dispatch.cpp): every instruction's handler. */
void laps_console_dispatch(void *parsed, struct cmdline *cl, void *data);

#ifdef __cplusplus
}
#endif

#endif
