// SPDX-License-Identifier: MIT
/*
 * A process's job from its environment (agent/job_names.c): which variable
 * wins, what is not trusted, what does not fit.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "job_names.h"

/* An environment as /proc/PID/environ holds it: its length counts the last NUL. */
#define ENV(text) text, sizeof(text) - 1

static void assert_job(const char *env, size_t len, const char *want)
{
	char name[CT_JOB_NAME_LEN];

	if (!want) {
		assert_int_equal(ct_job_name_from_environ(env, len, name, sizeof(name)), -ENOENT);
		return;
	}
	assert_int_equal(ct_job_name_from_environ(env, len, name, sizeof(name)), 0);
	assert_string_equal(name, want);
}

static void test_which_names_the_job(void **state)
{
	(void)state;
	assert_job(ENV("PATH=/bin\0MASTER_ADDR=10.0.0.1\0MASTER_PORT=29500\0"),
		   "torch:10.0.0.1:29500");
	/* torchrun's run id, unless it is its default "none" */
	assert_job(ENV("MASTER_ADDR=n1\0TORCHELASTIC_RUN_ID=none\0MASTER_PORT=1\0"), "torch:n1:1");
	assert_job(ENV("MASTER_ADDR=n1\0TORCHELASTIC_RUN_ID=r7\0MASTER_PORT=1\0"),
		   "torchelastic:r7");
	/* the scheduler's job first */
	assert_job(ENV("TORCHELASTIC_RUN_ID=r7\0SLURM_JOB_ID=4242\0"), "slurm:4242");
	/* a key is a whole name: SLURM_JOB_ID_X and XSLURM_JOB_ID are not it */
	assert_job(ENV("SLURM_JOB_ID_X=1\0XSLURM_JOB_ID=2\0MASTER_PORT=3\0"), NULL);
	/* an address without a port, empty values, nothing at all */
	assert_job(ENV("MASTER_ADDR=10.0.0.1\0"), NULL);
	assert_job(ENV("SLURM_JOB_ID=\0MASTER_ADDR=\0MASTER_PORT=1\0"), NULL);
	assert_job("", 0, NULL);
}

static void test_untrusted_and_too_long(void **state)
{
	char env[200], name[16];

	(void)state;
	/* the last entry cut short (no NUL): not read */
	assert_job("SLURM_JOB_ID=42", 15, NULL);
	/* a name that does not fit */
	memcpy(env, "SLURM_JOB_ID=12345678901234567890", 34);
	assert_int_equal(ct_job_name_from_environ(env, 34, name, sizeof(name)), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_names_the_job),
		cmocka_unit_test(test_untrusted_and_too_long),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
