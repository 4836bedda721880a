// SPDX-License-Identifier: MIT
/*
 * commtap's command table (cli/command_table.c) against what each command
 * does: `commtap CMD --help` lists exactly the options of the tables the
 * table gives for it (each "--name" in the help's option column), and a
 * wrong count of positional arguments is refused with a message that names
 * the command and what it expects ("commtap predict: missing PROFILE").
 * Each command runs in a child process (--help exits), its stdout and
 * stderr read back through a pipe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "commands.h"

#define OUT_MAX 65536

struct ran {
	int status; /* the exit status */
	char out[OUT_MAX];
};

/* Run cmd with argv (argv[0] is its name) in a child; stdout and stderr both into r->out. */
static void run(const struct cli_command *cmd, char **argv, struct ran *r)
{
	int fd[2], argc = 0, st;
	size_t n = 0;
	ssize_t got;
	pid_t pid;

	while (argv[argc])
		argc++;
	assert_int_equal(pipe(fd), 0);
	fflush(NULL);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		dup2(fd[1], 1);
		dup2(fd[1], 2);
		close(fd[0]);
		st = cmd->run(argc, argv);
		fflush(NULL); /* _exit does not, and a command that returns leaves it to exit */
		_exit(st);
	}
	close(fd[1]);
	while (n + 1 < OUT_MAX && (got = read(fd[0], r->out + n, OUT_MAX - 1 - n)) > 0)
		n += (size_t)got;
	r->out[n] = 0;
	close(fd[0]);
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	r->status = WEXITSTATUS(st);
}

/* Whether the help's option column (a line "  --name" or "  -x, --name") has --name. */
static int help_lists(const char *help, const char *name)
{
	size_t len = strlen(name);

	for (const char *line = help; line && *line;
	     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line + 2;

		if (strncmp(line, "  -", 3))
			continue;
		if (p[1] != '-') /* "-x, --name" */
			p += 4;
		if (!strncmp(p, "--", 2) && !strncmp(p + 2, name, len) &&
		    (p[2 + len] == ' ' || p[2 + len] == '\n' || !p[2 + len]))
			return 1;
	}
	return 0;
}

/* Whether some table of cmd has an option of this name. */
static int table_has(const struct cli_command *cmd, const char *name, size_t len)
{
	for (const struct ct_param *const *t = cmd->options; *t; t++)
		for (const struct ct_param *p = *t; p->name; p++)
			if (strlen(p->name) == len && !strncmp(p->name, name, len))
				return 1;
	return 0;
}

static void test_help_lists_the_table(void **state)
{
	static struct ran r;

	(void)state;
	assert_true(cli_n_commands >= 6);
	for (size_t i = 0; i < cli_n_commands; i++) {
		const struct cli_command *cmd = &cli_commands[i];
		char *argv[] = {(char *)cmd->name, "--help", NULL};
		unsigned listed = 0;

		run(cmd, argv, &r);
		assert_int_equal(r.status, CT_EXIT_OK);
		/* the usage line first, then every option of the tables */
		assert_non_null(strstr(r.out, "usage: "));
		for (const struct ct_param *const *t = cmd->options; *t; t++)
			for (const struct ct_param *p = *t; p->name; p++) {
				if (!help_lists(r.out, p->name))
					fail_msg("commtap %s --help does not list --%s", cmd->name,
						 p->name);
				listed++;
			}
		assert_true(listed > 0);
		/* and nothing the tables do not have */
		for (const char *line = r.out; line;
		     line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
			const char *p = line + 2, *end;

			if (strncmp(line, "  -", 3))
				continue;
			if (p[1] != '-')
				p += 4;
			if (strncmp(p, "--", 2))
				continue;
			p += 2;
			end = p + strcspn(p, " \n");
			if (!table_has(cmd, p, (size_t)(end - p)))
				fail_msg("commtap %s --help lists --%.*s, no table of it has it",
					 cmd->name, (int)(end - p), p);
		}
	}
}

static void test_positional_count(void **state)
{
	static struct ran r;

	(void)state;
	for (size_t i = 0; i < cli_n_commands; i++) {
		const struct cli_command *cmd = &cli_commands[i];
		const struct ct_app_args *a = cmd->args;
		char want[256];

		assert_non_null(a);
		if (a->min_pos > 0) {
			char *argv[] = {(char *)cmd->name, NULL};

			snprintf(want, sizeof(want), "commtap %s: missing %s (try --help)\n",
				 cmd->name, a->pos_meaning);
			run(cmd, argv, &r);
			assert_int_equal(r.status, CT_EXIT_ERROR);
			assert_string_equal(r.out, want);
		}
		if (a->max_pos == 0) {
			char *argv[] = {(char *)cmd->name, "surplus", NULL};

			snprintf(want, sizeof(want),
				 "commtap %s: unexpected argument 'surplus' (try --help)\n",
				 cmd->name);
			run(cmd, argv, &r);
			assert_int_equal(r.status, CT_EXIT_ERROR);
			assert_string_equal(r.out, want);
		}
		if (a->max_pos == 1) {
			char *argv[] = {(char *)cmd->name, "one", "two", NULL};

			snprintf(want, sizeof(want),
				 "commtap %s: more than one %s given (try --help)\n", cmd->name,
				 a->pos_meaning);
			run(cmd, argv, &r);
			assert_int_equal(r.status, CT_EXIT_ERROR);
			assert_string_equal(r.out, want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_lists_the_table),
		cmocka_unit_test(test_positional_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
