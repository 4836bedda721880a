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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

static void test_pod_uid_from_cgroup(void **state)
{
	char uid[37];

	(void)state;
	/* systemd driver, cgroup v2: the UID's dashes as underscores */
	assert_int_equal(ct_pod_uid_of_cgroup("0::/kubepods.slice/kubepods-burstable.slice/"
					      "kubepods-burstable-pod0c1e4a52_7d0b_4c8e_9a51_"
					      "3b2f6d8e1f01.slice/cri-containerd-ab.scope\n",
					      uid),
			 0);
	assert_string_equal(uid, "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01");
	/* a Guaranteed pod sits right under kubepods.slice */
	assert_int_equal(ct_pod_uid_of_cgroup("0::/kubepods.slice/kubepods-pod0c1e4a52_7d0b_4c8e_"
					      "9a51_3b2f6d8e1f02.slice/x\n",
					      uid),
			 0);
	assert_string_equal(uid, "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f02");
	/* cgroupfs driver, cgroup v1: any hierarchy's line */
	assert_int_equal(
		ct_pod_uid_of_cgroup("12:pids:/\n4:memory:/kubepods/besteffort/pod5f7a9c3d-"
				     "2b1e-4f60-8d47-a1c9e0b2d302/c0ffee\n",
				     uid),
		0);
	assert_string_equal(uid, "5f7a9c3d-2b1e-4f60-8d47-a1c9e0b2d302");
	/* not a pod: a user's own "pod..." cgroup, a UID cut short, the wrong separators */
	assert_int_equal(ct_pod_uid_of_cgroup("0::/user.slice/pod5f7a9c3d-2b1e-4f60-8d47-"
					      "a1c9e0b2d302\n",
					      uid),
			 -ENOENT);
	assert_int_equal(
		ct_pod_uid_of_cgroup("0::/kubepods/pod5f7a9c3d-2b1e-4f60-8d47-a1c9e0b2d3\n", uid),
		-ENOENT);
	assert_int_equal(ct_pod_uid_of_cgroup("0::/kubepods.slice/kubepods-pod0c1e4a52-7d0b-4c8e-"
					      "9a51-3b2f6d8e1f02.slice\n",
					      uid),
			 -ENOENT);
	assert_int_equal(ct_pod_uid_of_cgroup("0::/\n", uid), -ENOENT);
}

static void assert_pod_job(const char *env, size_t len, const char *pod_name, const char *want)
{
	struct ct_pod pod = {.ns = "ml", .uid = "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01"};
	char name[CT_JOB_NAME_LEN];

	snprintf(pod.name, sizeof(pod.name), "%s", pod_name);
	assert_int_equal(ct_job_name_of_process(env, len, &pod, name, sizeof(name)), 0);
	assert_string_equal(name, want);
}

static void test_pod_names_the_job(void **state)
{
	(void)state;
	/* a PyTorchJob's replicas: MASTER_ADDR is <job>-master-0, the pod <job>-worker-N */
	assert_pod_job(ENV("MASTER_ADDR=bert-master-0\0MASTER_PORT=23456\0"), "bert-worker-3",
		       "pytorchjob:ml/bert");
	assert_pod_job(ENV("MASTER_ADDR=bert-master-0\0MASTER_PORT=23456\0"), "bert-master-0",
		       "pytorchjob:ml/bert");
	/* a master address of another job's: the pod itself */
	assert_pod_job(ENV("MASTER_ADDR=bert-master-0\0MASTER_PORT=23456\0"), "gpt-worker-0",
		       "pod:ml/gpt-worker-0");
	/* JobSet's and Volcano's names, as the pod's downward API passes them */
	assert_pod_job(ENV("JOBSET_NAME=llama\0MASTER_ADDR=llama-w-0-0.llama\0MASTER_PORT=1\0"),
		       "llama-w-0-0-x7k2p", "jobset:ml/llama");
	assert_pod_job(ENV("VK_TASK_INDEX=2\0VC_JOB_NAME=moe\0"), "moe-worker-2", "volcano:ml/moe");
	/* the pod before torchrun's names, Slurm's before the pod */
	assert_pod_job(ENV("TORCHELASTIC_RUN_ID=r7\0MASTER_ADDR=a\0MASTER_PORT=1\0"), "solo",
		       "pod:ml/solo");
	assert_pod_job(ENV("SLURM_JOB_ID=4242\0JOBSET_NAME=llama\0"), "solo", "slurm:4242");
}

/* The pod log root as the kubelet keeps it: NAMESPACE_NAME_UID, one per pod. */
static void test_pod_from_log_root(void **state)
{
	static const char *const dirs[] = {
		"ml_bert-worker-3_0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01",
		/* another pod's UID, one that only ends like it, a name without a namespace */
		"ml_gpt-0_0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f99",
		"ml_x_10c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f02",
		"_noname_5f7a9c3d-2b1e-4f60-8d47-a1c9e0b2d302",
	};
	char root[] = "/tmp/commtap-pods-XXXXXX", path[256];
	struct ct_pod pod;

	(void)state;
	assert_non_null(mkdtemp(root));
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		assert_int_equal(mkdir(path, 0700), 0);
	}
	assert_int_equal(ct_pod_find(root, "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01", &pod), 0);
	assert_string_equal(pod.ns, "ml");
	assert_string_equal(pod.name, "bert-worker-3");
	assert_int_equal(ct_pod_find(root, "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f02", &pod), -ENOENT);
	assert_int_equal(ct_pod_find(root, "5f7a9c3d-2b1e-4f60-8d47-a1c9e0b2d302", &pod), -ENOENT);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		rmdir(path);
	}
	rmdir(root);
	/* no root at all: the error, not "no pod" */
	assert_int_equal(ct_pod_find(root, "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01", &pod), -ENOENT);
	assert_int_equal(
		ct_pod_find("/proc/self/status", "0c1e4a52-7d0b-4c8e-9a51-3b2f6d8e1f01", &pod),
		-ENOTDIR);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_which_names_the_job),
		cmocka_unit_test(test_untrusted_and_too_long),
		cmocka_unit_test(test_pod_uid_from_cgroup),
		cmocka_unit_test(test_pod_names_the_job),
		cmocka_unit_test(test_pod_from_log_root),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
