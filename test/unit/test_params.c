// SPDX-License-Identifier: MIT
/*
 * The typed option tables (common/params.c): numbers in and out of their
 * range, scales (a size in MiB stored in bytes, a time in ms stored in ns),
 * whole numbers, flags, strings, short aliases, "--name=value", arguments
 * left after the options, custom parsers, and the generated help, byte for
 * byte. Each expected value is worked out in the comment beside it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <commtap/params.h>

struct opts {
	int verbose;
	const char *output;
	double ratio;
	uint64_t gap_ns;
	uint32_t count;
	size_t memory;
	int color; /* the custom parser's: 1 red, 2 blue */
};

static int parse_color(const char *text, void *value, char *err, size_t errlen)
{
	int *c = value;

	if (!strcmp(text, "red"))
		*c = 1;
	else if (!strcmp(text, "blue"))
		*c = 2;
	else {
		snprintf(err, errlen, "--color: '%s' is not red or blue", text);
		return -EINVAL;
	}
	return 0;
}

static const struct ct_param params[] = {
	{.name = "verbose",
	 .short_name = 'v',
	 .type = CT_PARAM_FLAG,
	 .offset = offsetof(struct opts, verbose),
	 .help = "say more"},
	{.name = "output",
	 .short_name = 'o',
	 .type = CT_PARAM_STRING,
	 .arg = "FILE",
	 .offset = offsetof(struct opts, output),
	 .help = "where it goes"},
	{.name = "ratio",
	 .type = CT_PARAM_DOUBLE,
	 .arg = "X",
	 .offset = offsetof(struct opts, ratio),
	 .min = 0,
	 .max = 1,
	 .above_min = 1,
	 .help = "a share, above 0"},
	{.name = "gap",
	 .type = CT_PARAM_U64,
	 .arg = "MS",
	 .offset = offsetof(struct opts, gap_ns),
	 .min = 0,
	 .max = 1e6,
	 .scale = 1e6,
	 .show_default = 1,
	 .help = "a gap in ms"},
	{.name = "count",
	 .type = CT_PARAM_U32,
	 .arg = "N",
	 .offset = offsetof(struct opts, count),
	 .min = 1,
	 .max = 100,
	 .show_default = 1,
	 .help = "how many\nat most 100"},
	{.name = "memory",
	 .type = CT_PARAM_SIZE,
	 .arg = "MIB",
	 .offset = offsetof(struct opts, memory),
	 .min = 1,
	 .max = 1024,
	 .scale = 1048576,
	 .help = "a budget"},
	{.name = "color",
	 .type = CT_PARAM_CUSTOM,
	 .arg = "red|blue",
	 .offset = offsetof(struct opts, color),
	 .parse = parse_color,
	 .help = "a custom one"},
	CT_PARAM_TABLE_END,
};

/* Parse argv (NULL-terminated, argv[0] the program) into o; returns ct_params_parse's result. */
static int parse(struct opts *o, char **argv, int *first, char *err)
{
	const struct ct_param_set set = {params, o};
	int argc = 0;

	while (argv[argc])
		argc++;
	return ct_params_parse(&set, 1, argc, argv, first, err, 256);
}

static void test_number(void **state)
{
	char err[256];
	double v = -1;

	(void)state;
	assert_int_equal(ct_parse_number("x", "2.5", 0, 10, 0, &v, err, sizeof(err)), 0);
	assert_true(v == 2.5);
	assert_int_equal(ct_parse_number("x", "1e1", 0, 10, 0, &v, err, sizeof(err)), 0);
	assert_true(v == 10); /* max itself is in */
	assert_int_equal(ct_parse_number("x", "10.5", 0, 10, 0, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--x: '10.5' is not a number in [0, 10]");
	assert_int_equal(ct_parse_number("x", "abc", 0, 10, 0, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(ct_parse_number("x", "3 ", 0, 10, 0, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(ct_parse_number("x", "nan", 0, 10, 0, &v, err, sizeof(err)), -EINVAL);
	assert_int_equal(ct_parse_number("x", "", 0, 10, 0, &v, err, sizeof(err)), -EINVAL);
	/* above_min: 0 is refused, the interval printed open on the left */
	assert_int_equal(ct_parse_number("x", "0", 0, 1, 1, &v, err, sizeof(err)), -EINVAL);
	assert_string_equal(err, "--x: '0' is not a number in (0, 1]");
	assert_true(v == 10); /* untouched on error */
}

/*
 * Every type at once, options and arguments mixed: GNU getopt moves "a"
 * and "b" after the options, so they are argv[first], argv[first + 1].
 * --gap 1.5 (ms, scale 1e6) is 1,500,000 ns; --memory 1.5 (MiB, scale
 * 2^20) is 1.5 * 1048576 = 1,572,864 bytes.
 */
static void test_parse_all_types(void **state)
{
	char *argv[] = {
		"prog", "a",	   "-v", "--output=out.json", "b",   "--ratio", "0.25", "--gap",
		"1.5",	"--count", "7",	 "--memory",	      "1.5", "--color", "blue", NULL};
	struct opts o = {0};
	char err[256];
	int first = 0;

	(void)state;
	assert_int_equal(parse(&o, argv, &first, err), 0);
	assert_int_equal(o.verbose, 1);
	assert_string_equal(o.output, "out.json");
	assert_true(o.ratio == 0.25);
	assert_int_equal(o.gap_ns, 1500000);
	assert_int_equal(o.count, 7);
	assert_int_equal(o.memory, 1572864);
	assert_int_equal(o.color, 2);
	/* 14 words after prog: 12 of options, then the two arguments at 13 and 14 */
	assert_int_equal(first, 13);
	assert_string_equal(argv[first], "a");
	assert_string_equal(argv[first + 1], "b");
}

static void test_parse_errors(void **state)
{
	struct opts o = {0};
	char err[256];
	int first;

	(void)state;
	{
		/* a count is never rounded: 2.5 refused */
		char *argv[] = {"prog", "--count", "2.5", NULL};

		assert_int_equal(parse(&o, argv, &first, err), -EINVAL);
		assert_string_equal(err, "--count: '2.5' is not a whole number");
	}
	{
		char *argv[] = {"prog", "--count", "0", NULL};

		assert_int_equal(parse(&o, argv, &first, err), -EINVAL);
		assert_string_equal(err, "--count: '0' is not a number in [1, 100]");
	}
	{
		char *argv[] = {"prog", "--color", "green", NULL};

		assert_int_equal(parse(&o, argv, &first, err), -EINVAL);
		assert_string_equal(err, "--color: 'green' is not red or blue");
	}
	{
		char *argv[] = {"prog", "--colour", "red", NULL};

		assert_int_equal(parse(&o, argv, &first, err), -EINVAL);
		assert_string_equal(err, "unknown or incomplete option '--colour' (try --help)");
	}
	{
		/* an option that takes a value, given none */
		char *argv[] = {"prog", "--output", NULL};

		assert_int_equal(parse(&o, argv, &first, err), -EINVAL);
		assert_string_equal(err, "unknown or incomplete option '--output' (try --help)");
	}
	{
		char *argv[] = {"prog", "x", "-h", NULL};

		assert_int_equal(parse(&o, argv, &first, err), 1); /* help */
	}
}

/*
 * The help, byte for byte: "  " + the option and its argument, padded to
 * column 21 (at least one space), the help's lines (the next ones start
 * at column 21), and "(default V)" after the last, V the stored value over
 * the scale: gap 2,000,000 ns / 1e6 = 2 ms, count 5.
 */
static void test_help(void **state)
{
	struct opts o = {.gap_ns = 2000000, .count = 5};
	const struct ct_param_set set = {params, &o};
	static const char want[] = "  -v, --verbose      say more\n"
				   "  -o, --output FILE  where it goes\n"
				   "  --ratio X          a share, above 0\n"
				   "  --gap MS           a gap in ms (default 2)\n"
				   "  --count N          how many\n"
				   "                     at most 100 (default 5)\n"
				   "  --memory MIB       a budget\n"
				   "  --color red|blue   a custom one\n";
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_non_null(f);
	ct_params_help(f, &set, 1);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(text, want);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_parse_all_types),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_help),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
