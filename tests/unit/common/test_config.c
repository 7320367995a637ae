/*
 * test_config.c - unit tests for common/config.c: defaults, SET/RESET/get of
 * each setting kind, size units, and the errors for bad values and unknown
 * names (status and a message naming the setting).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/mem.h"
#include "common/thread.h"

static CmConfig cfg;
static CmErr err;

static void setup(void)
{
    cm_config_init(&cfg);
    cm_err_init(&err);
}

TestSuite(cm_config, .init = setup);

static const char *get(const char *name)
{
    static char buf[300];
    cr_assert(cm_config_get(&cfg, name, buf, (int)sizeof buf), "setting %s unknown", name);
    return buf;
}

static int64_t size_of(const char *text)
{
    int64_t v = -1;
    cr_assert(cm_parse_size(text, &v), "'%s' rejected", text);
    return v;
}

Test(cm_config, defaults)
{
    cr_expect_eq(cfg.threads, cm_cpu_count());
    cr_expect_geq(cfg.threads, 1);
    cr_expect_eq(cfg.shuffle_partitions, 8);
    cr_expect_eq(cfg.memory_limit, cm_mem_default_limit());
    const char *tmp = getenv("TMPDIR");
    cr_expect_str_eq(cfg.temp_directory, tmp ? tmp : "/tmp");
}

Test(cm_config, set_and_get_integer)
{
    cr_assert_eq(cm_config_set(&cfg, "threads", "3", &err), CM_OK);
    cr_expect_eq(cfg.threads, 3);
    cr_expect_str_eq(get("threads"), "3");
    cr_assert_eq(cm_config_set(&cfg, "shuffle_partitions", "64", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_partitions, 64);
    cr_expect_str_eq(get("shuffle_partitions"), "64");
}

Test(cm_config, names_are_case_insensitive)
{
    cr_assert_eq(cm_config_set(&cfg, "THREADS", "2", &err), CM_OK);
    cr_expect_eq(cfg.threads, 2);
    cr_expect_str_eq(get("Threads"), "2");
}

Test(cm_config, set_and_get_size_with_units)
{
    cr_assert_eq(cm_config_set(&cfg, "memory_limit", "1GB", &err), CM_OK);
    cr_expect_eq(cfg.memory_limit, (int64_t)1 << 30);
    cr_expect_str_eq(get("memory_limit"), "1073741824");
    cr_assert_eq(cm_config_set(&cfg, "memory_limit", "256MB", &err), CM_OK);
    cr_expect_eq(cfg.memory_limit, (int64_t)256 << 20);
    cr_assert_eq(cm_config_set(&cfg, "memory_limit", "2097152", &err), CM_OK);
    cr_expect_eq(cfg.memory_limit, 2097152);
}

Test(cm_config, set_and_get_text)
{
    cr_assert_eq(cm_config_set(&cfg, "temp_directory", "/var/tmp/sluice", &err), CM_OK);
    cr_expect_str_eq(cfg.temp_directory, "/var/tmp/sluice");
    cr_expect_str_eq(get("temp_directory"), "/var/tmp/sluice");
}

Test(cm_config, text_too_long_is_rejected_and_unchanged)
{
    char long_path[400];
    memset(long_path, 'd', sizeof long_path - 1);
    long_path[sizeof long_path - 1] = '\0';
    char before[256];
    snprintf(before, sizeof before, "%s", cfg.temp_directory);
    cr_expect_eq(cm_config_set(&cfg, "temp_directory", long_path, &err), CM_RUNTIME);
    cr_expect(strstr(err.msg, "temp_directory") != NULL, "message: %s", err.msg);
    cr_expect_str_eq(cfg.temp_directory, before);
}

Test(cm_config, reset_restores_the_default)
{
    cr_assert_eq(cm_config_set(&cfg, "threads", "5", &err), CM_OK);
    cr_assert_eq(cm_config_set(&cfg, "memory_limit", "2GB", &err), CM_OK);
    cr_assert_eq(cm_config_set(&cfg, "temp_directory", "/elsewhere", &err), CM_OK);
    cr_assert_eq(cm_config_reset(&cfg, "threads", &err), CM_OK);
    cr_expect_eq(cfg.threads, cm_cpu_count());
    /* Only the named setting is reset. */
    cr_expect_eq(cfg.memory_limit, (int64_t)2 << 30);
    cr_assert_eq(cm_config_reset(&cfg, "memory_limit", &err), CM_OK);
    cr_expect_eq(cfg.memory_limit, cm_mem_default_limit());
    cr_assert_eq(cm_config_reset(&cfg, "TEMP_DIRECTORY", &err), CM_OK);
    const char *tmp = getenv("TMPDIR");
    cr_expect_str_eq(cfg.temp_directory, tmp ? tmp : "/tmp");
}

Test(cm_config, unknown_setting)
{
    cr_expect_eq(cm_config_set(&cfg, "no_such_setting", "1", &err), CM_BIND);
    cr_expect(strstr(err.msg, "no_such_setting") != NULL, "message: %s", err.msg);
    CmErr e2;
    cm_err_init(&e2);
    cr_expect_eq(cm_config_reset(&cfg, "nope", &e2), CM_BIND);
    cr_expect(strstr(e2.msg, "nope") != NULL, "message: %s", e2.msg);
    char buf[32];
    cr_expect_not(cm_config_get(&cfg, "nope", buf, (int)sizeof buf));
}

/* Each bad value: CM_RUNTIME, the message names the setting, value unchanged. */
static void expect_rejected(const char *name, const char *value)
{
    char before[300];
    snprintf(before, sizeof before, "%s", get(name));
    CmErr e;
    cm_err_init(&e);
    cr_expect_eq(cm_config_set(&cfg, name, value, &e), CM_RUNTIME, "%s = '%s' accepted", name,
                 value);
    cr_expect(strstr(e.msg, name) != NULL, "message for %s = '%s': %s", name, value, e.msg);
    cr_expect_str_eq(get(name), before, "%s changed by a bad value", name);
}

Test(cm_config, bad_values_are_rejected_with_the_setting_named)
{
    expect_rejected("threads", "abc");
    expect_rejected("threads", "");
    expect_rejected("threads", "4x");
    expect_rejected("threads", "0");
    expect_rejected("threads", "-2");
    expect_rejected("threads", "257");
    expect_rejected("threads", "99999999999999999999999");
    expect_rejected("shuffle_partitions", "0");
    expect_rejected("shuffle_partitions", "1.5");
    expect_rejected("memory_limit", "lots");
    expect_rejected("memory_limit", "12XB");
    expect_rejected("memory_limit", "-1GB");
    expect_rejected("memory_limit", "64KB"); /* below the 1 MiB minimum */
    expect_rejected("memory_limit", "");
}

Test(cm_config, range_message_states_the_bounds)
{
    cr_assert_eq(cm_config_set(&cfg, "threads", "1000", &err), CM_RUNTIME);
    cr_expect(strstr(err.msg, "between 1 and 256") != NULL, "message: %s", err.msg);
}

Test(cm_config, boundary_values_are_accepted)
{
    cr_expect_eq(cm_config_set(&cfg, "threads", "1", &err), CM_OK);
    cr_expect_eq(cm_config_set(&cfg, "threads", "256", &err), CM_OK);
    cr_expect_eq(cfg.threads, 256);
    cr_expect_eq(cm_config_set(&cfg, "memory_limit", "1MB", &err), CM_OK);
    cr_expect_eq(cfg.memory_limit, 1 << 20);
}

Test(cm_config, parse_size_units)
{
    cr_expect_eq(size_of("0"), 0);
    cr_expect_eq(size_of("123"), 123);
    cr_expect_eq(size_of("64KB"), 64 * 1024);
    cr_expect_eq(size_of("64kb"), 64 * 1024);
    cr_expect_eq(size_of("64K"), 64 * 1024);
    cr_expect_eq(size_of("64KiB"), 64 * 1024);
    cr_expect_eq(size_of("256MB"), (int64_t)256 << 20);
    cr_expect_eq(size_of("1GB"), (int64_t)1 << 30);
    cr_expect_eq(size_of("2TB"), (int64_t)2 << 40);
    cr_expect_eq(size_of("10B"), 10);
    cr_expect_eq(size_of(" 1 GB"), (int64_t)1 << 30);
    cr_expect_eq(size_of(" 1 GB "), (int64_t)1 << 30);
    cr_expect_eq(size_of("1.5GB"), (int64_t)3 << 29);
}

Test(cm_config, parse_size_rejects)
{
    static const char *bad[] = {"", "GB", "-1", "12 XB", "1GBB", "abc", "1e30GB", "KB64"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int64_t v = 77;
        cr_expect_not(cm_parse_size(bad[i], &v), "'%s' accepted", bad[i]);
    }
}

Test(cm_config, get_truncates_to_the_buffer)
{
    char buf[4];
    cr_assert_eq(cm_config_set(&cfg, "memory_limit", "1GB", &err), CM_OK);
    cr_expect(cm_config_get(&cfg, "memory_limit", buf, (int)sizeof buf));
    cr_expect_str_eq(buf, "107");
}

Test(cm_config, booleans)
{
    static const char *on[] = {"on", "ON", "true", "t", "1", "yes"};
    static const char *off[] = {"off", "Off", "false", "F", "0", "no"};
    for (int i = 0; i < 6; i++) {
        cr_assert_eq(cm_config_set(&cfg, "adaptive", on[i], &err), CM_OK, "'%s'", on[i]);
        cr_expect(cfg.adaptive, "'%s'", on[i]);
        cr_expect_str_eq(get("adaptive"), "on");
        cr_assert_eq(cm_config_set(&cfg, "adaptive", off[i], &err), CM_OK, "'%s'", off[i]);
        cr_expect_not(cfg.adaptive, "'%s'", off[i]);
        cr_expect_str_eq(get("adaptive"), "off");
    }
    expect_rejected("adaptive", "maybe");
    expect_rejected("adaptive", "");
    expect_rejected("adaptive_skew_join", "2");
}

Test(cm_config, compression_codec)
{
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression", "NONE", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_compression, CM_COMPRESSION_NONE);
    cr_expect_str_eq(get("shuffle_compression"), "none");
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression", "zstd", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_compression, CM_COMPRESSION_ZSTD);
    cr_expect_str_eq(get("shuffle_compression"), "zstd");
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression", "Lz4", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_compression, CM_COMPRESSION_LZ4);
    cr_expect_str_eq(get("shuffle_compression"), "lz4");
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression", "auto", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_compression, CM_COMPRESSION_AUTO);
    cr_expect_str_eq(get("shuffle_compression"), "auto");
    expect_rejected("shuffle_compression", "gzip");
    expect_rejected("shuffle_compression", "1");
    expect_rejected("shuffle_compression", "");
}

Test(cm_config, ratios)
{
    cr_assert_eq(cm_config_set(&cfg, "shuffle_pause_ratio", "0.75", &err), CM_OK);
    cr_expect_eq(cfg.shuffle_pause_ratio, 0.75);
    cr_expect_str_eq(get("shuffle_pause_ratio"), "0.75");
    cr_assert_eq(cm_config_set(&cfg, "shuffle_resume_ratio", "0", &err), CM_OK);
    cr_assert_eq(cm_config_set(&cfg, "shuffle_resume_ratio", "1", &err), CM_OK);
    expect_rejected("shuffle_pause_ratio", "1.5");
    expect_rejected("shuffle_pause_ratio", "-0.1");
    expect_rejected("shuffle_pause_ratio", "abc");
    expect_rejected("shuffle_pause_ratio", "0.5x");
    expect_rejected("shuffle_pause_ratio", "nan");
    expect_rejected("shuffle_pause_ratio", "");
    expect_rejected("skew_factor", "0.5");
    cr_assert_eq(cm_config_set(&cfg, "skew_factor", "5", &err), CM_OK);
    cr_expect_eq(cfg.skew_factor, 5.0);
}

/* Every setting: a valid value changes what get() shows; RESET brings back
 * exactly the text a fresh configuration shows. */
Test(cm_config, reset_restores_every_kind)
{
    static const char *cases[][2] = {
        {"threads", "7"},
        {"memory_limit", "3GB"},
        {"temp_directory", "/somewhere/else"},
        {"shuffle_partitions", "123"},
        {"shuffle_memory_limit", "5MB"},
        {"shuffle_split_threshold", "7MB"},
        {"adaptive_advisory_partition_size", "3MB"},
        {"adaptive_min_partition_size", "12345"},
        {"broadcast_threshold", "77KB"},
        {"skew_threshold", "9MB"},
        {"skew_factor", "3.5"},
        {"shuffle_pause_ratio", "0.123"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *name = cases[i][0];
        char fresh[300];
        snprintf(fresh, sizeof fresh, "%s", get(name));
        cr_assert_eq(cm_config_set(&cfg, name, cases[i][1], &err), CM_OK, "%s: %s", name, err.msg);
        cr_expect_str_neq(get(name), fresh, "%s = '%s' changed nothing", name, cases[i][1]);
        cr_assert_eq(cm_config_reset(&cfg, name, &err), CM_OK);
        cr_expect_str_eq(get(name), fresh, "RESET %s", name);
    }
    /* Booleans and the codec: flip, then reset. */
    static const char *flips[] = {"adaptive", "adaptive_coalesce", "adaptive_broadcast",
                                  "adaptive_skew_join"};
    for (int i = 0; i < 4; i++) {
        char fresh[16];
        snprintf(fresh, sizeof fresh, "%s", get(flips[i]));
        const char *other = strcmp(fresh, "on") == 0 ? "off" : "on";
        cr_assert_eq(cm_config_set(&cfg, flips[i], other, &err), CM_OK);
        cr_expect_str_eq(get(flips[i]), other);
        cr_assert_eq(cm_config_reset(&cfg, flips[i], &err), CM_OK);
        cr_expect_str_eq(get(flips[i]), fresh, "RESET %s", flips[i]);
    }
    char codec[16];
    snprintf(codec, sizeof codec, "%s", get("shuffle_compression"));
    cr_assert_eq(cm_config_set(&cfg, "shuffle_compression",
                               strcmp(codec, "zstd") == 0 ? "none" : "zstd", &err),
                 CM_OK);
    cr_assert_eq(cm_config_reset(&cfg, "shuffle_compression", &err), CM_OK);
    cr_expect_str_eq(get("shuffle_compression"), codec);
}

/* The broadcast cap by the probe side's size: the threshold (at most a
 * sixteenth of the limit) beside a probe of the build's order; the threshold
 * up to a quarter of the limit beside one 4 times larger; 32 times the
 * threshold, at most a sixteenth of the limit, beside one 16 times larger
 * (0 stays 0: broadcasts off). */
Test(cm_config, broadcast_cap_grows_with_the_probe_side)
{
    const double mb = 1024.0 * 1024.0;
    cfg.memory_limit = (int64_t)(16384 * mb); /* 16 GB */
    cfg.broadcast_threshold = (int64_t)(32 * mb);
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 36 * mb, 40 * mb), (int64_t)(32 * mb));
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 36 * mb, 200 * mb), (int64_t)(32 * mb));
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 36 * mb, 2000 * mb), (int64_t)(1024 * mb));
    cr_assert_eq(cm_config_broadcast_bytes_max(&cfg), (int64_t)(1024 * mb));
    /* a tight limit: a sixteenth is less than the threshold's cap */
    cfg.memory_limit = (int64_t)(256 * mb);
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 1 * mb, 2000 * mb), (int64_t)(32 * mb));
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 20 * mb, 40 * mb), (int64_t)(16 * mb));
    /* a low threshold stays low: 32 times 1 KB */
    cfg.memory_limit = (int64_t)(16384 * mb);
    cfg.broadcast_threshold = 1024;
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 0.1 * mb, 2000 * mb), 32 * 1024);
    /* broadcasts off */
    cfg.memory_limit = (int64_t)(16384 * mb);
    cfg.broadcast_threshold = 0;
    cr_assert_eq(cm_config_broadcast_bytes_for(&cfg, 36 * mb, 2000 * mb), 0);
    cr_assert_eq(cm_config_broadcast_bytes_max(&cfg), 0);
}
